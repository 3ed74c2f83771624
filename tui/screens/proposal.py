"""A proposal side by side (issue 27): the memory already in the store and the one that may
repeat, update or contradict it, with why memdeck thinks so, and the merged text, editable.
Opened from the inbox (`v`); every value shown is data, never markup.

Dismissed with (choice, merged text) or None: the inbox resolves it through `Curator.resolve`,
so it is one undoable action (`u`)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from store.api import Memory
from tui.widgets.footer import KeyFooter

# The choices, by key, as `Curator.resolve` names them.
CHOICES = {
    "k": ("keep-both", "Keep both"),
    "s": ("supersede", "New supersedes"),
    "m": ("merge", "Merge"),
    "o": ("wrong-old", "Old is wrong"),
    "n": ("wrong-new", "New is wrong"),
}


class ProposalScreen(ModalScreen[tuple[str, str] | None]):
    AUTO_FOCUS = ""  # no widget: the letters choose until a person moves into the merged text (tab)
    DEFAULT_CSS = """
    ProposalScreen #proposal-sides { height: auto; max-height: 50%; }
    ProposalScreen .proposal--side { width: 1fr; border: round $border-blurred; padding: 0 1; height: auto; }
    ProposalScreen #proposal-merged { height: 8; }
    """

    # Letters choose while the merged text is not being edited (the text area takes them then);
    # ctrl+s merges from anywhere; tab moves into the merged text.
    BINDINGS = [
        *(Binding(key, f"choose('{choice}')", label) for key, (choice, label) in CHOICES.items() if key != "m"),
        Binding("ctrl+s", "choose('merge')", "Merge", priority=True),
        Binding("escape", "cancel", "Back", priority=True),
    ]

    def __init__(self, memory: Memory, other: Memory) -> None:
        super().__init__()
        self.memory = memory
        self.other = other

    def compose(self) -> ComposeResult:
        proposal = self.memory.meta.get("proposal") or {}
        kind = str(proposal.get("kind", "?"))
        with Vertical(classes="dialog wide"):
            yield Static(f"{self.memory.id} may {_verb(kind)} {self.other.id}"
                         + ("" if proposal.get("sure") else " (memdeck is unsure)"),
                         classes="dialog--title", markup=False)
            yield Static(f"why: {proposal.get('why', '')}", classes="dialog--detail", markup=False,
                         id="proposal-why")
            chain = [str(c) for c in proposal.get("chain") or ()]
            if chain:  # a chain of updates (consolidate): superseding retires all before the newest
                yield Static(f"chain of {len(chain)}, oldest first: {' → '.join(chain)}; s retires the "
                             f"{len(chain) - 1} before {self.memory.id}", classes="dialog--detail", markup=False,
                             id="proposal-chain")
            with Horizontal(id="proposal-sides"):
                old = Static(self.other.content, classes="proposal--side", markup=False, id="proposal-old")
                old.border_title = f"in the store · {self.other.id} · {self.other.status}"
                yield old
                new = Static(self.memory.content, classes="proposal--side", markup=False, id="proposal-new")
                new.border_title = f"new · {self.memory.id} · {self.memory.status}"
                yield new
            yield Static("Merged text (ctrl+s merges it into the memory in the store):", classes="dialog--detail")
            yield TextArea(self.memory.content, id="proposal-merged", soft_wrap=True)
            yield Static("k keep both · s new supersedes · ctrl+s merge · o old is wrong · n new is wrong · "
                         "tab edits the merged text · escape back", classes="dialog--keys")
        yield KeyFooter()

    def action_choose(self, choice: str) -> None:
        text = self.query_one("#proposal-merged", TextArea).text.strip()
        if choice == "merge" and not text:
            self.notify("The merged text is empty", severity="warning")
            return
        self.dismiss((choice, text))

    def action_cancel(self) -> None:
        self.dismiss(None)


def _verb(kind: str) -> str:
    return {"same": "repeat", "update": "update", "contradiction": "contradict"}.get(kind, "relate to")
