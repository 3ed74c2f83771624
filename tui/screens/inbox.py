"""The inbox (`I`): pending candidates (heuristic finds, markers held for review). Accept makes
them active, reject moves them to the trash, edit opens the form; singly or on a selection."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from store.records import Memory
from store.search import MemoryFilter, list_memories
from tui.screens.base import StoreScreen
from tui.widgets.footer import KeyFooter
from tui.widgets.memory_table import MAX_ROWS, MemoryTable
from tui.widgets.title_bar import TitleBar


class InboxScreen(StoreScreen):
    HELP_TITLE = "Inbox"

    BINDINGS = [
        Binding("a", "accept", "Accept", tooltip="Make the selection (or the cursor's candidate) active"),
        Binding("r", "reject", "Reject", tooltip="Move the selection (or the cursor's candidate) to the trash"),
        Binding("e", "edit", "Edit"),
        Binding("u", "undo", "Undo"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="screen-heading", classes="screen--heading")
        yield MemoryTable(self.app.now, id="inbox")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(MemoryTable).focus()
        self.reload()

    @work(thread=True, exclusive=True, group="inbox")
    def reload(self) -> None:
        from store import paging

        store = self.app.store
        memories, counts = self.app.db_call(lambda: (
            list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=MAX_ROWS),
            paging.counts(store)))
        self.app.call_from_thread(self._show, memories, counts)

    def _show(self, memories: list[Memory], counts) -> None:
        self.query_one(TitleBar).counts = counts
        self.query_one(TitleBar).now = self.app.now()
        self.query_one("#screen-heading", Static).update(
            f"Inbox ─ {len(memories)} pending {'candidate' if len(memories) == 1 else 'candidates'}"
            if memories else "Inbox ─ empty. Candidates from `memdeck ingest` wait here for review.")
        self.query_one(MemoryTable).show(memories)

    def action_accept(self) -> None:
        ids = self.query_one(MemoryTable).chosen_ids()
        if ids:
            self.app.bulk("set_status", ids, "active")

    def action_reject(self) -> None:
        ids = self.query_one(MemoryTable).chosen_ids()
        if ids:
            self.app.bulk("delete", ids)

    def action_edit(self) -> None:
        memory = self.query_one(MemoryTable).cursor_memory()
        if memory is not None:
            self.app.edit_memory(memory)

    def action_undo(self) -> None:
        self.app.undo()
