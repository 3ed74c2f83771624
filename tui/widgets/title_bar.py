"""The top line: project, counts of what the filters show, pending and trash, and the time
(from the app's clock, so snapshots are stable)."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from store.api import Counts
from tui.text import one_line, stamp


TICK_SECONDS = 5.0  # the clock shows minutes: a few seconds late at most


class TitleBar(Widget):
    DEFAULT_CSS = """
    TitleBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    counts: reactive[Counts | None] = reactive(None)
    now: reactive[float] = reactive(0.0)

    def on_mount(self) -> None:
        # The clock keeps time on every screen (it stopped on the main one, which set it once).
        self.set_interval(TICK_SECONDS, self.tick)

    def tick(self) -> None:
        self.now = self.app.now()

    def render(self) -> Text:
        counts = self.counts
        left = Text.assemble(("memdeck", "bold"), " ─ project: ")
        right = Text()
        if counts is not None:
            left.append(one_line(counts.project), style="bold")
            left.append(f" ({counts.total})")
            right.append(f"{counts.pending} pending · {counts.trash} in trash ─ ")
        right.append(stamp(self.now, "%H:%M"))
        gap = max(1, self.size.width - left.cell_len - right.cell_len)
        return Text.assemble(left, " " * gap, right)
