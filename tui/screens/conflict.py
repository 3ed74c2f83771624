"""What changed meanwhile: shown when saving an edit finds the memory changed since the form read
it (another process reinforced, edited or trashed it). Asks: keep theirs, apply mine, or go back
to the form. Every value shown is data, never markup."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from store.api import Conflict, brief_value
from tui.widgets.footer import KeyFooter


class ConflictScreen(ModalScreen[str | None]):
    """Dismissed with "theirs", "mine", or None (back to the form)."""

    BINDINGS = [
        Binding("t", "answer('theirs')", "Keep theirs"),
        Binding("m", "answer('mine')", "Apply mine"),
        Binding("escape,c", "answer(None)", "Cancel"),
    ]

    def __init__(self, conflict: Conflict, mine: dict[str, Any]) -> None:
        super().__init__()
        self.conflict = conflict
        self.mine = mine

    def compose(self) -> ComposeResult:
        conflict = self.conflict
        with Vertical(classes="dialog wide"):
            yield Static(f"{conflict.memory_id} changed while you edited it", classes="dialog--title",
                         markup=False)
            if conflict.current is None:
                lines = ["It was purged from the trash meanwhile: there is nothing left to save to."]
            else:
                lines = ["Changed meanwhile (what you read → what it is now):"]
                lines += [f"  {name}: {brief_value(old)} → {brief_value(new)}"
                          for name, (old, new) in conflict.changed.items()]
                if not conflict.changed:
                    lines.append("  nothing shown in the form (its history has the details)")
            lines += ["", "Your changes:"]
            lines += [f"  {name}: {brief_value(value)}" for name, value in self.mine.items()]
            yield Static("\n".join(lines), classes="dialog--detail", markup=False)
            keys = "t keep theirs (drop your changes) · c/escape back to the form"
            if conflict.current is not None:
                keys = "t keep theirs (drop your changes) · m apply mine (only the fields you changed) · " \
                       "c/escape back to the form"
            yield Static(keys, classes="dialog--keys")
        yield KeyFooter()

    def action_answer(self, answer: str | None) -> None:
        if answer == "mine" and self.conflict.current is None:
            return
        self.dismiss(answer)
