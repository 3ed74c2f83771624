"""The injection preview's "why" table: every candidate memory, in (✓) or out (✗), its score
broken down by signal (each signal's weighted share, so a row's shares add up to its score, the
semantic signal among them), the reason it is in or out, and the relevance gate's verdict with
its numbers. A candidate list is at most a few hundred rows (ranking caps
its candidates), so Textual's `DataTable` suits it."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from store.injection import PrimeResult
from store.ranking import RankedMemory
from tui.text import one_line

# (signal, column header): the weighted signals that add up to the score.
SHARES = (("text", "text"), ("semantic", "sem"), ("path", "path"), ("tag", "tag"), ("hat", "hat"),
          ("confidence", "conf"), ("recency", "rec"), ("critical", "crit"))


def _share(value: float) -> Text:
    """A weighted share in four cells (`.38`, `1.20`), a dot when the signal gave nothing."""
    if value < 0.005:
        return Text("   ·", style="dim")
    return Text(f"{value:.2f}".lstrip("0").rjust(4) if value < 1 else f"{value:.2f}")


class ScoreTable(DataTable):
    """Give it a `PrimeResult` and the signal weights with `show`."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)

    def on_mount(self) -> None:
        self.add_column("", key="in", width=1)
        self.add_column("score", key="score", width=5)
        self.add_column("memory", key="title", width=18)
        for signal, header in SHARES:
            self.add_column(header, key=signal, width=4)
        self.add_column("reason", key="reason", width=22)
        self.add_column("gate", key="gate", width=30)

    def show(self, result: PrimeResult, weights: dict[str, float]) -> None:
        """The candidates of a new preview, from the top."""
        self.clear()
        for item, chosen in [*((r, True) for r in result.included), *((r, False) for r in result.excluded)]:
            self.add_row(*self._cells(item, chosen, weights), key=item.memory.id)
        self.move_cursor(row=0, animate=False)

    @staticmethod
    def _cells(item: RankedMemory, chosen: bool, weights: dict[str, float]) -> list:
        mark = Text("✓", style="bold green") if chosen else Text("✗", style="red")
        title = Text(one_line(item.memory.title), no_wrap=True, overflow="ellipsis",
                     style="" if chosen else "dim")
        shares = [_share(weights.get(s, 0.0) * item.signals.get(s, 0.0)) for s, _ in SHARES]
        reason = Text(one_line(item.reason), no_wrap=True, overflow="ellipsis",
                      style="green" if chosen else "yellow" if item.reason == "over budget" else "dim")
        gate = Text(one_line(item.gate), no_wrap=True, overflow="ellipsis", style="" if chosen else "dim")
        return [mark, f"{item.score:.2f}", title, *shares, reason, gate]

    def cursor_memory_id(self) -> str | None:
        if not self.row_count:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)
