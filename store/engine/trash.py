"""The trash: deleting moves memories to it, restoring takes them back to the status they had,
purging removes them for good (the Store's side; the rules of what may be purged are in
`lifecycle`)."""

from __future__ import annotations

from typing import Any, Sequence

from store.engine.errors import InvalidInput
from store.engine.models import EventRow, MemoryRow
from store.engine.records import Memory
from store.engine.vocabulary import STATUSES
from store.engine.rows import MEMORY_SELECT, id_chunks, memory_from_row


def _restored_status(before: Any) -> str:
    """The status a memory leaves the trash with: the one it had, if that is a status it can be
    put back to (an import may say anything), else active."""
    return before if before in STATUSES and before != "deleted" else "active"


class Trash:
    """Mixed into `Store` (uses its `db`, `backend`, `project_id`, `get_many` and `edit`)."""

    def delete(self, memory_ids: Sequence[str], *, actor: str = "cli") -> list[Memory]:
        """Move memories to the trash. They stay restorable until the trash is purged."""
        return self.set_status(memory_ids, "deleted", actor=actor)

    def restore(self, memory_ids: Sequence[str], *, actor: str = "cli") -> list[Memory]:
        """Take memories out of the trash, back to the status they had before."""
        with self.db.atomic():
            memories = self.get_many(memory_ids)
            not_deleted = [m.id for m in memories if m.status != "deleted"]
            if not_deleted:
                raise InvalidInput(f"not in the trash: {', '.join(not_deleted)}")
            return [self.edit(m.id, status=_restored_status(m.meta.get("status_before_delete")), actor=actor)
                    for m in memories]

    def trash(self, project: str | None = None) -> list[Memory]:
        p = self.backend.param
        rows = self.db.execute_sql(
            MEMORY_SELECT + f" WHERE memory.project_id = {p} AND memory.status = 'deleted' "
            "ORDER BY memory.status_changed_at DESC",
            (self.project_id(project),),
        )
        return [memory_from_row(r) for r in rows]

    def purge(self, memory_ids: Sequence[str] | None = None, *, dry_run: bool = False,
              project: str | None = None) -> list[Memory]:
        """Delete memories from the trash for good (all of the project's trash if no ids)."""
        with self.db.atomic():
            if memory_ids is None:
                victims = self.trash(project)
            else:
                victims = self.get_many(memory_ids)
                not_deleted = [m.id for m in victims if m.status != "deleted"]
                if not_deleted:
                    raise InvalidInput(f"only memories in the trash can be purged: {', '.join(not_deleted)}")
            if not dry_run:
                self.delete_rows([m.id for m in victims])
        return victims

    def delete_rows(self, memory_ids: Sequence[str]) -> None:
        """Remove memories and their events for good. Callers check the rules first."""
        with self.db.atomic():  # a model write in this store's transaction goes to this store
            for chunk, _ in id_chunks(memory_ids, self.backend.param):
                EventRow.delete().where(EventRow.memory.in_(chunk)).execute()
                MemoryRow.delete().where(MemoryRow.id.in_(chunk)).execute()
