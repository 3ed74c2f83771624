"""The search box and the active filters, side by side: what narrows the list, at a glance."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.reactive import reactive
from textual.widgets import Input, Static

from store.browse.search import MemoryFilter


def describe(flt: MemoryFilter) -> list[str]:
    """Each active filter as a short chip: `type: pitfall,fix`, `conf ≥ 0.5`."""
    chips = []
    for label, values in (("type", flt.types), ("hat", flt.hats), ("status", flt.statuses),
                          ("source", flt.sources), ("tag", flt.tags)):
        if values:
            chips.append(f"{label}: {','.join(values)}")
    if flt.min_confidence is not None:
        chips.append(f"conf ≥ {flt.min_confidence:g}")
    if flt.stale:
        chips.append("stale")
    return chips


class SearchBox(Input):
    """Filters the list as you type (full text and fuzzy titles)."""

    HELP_TITLE = "Search box"

    BINDINGS = [
        Binding("down,enter", "leave", "To the list", show=True),
        Binding("escape", "clear", "Clear search", show=True),
    ]

    def action_leave(self) -> None:
        self.screen.query_one("MemoryList").focus()

    def action_clear(self) -> None:
        if self.value:
            self.value = ""
        else:
            self.action_leave()


class FilterChips(Static):
    """The active filters; `x` clears them all."""

    DEFAULT_CSS = """
    FilterChips { width: auto; height: 1; padding: 0 1; color: $text-muted; }
    """

    filter: reactive[MemoryFilter] = reactive(MemoryFilter)
    # The main list's layer filter (`L`; "all": every layer, no chip).
    layer_filter: reactive[str] = reactive("all")

    def render(self) -> Text:
        chips = describe(self.filter)
        if self.layer_filter != "all":
            chips = [f"layer: {self.layer_filter}", *chips]
        if not chips:
            return Text("no filters · f to filter", style="dim")
        text = Text()
        for chip in chips:
            text.append(f" {chip} ", style="reverse")
            text.append(" ")
        text.append("x clears", style="dim")
        return text
