"""The inbox (`I`): pending candidates (heuristic finds, markers held for review), each with its
evidence and the memories it resembles in the review pane. Accept makes them active (after
editing in the form, with `E`), reject moves them to the trash, merge folds them into the memory
they most resemble; singly or on a selection."""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.binding import Binding
from textual.message import Message

from store.api import Memory, MemoryFilter, list_memories
from tui.screens.review import ReviewScreen
from tui.widgets.memory_table import MAX_ROWS, MemoryTable


class InboxScreen(ReviewScreen):
    HELP_TITLE = "Inbox"

    BINDINGS = [
        Binding("a", "accept", "Accept", tooltip="Make the selection (or the cursor's candidate) active"),
        Binding("E", "edit_accept", "Edit+accept", tooltip="Edit the cursor's candidate in the form; saving accepts it"),
        Binding("r", "reject", "Reject", tooltip="Move the selection (or the cursor's candidate) to the trash"),
        Binding("m", "merge", "Merge", tooltip="Merge the selection (or the cursor's candidate) into the memory it resembles most"),
        # Not in the footer (at 80 columns it would push Undo out): the review pane names it on a
        # memory holding a proposal, and `?` lists it.
        Binding("v", "proposal", "Proposal", show=False,
                tooltip="The cursor's proposal side by side: keep both, supersede, merge, or mark one wrong"),
        Binding("e", "edit", "Edit"),
        Binding("S", "share", "Share", show=False,
                tooltip="Copy the selection (or the cursor's memory) to the team store"),
        Binding("u", "undo", "Undo"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    table_id = "inbox"

    def memories_of(self, store) -> list[Memory]:
        pending = list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=MAX_ROWS)
        # Proposals on memories already in use (`memdeck consolidate`) wait here too.
        shown = {m.id for m in pending}
        return pending + [m for m, _ in store.relations.proposals() if m.id not in shown][:MAX_ROWS - len(pending)]

    def heading(self, memories: list[Memory]) -> str:
        return (f"Inbox ─ {len(memories)} pending {'candidate' if len(memories) == 1 else 'candidates'}"
                if memories else "Inbox ─ empty. Candidates from `memdeck ingest` wait here for review.")

    def action_accept(self) -> None:
        ids = self.query_one(MemoryTable).chosen_ids()
        if ids:
            self.app.bulk("set_status", ids, "active")

    def action_reject(self) -> None:
        ids = self.query_one(MemoryTable).chosen_ids()
        if ids:
            self.app.bulk("delete", ids)

    def action_merge(self) -> None:
        ids = self.query_one(MemoryTable).chosen_ids()
        detail = self.shown_detail()
        if not ids or detail is None:
            return
        if not detail.resembling:
            self.notify("Nothing in the store resembles this candidate: accept or reject it", severity="warning")
            return
        self.app.bulk("merge", ids, detail.resembling[0][0].id)

    def action_proposal(self) -> None:
        """Open the cursor's proposal side by side; the choice is one undoable action."""
        memory = self.query_one(MemoryTable).cursor_memory()
        if memory is None:
            return
        if not isinstance(memory.meta.get("proposal"), dict):
            self.notify("No proposal on this candidate: accept, reject or merge it", severity="warning")
            return
        self._open_proposal(memory)

    @work(thread=True, exclusive=True, group="inbox-proposal")
    def _open_proposal(self, memory: Memory) -> None:
        store = self.app.store
        other_id = str(memory.meta["proposal"].get("other"))
        other = self.app.db_call(lambda: store.found([other_id]).get(other_id))
        self.post_message(self.ProposalRead(memory, other))

    @dataclass
    class ProposalRead(Message, bubble=False):
        memory: Memory
        other: Memory | None

    def on_inbox_screen_proposal_read(self, message: ProposalRead) -> None:
        from tui.screens.proposal import ProposalScreen

        if message.other is None:
            self.notify(f"{message.memory.meta['proposal'].get('other')} was purged: accept or reject this one",
                        severity="warning", markup=False)
            return
        memory = message.memory

        def decided(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                choice, text = answer
                # A bulk result: the app tells what was done, and that `u` undoes it.
                self.app.write(lambda: self.app.curator.resolve(memory.id, choice, text=text))

        self.app.push_screen(ProposalScreen(memory, message.other), decided)

    def action_edit_accept(self) -> None:
        from tui.screens.edit import EditScreen

        memory = self.query_one(MemoryTable).cursor_memory()
        if memory is None:
            return
        store = self.app.store

        def save(result) -> None:
            # The form has saved the person's edits itself (a compare-and-set); accepting is one
            # more, on the memory as the form left it.
            saved = (result or {}).get("saved")
            if saved is not None:
                self.app.write(lambda: store.update(saved.id, saved, actor="ui", status="active"),
                               lambda accepted: self.notify(f"Accepted {accepted.id} as edited", markup=False))

        self.app.push_screen(EditScreen(memory, store.vocabulary), save)

    def action_share(self) -> None:
        ids = self.query_one(MemoryTable).chosen_ids()
        if ids:
            self.app.share(ids)

    def action_edit(self) -> None:
        memory = self.query_one(MemoryTable).cursor_memory()
        if memory is not None:
            self.app.edit_memory(memory)

    def action_undo(self) -> None:
        self.app.undo()
