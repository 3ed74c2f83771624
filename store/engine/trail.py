"""Who did what to a project's memories: `memdeck blame` (who wrote and who last changed each)
and `memdeck log --memory ID` (one memory's history with who made each change).

Who: the event's `author` (the database user in a team store, where PostgreSQL writes it; the
local user, or config `team.author`, elsewhere) and the memory's `owner` (who added it; memories
from before memdeck kept owners have none, and the author of their first event stands in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.engine.clock import iso
from store.engine.limits import sane_time

# The events that change what a memory says or whether it is in use (not feedback: used,
# decayed, contradicted, which move its confidence only).
CHANGE_KINDS = ("created", "imported", "edited", "status_changed", "deleted", "restored", "superseded",
                "merged", "reinforced", "resolved")


@dataclass(frozen=True)
class Blame:
    memory_id: str
    title: str
    status: str
    wrote: str | None  # who added it
    written_at: float
    changed_by: str | None  # who made its last change (see CHANGE_KINDS)
    changed_at: float | None
    change: str | None  # that change's event kind

    def to_json(self) -> dict[str, Any]:
        return {"id": self.memory_id, "title": self.title, "status": self.status, "wrote": self.wrote,
                "written_at": iso(self.written_at), "changed_by": self.changed_by,
                "changed_at": iso(self.changed_at), "change": self.change}


def blame(store, project: str | None = None, *, include_deleted: bool = False) -> list[Blame]:
    """Each memory of the project (outside the trash unless `include_deleted`), oldest first."""
    rows = store.backend.memory_table.blame(store.project_id(project), CHANGE_KINDS, include_deleted)
    return [Blame(r[0], r[1], r[2], r[3] or r[5], sane_time(r[4]), r[6], sane_time(r[7]), r[8]) for r in rows]
