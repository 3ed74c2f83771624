"""The search box and the active filters, side by side: what narrows the list, at a glance."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.reactive import reactive
from textual.widgets import Input, Static

from store.api import MemoryFilter


def describe(flt: MemoryFilter, *, short: bool = False) -> list[str]:
    """Each active filter as a short chip: `type: pitfall,fix`, `conf ≥ 0.5`; `short`, a
    filter of several values as its first and how many more (`type: pitfall +2`)."""
    chips = []
    for label, values in (("type", flt.types), ("hat", flt.hats), ("status", flt.statuses),
                          ("source", flt.sources), ("tag", flt.tags)):
        if values:
            shown = f"{values[0]} +{len(values) - 1}" if short and len(values) > 1 else ",".join(values)
            chips.append(f"{label}: {shown}")
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
    """The active filters; `x` clears them all. They keep to one line in the room the search
    box leaves (`#filters` max-width): when the whole values do not fit, each filter of several
    values shows its first and how many more, then only how many filters (`f` shows them all);
    "x clears" is never cut."""

    DEFAULT_CSS = """
    FilterChips { width: auto; height: 1; padding: 0 1; color: $text-muted; }
    """

    filter: reactive[MemoryFilter] = reactive(MemoryFilter, layout=True)
    # The main list's layer filter (`L`; "all": every layer, no chip).
    layer_filter: reactive[str] = reactive("all", layout=True)

    def render(self) -> Text:
        layer = [f"layer: {self.layer_filter}"] if self.layer_filter != "all" else []
        chips = [*layer, *describe(self.filter)]
        if not chips:
            return Text("no filters · f to filter", style="dim")
        room = self._room()
        for choice in (chips, [*layer, *describe(self.filter, short=True)],
                       [f"{len(chips)} filters · f shows them"]):
            text = Text()
            for chip in choice:
                text.append(f" {chip} ", style="reverse")
                text.append(" ")
            text.append("x clears", style="dim")
            if text.cell_len <= room:
                break
        return text

    def _room(self) -> int:
        """The cells the chips may take: the share of the row `#filters`' max-width allows."""
        parent = self.parent.size.width if self.parent is not None else 0
        if not parent:
            return 10_000
        most = self.styles.max_width
        share = most.resolve(self.parent.size, self.app.size) if most is not None else parent
        return max(0, int(share) - self.styles.padding.width)
