"""The trash (`T`): deleted memories of the project, with their evidence and the memories they
resemble in the review pane, to restore, or purge for good after a confirmation."""

from __future__ import annotations

from textual.binding import Binding

from store.api import Memory
from tui.screens.review import ReviewScreen
from tui.widgets.memory_table import MemoryTable


class TrashScreen(ReviewScreen):
    HELP_TITLE = "Trash"

    BINDINGS = [
        Binding("r", "restore", "Restore", tooltip="Restore the selection (or the cursor's memory)"),
        Binding("P", "purge", "Purge…", tooltip="Delete the selection for good, after confirming"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    table_id = "trash"

    def memories_of(self, store) -> list[Memory]:
        return store.trash.memories()

    def heading(self, memories: list[Memory]) -> str:
        return (f"Trash ─ {len(memories)} deleted {'memory' if len(memories) == 1 else 'memories'}, "
                "restorable until purged" if memories else "Trash ─ empty. Deleting a memory (d) puts it here.")

    def action_restore(self) -> None:
        ids = self.query_one(MemoryTable).chosen_ids()
        if ids:
            store = self.app.store
            self.app.write(lambda: store.trash.restore(ids, actor="ui"),
                           lambda restored: self.notify(f"restored {len(restored)}"))

    def action_purge(self) -> None:
        from tui.screens.confirm import ConfirmScreen

        ids = self.query_one(MemoryTable).chosen_ids()
        if not ids:
            return
        store = self.app.store

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.write(lambda: store.trash.purge(ids),
                               lambda gone: self.notify(f"purged {len(gone)} for good"))

        self.app.push_screen(ConfirmScreen(
            f"Purge {len(ids)} {'memory' if len(ids) == 1 else 'memories'} for good?",
            "Their history goes too. This cannot be undone."), answered)
