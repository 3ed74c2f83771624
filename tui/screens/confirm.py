"""A yes/no question before something that cannot be undone (purging the trash)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.widgets.footer import KeyFooter


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, detail: str = "") -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="dialog--title", markup=False)
            if self.detail:
                yield Static(self.detail, classes="dialog--detail", markup=False)
            yield Static("y yes · n no", classes="dialog--keys")
        yield KeyFooter()

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
