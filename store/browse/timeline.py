"""Confidence over time, read from events: one memory's timeline (a point per event, with the
confidence it left the memory at, its session and actor) and a project's confidence picture
(how confidence is spread over the memories still in play, and how many are gaining or losing
confidence over a recent window).

Every event kind is a point, even those that leave confidence alone (an edit, a status change):
the timeline is the memory's history drawn, not only its confidence changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.backends import browse_rows
from store.engine.clock import DAY
from store.engine.core import Store
from store.engine.errors import NotFound
from store.engine.records import Event, Memory, Session

# One letter per event kind, drawn on the chart where the event happened.
EVENT_MARKS: dict[str, str] = {
    "created": "C", "imported": "I", "reinforced": "R", "used": "U", "decayed": "D",
    "edited": "E", "status_changed": "A", "merged": "M", "superseded": "S", "deleted": "X",
    "restored": "O", "contradicted": "W", "anchored": "N", "checked": "K",
    "judged": "J", "proposed": "P", "resolved": "V", "shared": "H", "retaught": "T",
    "opened": "G",
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
    author: str | None = None  # the person who made the change (None before migration 9)

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
                                 event.detail, event.author))
    return tuple(out)


def memory_timeline(store: Store, memory_id: str) -> Timeline:
    memory = store.get(memory_id)
    events = store.events(memory_id)
    sessions: dict[str, Session] = {}
    for session_id in {e.session_id for e in events if e.session_id} | ({memory.session_id} - {None}):
        try:
            sessions[session_id] = store.sessions.get(session_id)
        except NotFound:  # an imported memory may name a session this store never saw
            continue
    return Timeline(memory, points(events, memory.confidence), sessions)


def project_confidence(store: Store, *, days: int = 30, project: str | None = None) -> ProjectConfidence:
    """Spread and direction of confidence over the project's active and inactive memories.

    A memory gains (or loses) when its confidence now is above (below) the one it had `days`
    ago: the confidence before its first event since then (or, created since, the one it was
    created at). Only the window's events are read (by the `event.at` index), so a project of
    100,000 memories with a quiet month costs two small queries (`store.backends.browse_rows`).
    """
    project_id = store.project_id(project)
    buckets = [0] * BUCKETS
    for bucket, count in browse_rows.confidence_buckets(store.backend, project_id, BUCKETS):
        buckets[bucket] = count
    rows = browse_rows.events_since(store.backend, project_id, store.now() - days * DAY)
    gaining = losing = 0
    seen: set[str] = set()
    for memory_id, before, after, now in rows:
        if memory_id in seen:
            continue  # only its first event in the window says where the memory started
        seen.add(memory_id)
        then = before if before is not None else after if after is not None else now
        gaining += now - then > STEADY
        losing += now - then < -STEADY
    return ProjectConfidence(project or store.project, tuple(buckets), gaining, losing,
                             sum(buckets) - gaining - losing, days,
                             float(store.config.confidence.inactive_below))
