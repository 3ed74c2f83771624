"""Bulk actions (`b`) on the selection: pick an action; those that need a value ask for it."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from store.api import CONFIDENCE_STEP, Vocabulary
from tui.widgets.footer import KeyFooter

# (id, label, question asking for a value or None). The id names a `Curator` method, or one
# of the variants below.
ACTIONS = (
    ("delete", "Move to trash", None),
    ("deactivate", "Deactivate (kept, never injected)", None),
    ("reactivate", "Reactivate", None),
    ("set_type", "Set type…", "Type"),
    ("set_hat", "Set hat…", "Hat (empty for none)"),
    ("add_tags", "Add tags…", "Tags to add, comma separated"),
    ("remove_tags", "Remove tags…", "Tags to remove, comma separated"),
    ("raise", f"Raise confidence by {CONFIDENCE_STEP}", None),
    ("lower", f"Lower confidence by {CONFIDENCE_STEP}", None),
    ("set_confidence", "Set confidence…", "Confidence, 0 to 1"),
    ("protect", "Protect (never decays)", None),
    ("unprotect", "Unprotect", None),
    ("merge", "Merge into the strongest", None),
    ("export", "Export to a JSON file…", "File to write"),
)


class BulkScreen(ModalScreen[None]):
    HELP_TITLE = "Bulk actions"

    BINDINGS = [Binding("escape,q", "cancel", "Cancel")]

    def __init__(self, ids: list[str], vocabulary: Vocabulary) -> None:
        super().__init__()
        self.ids = ids
        self.vocabulary = vocabulary

    def compose(self) -> ComposeResult:
        n = len(self.ids)
        with Vertical(classes="dialog"):
            yield Static(f"Bulk action on {n} {'memory' if n == 1 else 'memories'}", classes="dialog--title")
            yield OptionList(*(Option(label, id=action) for action, label, _ in ACTIONS), id="actions")
            yield Static("enter apply · escape cancel · u undoes the last bulk action",
                         classes="dialog--keys")
        yield KeyFooter()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        action = event.option.id
        question = next(q for a, _, q in ACTIONS if a == action)
        if question is None:
            self._run(action, None)
            return
        from tui.screens.prompt import PromptScreen

        hint = {"set_type": ", ".join(self.vocabulary.types), "set_hat": ", ".join(self.vocabulary.hats),
                "export": "memdeck-selection.json"}.get(action, "")
        self.app.push_screen(PromptScreen(question, hint),
                             lambda value: value is not None and self._run(action, value))

    def _run(self, action: str, value: str | None) -> None:
        app, ids = self.app, self.ids
        self.dismiss(None)
        variants = {
            "deactivate": ("set_status", "inactive"), "reactivate": ("set_status", "active"),
            "raise": ("adjust_confidence", CONFIDENCE_STEP), "lower": ("adjust_confidence", -CONFIDENCE_STEP),
            "protect": ("protect", True), "unprotect": ("protect", False),
        }
        if action in variants:
            name, argument = variants[action]
            app.bulk(name, ids, argument)
        elif action == "set_confidence":
            try:
                confidence = float(value)
            except ValueError:
                app.notify(f"confidence must be a number from 0 to 1, not {value!r}", severity="error", markup=False)
                return
            app.bulk(action, ids, confidence)
        elif action == "export":
            app.bulk(action, ids, Path(value or "memdeck-selection.json").expanduser())
        else:
            app.bulk(action, ids, value)
