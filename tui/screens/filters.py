"""The filter form (`f`): types, hats, statuses, sources, tags, a minimum confidence, and stale
memories only."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, SelectionList, Static
from textual.widgets.selection_list import Selection

from store.api import clean_list, MemoryFilter, SOURCES, STATUSES, Vocabulary
from tui.screens.base import TYPING_KEYS
from tui.widgets.footer import KeyFooter


class FilterScreen(ModalScreen[MemoryFilter | None]):
    HELP_TITLE = "Filters"
    # The roomy form (bordered fields, 17 rows of lists) needs 36 rows; below that the compact
    # one, as on a short terminal: at 100×30 the roomy one put `stale` and the keys out of sight.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]

    BINDINGS = [
        Binding("ctrl+s", "apply", "Apply"),
        Binding("ctrl+x", "clear", "Clear all"),
        Binding("escape", "cancel", "Cancel"),
        TYPING_KEYS,  # a letter on a select or checkbox neither quits nor opens a screen
    ]

    def __init__(self, current: MemoryFilter, vocabulary: Vocabulary) -> None:
        super().__init__()
        self.current = current
        self.vocabulary = vocabulary

    def _choices(self, id: str, values, chosen) -> SelectionList:
        choices = SelectionList[str](*(Selection(v, v, v in chosen) for v in values), id=id)
        choices.border_title = id
        return choices

    def compose(self) -> ComposeResult:
        flt = self.current
        with VerticalScroll(classes="dialog wide", id="filter-form"):
            yield Static("Filters", classes="dialog--title")
            with Grid(id="filter-grid"):
                yield self._choices("type", self.vocabulary.types, flt.types)
                yield self._choices("hat", self.vocabulary.hats, flt.hats)
                yield self._choices("status", STATUSES, flt.statuses)
                yield self._choices("source", SOURCES, flt.sources)
            yield Input(", ".join(flt.tags), placeholder="tags (all of them), e.g. esi, retry", id="tags")
            yield Input("" if flt.min_confidence is None else f"{flt.min_confidence:g}",
                        placeholder="minimum confidence, 0 to 1", id="min-confidence")
            yield Checkbox("stale: only memories whose anchored code changed", flt.stale, id="stale")
            yield Static("", id="filter-error", classes="form--error -empty")
            yield Static("space toggles · tab next · ctrl+s apply · ctrl+x clear all · escape cancel",
                         classes="dialog--keys")
        yield KeyFooter()

    def on_mount(self) -> None:
        # Each list's share of the width in proportion to what its longest choice needs (its
        # border, the check box, padding, and a scrollbar when it scrolls): at 80 columns an
        # even share cut "architecture" to "archite…".
        grid = self.query_one("#filter-grid", Grid)
        needs = []
        for choices in grid.query(SelectionList):
            longest = max((len(str(choices.get_option_at_index(i).prompt)) for i in range(choices.option_count)),
                          default=4)
            needs.append(longest + 8 + (2 if choices.option_count > 7 else 0))
        grid.styles.grid_columns = " ".join(f"{need}fr" for need in needs)

    def action_apply(self) -> None:
        text = self.query_one("#min-confidence", Input).value.strip()
        minimum = None
        if text:
            try:
                minimum = float(text)
            except ValueError:
                minimum = -1.0
            if not 0 <= minimum <= 1:
                self.query_one("#filter-error", Static).update("minimum confidence is a number from 0 to 1")
                self.query_one("#filter-error", Static).remove_class("-empty")
                return

        def chosen(id: str) -> tuple[str, ...]:
            return tuple(self.query_one(f"#{id}", SelectionList).selected)

        self.dismiss(self.current.with_(
            types=chosen("type"), hats=chosen("hat"), statuses=chosen("status"),
            sources=chosen("source"), tags=clean_list(self.query_one("#tags", Input).value),
            min_confidence=minimum, stale=self.query_one("#stale", Checkbox).value))

    def action_clear(self) -> None:
        self.dismiss(MemoryFilter())

    def action_typed(self) -> None:
        """A one-key app command, off in a form."""

    def action_cancel(self) -> None:
        self.dismiss(None)
