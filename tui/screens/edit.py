"""The edit form (`e`, and `n` for a new memory): every field a person may change, checked
before saving, with each problem shown beside the form.

Saving an existing memory writes only the fields the person changed, and only if the memory is
still as the form read it (`Curator.edit`, a compare-and-set; `u` undoes it). If it changed
meanwhile, the form stays open and `ConflictScreen` shows what changed and asks: keep theirs,
apply mine, or go back to the form. Leaving a form with changes asks first."""

from __future__ import annotations

from typing import Any, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, Label, Select, Static, TextArea

from store.api import parse_spec, clean_list, Conflict, InvalidInput, Memory, STATUSES, Vocabulary
from tui.screens.base import TYPING_KEYS
from tui.widgets.footer import KeyFooter


class EditScreen(ModalScreen[dict[str, Any] | None]):
    HELP_TITLE = "Edit form"

    BINDINGS = [
        Binding("ctrl+s", "save", "Save"),
        Binding("escape", "cancel", "Cancel"),
        TYPING_KEYS,  # a letter on a select or checkbox neither quits nor opens a screen
    ]

    # Each field's widget, by the store's name for the field.
    WIDGETS = {"title": "title", "content": "content", "type": "type", "hat": "hat", "status": "status",
               "scope": "scope", "confidence": "confidence", "protected": "protected", "tags": "tags",
               "file_refs": "file-refs"}

    def __init__(self, memory: Memory | None, vocabulary: Vocabulary,
                 anchors: Sequence[str] | None = ()) -> None:
        super().__init__()
        self.memory = memory  # as the form read it: what the person's changes are measured from
        self.base = memory  # the version a save compares against (the newer one after "apply mine")
        self.vocabulary = vocabulary
        self.anchors = anchors  # None: not known, so the field is not offered
        self._initial: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        m = self.memory
        with VerticalScroll(classes="dialog wide form"):
            yield Static(f"Edit {m.id}" if m else "New memory", classes="dialog--title")
            yield Static("", id="form-errors", classes="form--error -empty")
            yield Label("title")
            # Not selected on focus: a key typed right after `e` must add to the title, not replace it.
            yield Input(m.title if m else "", id="title", placeholder="one line: what was learned",
                        select_on_focus=False)
            yield Label("content (Markdown)")
            yield TextArea(m.content if m else "", id="content", soft_wrap=True)
            with Horizontal(classes="form--row"):
                with Vertical():
                    yield Label("type")
                    yield Select([(t, t) for t in self.vocabulary.types], value=m.type if m else "context",
                                 allow_blank=False, id="type")
                with Vertical():
                    yield Label("hat")
                    yield Select([(h, h) for h in self.vocabulary.hats], value=(m.hat if m and m.hat
                                 in self.vocabulary.hats else Select.NULL), prompt="no hat", id="hat")
                with Vertical():
                    yield Label("status")
                    yield Select([(s, s) for s in STATUSES if s != "deleted" or (m and m.status == s)],
                                 value=m.status if m else "active", allow_blank=False, id="status")
            with Horizontal(classes="form--row"):
                with Vertical():
                    yield Label("scope")
                    yield Input(m.scope or "" if m else "", id="scope", placeholder="service or component")
                with Vertical():
                    yield Label("confidence")
                    yield Input(f"{m.confidence:.2f}" if m else "0.80", id="confidence")
                with Vertical():
                    yield Label(" ")
                    yield Checkbox("protected", m.protected if m else False, id="protected")
            yield Label("tags")
            yield Input(", ".join(m.tags) if m else "", id="tags", placeholder="comma separated")
            yield Label("file refs")
            yield Input(", ".join(m.file_refs) if m else "", id="file-refs", placeholder="globs, comma separated")
            if self.anchors is not None:
                yield Label("anchors")
                yield Input(", ".join(self.anchors), id="anchors",
                            placeholder="PATH or PATH:START-END, comma separated: checked against the code")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._initial = self._raw()
        self.query_one("#title", Input).focus()

    def _raw(self) -> dict[str, Any]:
        """Every field's widget value as shown, to tell which ones the person changed."""
        raw: dict[str, Any] = {}
        for name, id in self.WIDGETS.items():
            widget = self.query_one(f"#{id}")
            raw[name] = widget.text if isinstance(widget, TextArea) else widget.value
        if self.anchors is not None:
            raw["anchors"] = self.query_one("#anchors", Input).value
        return raw

    def touched(self) -> set[str]:
        """The fields the person changed since the form opened."""
        current = self._raw()
        return {name for name, value in current.items() if value != self._initial.get(name)}

    def _value(self, id: str) -> str:
        return self.query_one(f"#{id}", Input).value.strip()

    def validate_form(self) -> tuple[dict[str, Any], list[str]]:
        """The fields as the store wants them, and every problem found, in form order."""
        errors: list[str] = []
        fields: dict[str, Any] = {
            "title": self._value("title"),
            "content": self.query_one("#content", TextArea).text.strip(),
            "type": self.query_one("#type", Select).value,
            "hat": None if self.query_one("#hat", Select).is_blank() else self.query_one("#hat", Select).value,
            "status": self.query_one("#status", Select).value,
            "scope": self._value("scope") or None,
            "tags": clean_list(self._value("tags")),
            "file_refs": clean_list(self._value("file-refs")),
            "protected": self.query_one("#protected", Checkbox).value,
        }
        if not fields["content"]:
            errors.append("content: a memory needs some content")
        if not fields["title"] and self.memory is not None:
            errors.append("title: a memory needs a title")
        try:
            confidence = float(self._value("confidence"))
            if not 0 <= confidence <= 1:
                raise ValueError
            fields["confidence"] = confidence
        except ValueError:
            errors.append(f"confidence: a number from 0 to 1, not {self._value('confidence')!r}")
        if self.anchors is not None:
            fields["anchors"] = self._anchors(errors)
        if self.memory is None:
            fields["title"] = fields["title"] or None  # a new memory's title defaults to its first sentence
        for id in ("title", "content", "confidence", *(("anchors",) if self.anchors is not None else ())):
            self.query_one(f"#{id}").set_class(any(e.startswith(id) for e in errors), "-invalid")
        return fields, errors

    def _anchors(self, errors: list[str]) -> tuple[str, ...]:
        """The anchors typed, each checked for its shape (the file is read when saving)."""
        specs = clean_list(self._value("anchors"))
        for spec in specs:
            try:
                parse_spec(spec)
            except InvalidInput as exc:
                errors.append(f"anchors: {exc}")
        return specs

    def action_save(self) -> None:
        fields, errors = self.validate_form()
        shown = self.query_one("#form-errors", Static)
        shown.update("\n".join(errors))
        shown.set_class(not errors, "-empty")
        self.query_one(VerticalScroll).scroll_home(animate=False)
        if errors:
            return
        if self.memory is None:
            self.dismiss(fields)
            return
        touched = self.touched()
        if not touched:
            self.dismiss({"saved": self.base})  # saved as it is: nothing to write
            return
        self.app.save_edit(self, self.base, {name: fields[name] for name in touched})

    def saved(self, memory: Memory) -> None:
        self.dismiss({"saved": memory})

    def conflicted(self, conflict: Conflict, changes: dict[str, Any]) -> None:
        """The memory changed since the form read it: show what, and ask what to do."""
        from tui.screens.conflict import ConflictScreen

        def answered(answer: str | None) -> None:
            if answer == "theirs":
                self.app.notify(f"Kept {conflict.memory_id} as it is now; your changes were dropped")
                self.dismiss(None)
            elif answer == "mine" and conflict.current is not None:
                self.base = conflict.current
                self.app.save_edit(self, self.base, changes)

        self.app.push_screen(ConflictScreen(conflict, changes), answered)

    def action_typed(self) -> None:
        """A one-key app command, off in a form."""

    def action_cancel(self) -> None:
        if not self._initial or not self.touched():
            self.dismiss(None)
            return
        from tui.screens.confirm import ConfirmScreen

        self.app.push_screen(ConfirmScreen("Discard your changes?", "They are not saved; n goes back to the form."),
                             lambda discard: discard and self.dismiss(None))
