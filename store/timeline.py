"""Confidence over time, read from events: one memory's timeline (a point per event, with the
confidence it left the memory at, its session and actor) and a project's confidence picture
(how confidence is spread over the memories still in play, and how many are gaining or losing
confidence over a recent window).

Every event kind is a point, even those that leave confidence alone (an edit, a status change):
the timeline is the memory's history drawn, not only its confidence changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.clock import DAY
from store.core import Store
from store.errors import NotFound
from store.records import Event, Memory, Session

# One letter per event kind, drawn on the chart where the event happened.
EVENT_MARKS: dict[str, str] = {
    "created": "C", "imported": "I", "reinforced": "R", "used": "U", "decayed": "D",
    "edited": "E", "status_changed": "A", "merged": "M", "superseded": "S", "deleted": "X",
    "restored": "O",
}
BUCKETS = 10  # the distribution's bars: 0.0–0.1, 0.1–0.2, ... 0.9–1.0
STEADY = 0.005  # a change smaller than this is no change (confidences are stored rounded)


@dataclass(frozen=True)
class TimelinePoint:
    """One event on the chart: the confidence the memory had after it."""

    at: float
    kind: str
    confidence: float
    before: float | None
    session_id: str | None
    actor: str
    detail: dict

    @property
    def mark(self) -> str:
        return EVENT_MARKS.get(self.kind, "?")

    @property
    def change(self) -> float:
        return 0.0 if self.before is None else self.confidence - self.before


@dataclass(frozen=True)
class Timeline:
    memory: Memory
    points: tuple[TimelinePoint, ...]
    sessions: dict[str, Session]  # the sessions its events name, by id


@dataclass(frozen=True)
class ProjectConfidence:
    """The project view: the spread of confidence and its direction over the last `days`."""

    project: str
    buckets: tuple[int, ...]  # memories per tenth of confidence, lowest first
    gaining: int
    losing: int
    steady: int
    days: int
    inactive_below: float

    @property
    def total(self) -> int:
        return sum(self.buckets)


def points(events: list[Event], start: float) -> tuple[TimelinePoint, ...]:
    """A point per event. An event that records no confidence keeps the one before it, and the
    first event without one starts from `start` (the memory's confidence, for a history whose
    `created` event predates confidence tracking)."""
    current = next((e.confidence_after for e in events if e.confidence_after is not None), start)
    out = []
    for event in events:
        before = event.confidence_before if event.confidence_before is not None else current
        if event.confidence_after is not None:
            current = event.confidence_after
        out.append(TimelinePoint(event.at, event.kind, current, before, event.session_id, event.actor,
                                 event.detail))
    return tuple(out)


def memory_timeline(store: Store, memory_id: str) -> Timeline:
    memory = store.get(memory_id)
    events = store.events(memory_id)
    sessions: dict[str, Session] = {}
    for session_id in {e.session_id for e in events if e.session_id} | ({memory.session_id} - {None}):
        try:
            sessions[session_id] = store.session(session_id)
        except NotFound:  # an imported memory may name a session this store never saw
            continue
    return Timeline(memory, points(events, memory.confidence), sessions)


def project_confidence(store: Store, *, days: int = 30, project: str | None = None) -> ProjectConfidence:
    """Spread and direction of confidence over the project's active and inactive memories.

    A memory gains (or loses) when its confidence now is above (below) the one it had `days`
    ago, read from the last event before then; a memory created since compares with the
    confidence it was created at.
    """
    since = store.now() - days * DAY
    rows = store.db.execute_sql(
        "SELECT memory.confidence, "
        " (SELECT e.confidence_after FROM event e WHERE e.memory_id = memory.id AND e.at <= ? "
        "  AND e.confidence_after IS NOT NULL ORDER BY e.at DESC, e.id DESC LIMIT 1), "
        " (SELECT e.confidence_after FROM event e WHERE e.memory_id = memory.id "
        "  AND e.confidence_after IS NOT NULL ORDER BY e.at, e.id LIMIT 1) "
        "FROM memory WHERE memory.project_id = ? AND memory.status IN ('active', 'inactive')",
        (since, store.project_id(project)),
    ).fetchall()
    buckets = [0] * BUCKETS
    gaining = losing = 0
    for now, then, first in rows:
        buckets[min(BUCKETS - 1, max(0, int(now * BUCKETS)))] += 1
        delta = now - (then if then is not None else first if first is not None else now)
        gaining += delta > STEADY
        losing += delta < -STEADY
    return ProjectConfidence(project or store.project, tuple(buckets), gaining, losing,
                             len(rows) - gaining - losing, days,
                             float(store.config.get("confidence.inactive_below")))
