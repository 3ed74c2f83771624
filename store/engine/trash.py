"""The trash: deleting moves memories to it, restoring takes them back to the status they had,
purging removes them for good: `store.trash` (the rules of what may be purged are in
`lifecycle`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from store.engine.errors import InvalidInput
from store.engine.models import EventRow, MemoryRow
from store.engine.records import Memory
from store.engine.vocabulary import STATUSES
from store.engine.rows import id_chunks, memory_from_row

if TYPE_CHECKING:
    from store.engine.keeper import Keeper


def _restored_status(before: Any) -> str:
    """The status a memory leaves the trash with: the one it had, if that is a status it can be
    put back to (an import may say anything), else active."""
    return before if before in STATUSES and before != "deleted" else "active"


class Trash:
    """A store's trash: `store.trash`."""

    def __init__(self, store: "Keeper") -> None:
        self.store = store

    def delete(self, memory_ids: Sequence[str], *, actor: str = "cli") -> list[Memory]:
        """Move memories to the trash. They stay restorable until the trash is purged."""
        return self.store.set_status(memory_ids, "deleted", actor=actor)

    def restore(self, memory_ids: Sequence[str], *, actor: str = "cli") -> list[Memory]:
        """Take memories out of the trash, back to the status they had before."""
        with self.store.db.atomic():
            memories = self.store.get_many(memory_ids)
            not_deleted = [m.id for m in memories if m.status != "deleted"]
            if not_deleted:
                raise InvalidInput(f"not in the trash: {', '.join(not_deleted)}")
            return [self.store.edit(m.id, status=_restored_status(m.meta.get("status_before_delete")), actor=actor)
                    for m in memories]

    def memories(self, project: str | None = None) -> list[Memory]:
        """The project's memories in the trash, most recently deleted first."""
        return [memory_from_row(r) for r in self.store.backend.memory_table.in_trash(self.store.project_id(project))]

    def purge(self, memory_ids: Sequence[str] | None = None, *, dry_run: bool = False,
              project: str | None = None) -> list[Memory]:
        """Delete memories from the trash for good (all of the project's trash if no ids)."""
        with self.store.db.atomic():
            if memory_ids is None:
                victims = self.memories(project)
            else:
                victims = self.store.get_many(memory_ids)
                not_deleted = [m.id for m in victims if m.status != "deleted"]
                if not_deleted:
                    raise InvalidInput(f"only memories in the trash can be purged: {', '.join(not_deleted)}")
            if not dry_run:
                self.delete_rows([m.id for m in victims])
        return victims

    def delete_rows(self, memory_ids: Sequence[str]) -> None:
        """Remove memories and their events for good. Callers check the rules first."""
        with self.store.db.atomic():  # a model write in this store's transaction goes to this store
            for chunk, _ in id_chunks(memory_ids, self.store.backend.param):
                EventRow.delete().where(EventRow.memory.in_(chunk)).execute()
                MemoryRow.delete().where(MemoryRow.id.in_(chunk)).execute()
