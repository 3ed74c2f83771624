"""Sessions as the session log shows them: each with the counts of what happened in it
(markers, memories created and reinforced, errors) and its duration, counted in one query
over the activity log; and the tail of one session's log after the last entry already shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from store.core import Store
from store.records import Activity, Session

# The activity kinds each count adds up.
COUNTED = {
    "markers": ("marker",),
    "rejected": ("marker_rejected",),
    "created": ("memory_created",),
    "reinforced": ("memory_reinforced",),
    "errors": ("tool_error",),
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
    last_at: float | None  # the latest activity

    @property
    def live(self) -> bool:
        """Still being written: no end recorded yet."""
        return self.session.ended_at is None

    @property
    def duration(self) -> float:
        end = self.session.ended_at or self.last_at or self.session.started_at
        return max(0.0, end - self.session.started_at)


def summaries(store: Store, *, project: str | None = None, limit: int = 200) -> list[SessionSummary]:
    """The project's latest sessions, newest first, with their counts."""
    sessions = store.sessions(project, limit=limit)
    if not sessions:
        return []
    columns = ", ".join(
        f"SUM(kind IN ({', '.join(repr(k) for k in kinds)}))" for kinds in COUNTED.values())
    marks = ", ".join("?" * len(sessions))
    rows = store.db.execute_sql(
        f"SELECT session_id, COUNT(*), {columns}, MAX(at) FROM activity "
        f"WHERE session_id IN ({marks}) GROUP BY session_id",
        [s.id for s in sessions],
    ).fetchall()
    counts = {row[0]: row[1:] for row in rows}
    empty = (0,) * (len(COUNTED) + 1) + (None,)
    return [SessionSummary(s, *counts.get(s.id, empty)) for s in sessions]


def tail(store: Store, session_id: str, after_seq: int = -1,
         kinds: Sequence[str] | None = None) -> list[Activity]:
    """The session's log entries after `after_seq` (all of them from -1), of `kinds` if given."""
    return store.activities(session_id, after_seq=after_seq, kinds=kinds or None)
