"""Sessions as the session log shows them: each with the counts of what happened in it
(markers, memories created and reinforced, inbox candidates, errors) and its duration, counted in
one query over the activity log; and the tail of one session's log after the last entry already
shown. A session is live until it ends: when its input says so or its ingest stops (its
`ended_at`), or when nothing has happened in it for `sessions.idle_minutes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from store.engine.core import Store
from store.engine.errors import InvalidInput, NotFound
from store.engine.records import Activity, Session

# The activity kinds each count adds up.
COUNTED = {
    "markers": ("marker",),
    "rejected": ("marker_rejected",),
    "created": ("memory_created",),
    "reinforced": ("memory_reinforced",),
    "errors": ("tool_error",),
    "candidates": ("candidate",),
}


@dataclass(frozen=True)
class SessionSummary:
    session: Session
    activities: int
    markers: int
    rejected: int
    created: int
    reinforced: int
    errors: int
    candidates: int
    last_at: float | None  # the latest activity
    live: bool  # still being written: no end recorded, and not idle for too long
    first_prompt: str | None = None  # the summary of its first prompt activity

    @property
    def task(self) -> str | None:
        """What the session was about: the task it was given, else its first prompt."""
        return self.session.task or self.first_prompt

    @property
    def ended_at(self) -> float | None:
        """When it ended: recorded, or (idle) its latest activity; None while live."""
        if self.live:
            return None
        return self.session.ended_at or self.last_at or self.session.started_at

    @property
    def duration(self) -> float:
        end = self.session.ended_at or self.last_at or self.session.started_at
        return max(0.0, end - self.session.started_at)

    def to_json(self) -> dict:
        from store.engine.clock import iso

        return {**self.session.to_json(), "first_prompt": self.first_prompt, "live": self.live, "ended_at": iso(self.ended_at),
                "last_activity_at": iso(self.last_at), "activities": self.activities,
                **{name: getattr(self, name) for name in COUNTED}}


def summaries(store: Store, *, project: str | None = None, limit: int = 200) -> list[SessionSummary]:
    """The project's latest sessions, newest first, with their counts."""
    sessions = store.sessions.recent(project, limit=limit)
    if not sessions:
        return []
    ids = [s.id for s in sessions]
    counts = {row[0]: row[1:] for row in store.backend.session_table.counts(ids, list(COUNTED.values()))}
    # Each session's first prompt, for a session started without a task (by a hook, by ingest).
    prompts = store.backend.session_table.first_prompts(ids)
    empty = (0,) * (len(COUNTED) + 1) + (None,)
    idle = float(store.config.sessions.idle_minutes) * 60
    now = store.now()
    return [SessionSummary(s, *counts.get(s.id, empty), live=_live(s, counts.get(s.id, empty)[-1], now, idle),
                           first_prompt=prompts.get(s.id) or None)
            for s in sessions]


def _live(session: Session, last_at: float | None, now: float, idle: float) -> bool:
    return session.ended_at is None and now - (last_at or session.started_at) < idle


def find(store: Store, wanted: str, *, project: str | None = None) -> Session:
    """The session with this id, or the project's one session whose id starts with it."""
    try:
        return store.sessions.get(wanted)
    except NotFound:
        pass
    rows = store.backend.session_table.ids_starting(store.project_id(project), wanted, 6)
    if not rows:
        raise NotFound(f"no session with id {wanted!r} (nor starting with it) in project {project or store.project!r}")
    if len(rows) > 1:
        raise InvalidInput(f"{wanted!r} starts several sessions' ids ({', '.join(rows[:5])}"
                           f"{', …' if len(rows) > 5 else ''}): give more of it")
    return store.sessions.get(rows[0])


def tail(store: Store, session_id: str, after_seq: int = -1,
         kinds: Sequence[str] | None = None) -> list[Activity]:
    """The session's log entries after `after_seq` (all of them from -1), of `kinds` if given."""
    return store.sessions.activities(session_id, after_seq=after_seq, kinds=kinds or None)
