"""The injection preview's "why" table: every candidate memory, in (✓) or out (✗), its score
broken down by signal (each signal's weighted share, so a row's shares add up to its score, the
semantic signal among them), the reason it is in or out, and the relevance gate's verdict with
its numbers. The reason column takes the room the others leave; the screen shows the
highlighted row's whole reason and verdict under the table (`reading`). A candidate list is at most a few hundred rows (ranking caps
its candidates), so Textual's `DataTable` suits it."""

from __future__ import annotations

from rich.text import Text

from store.api import PrimeResult, RankedMemory
from tui.text import one_line
from tui.widgets.fitted_table import Column, FittedTable

# (signal, column header): the weighted signals that add up to the score.
SHARES = (("text", "text"), ("semantic", "sem"), ("path", "path"), ("tag", "tag"), ("hat", "hat"),
          ("confidence", "conf"), ("recency", "rec"), ("critical", "crit"))


def _share(value: float) -> Text:
    """A weighted share in four cells (`.38`, `1.20`), a dot when the signal gave nothing."""
    if value < 0.005:
        return Text("   ·", style="dim")
    return Text(f"{value:.2f}".lstrip("0").rjust(4) if value < 1 else f"{value:.2f}")


# Narrow, the signals that least often decide go first: critical, recency, tag, path.
DROPPED_FIRST = ("critical", "recency", "tag", "path")


class ScoreTable(FittedTable):
    """Give it a `PrimeResult` and the signal weights with `show`."""

    HELP_TITLE = "Why table"

    COLUMNS = (
        Column("in", "", 1), Column("score", "score", 5), Column("title", "memory", 18, grow=True, max_width=32),
        *(Column(signal, header, 4, drop=DROPPED_FIRST.index(signal) + 1 if signal in DROPPED_FIRST else 0)
          for signal, header in SHARES),
        Column("reason", "reason", 22, grow=True),
        # The gate's verdict with its numbers: shown when there is room, after the signals.
        Column("gate", "gate", 30, drop=len(DROPPED_FIRST) + 1),
    )

    def show(self, result: PrimeResult, weights: dict[str, float]) -> None:
        """The candidates of a new preview, from the top."""
        self.set_rows([(item.memory.id, self._cells(item, chosen, weights)) for item, chosen
                       in [*((r, True) for r in result.included), *((r, False) for r in result.excluded)]])
        self.move_cursor(row=0, animate=False)

    @staticmethod
    def _cells(item: RankedMemory, chosen: bool, weights: dict[str, float]) -> dict:
        mark = Text("✓", style="bold green") if chosen else Text("✗", style="red")
        title = Text(one_line(item.memory.title), no_wrap=True, overflow="ellipsis",
                     style="" if chosen else "dim")
        shares = {s: _share(weights.get(s, 0.0) * item.signals.get(s, 0.0)) for s, _ in SHARES}
        reason = Text(one_line(item.reason), no_wrap=True, overflow="ellipsis",
                      style="green" if chosen else "yellow" if item.reason == "over budget" else "dim")
        gate = Text(one_line(item.gate), no_wrap=True, overflow="ellipsis", style="" if chosen else "dim")
        return {"in": mark, "score": f"{item.score:.2f}", "title": title, **shares, "reason": reason, "gate": gate}

    @staticmethod
    def reading(item: RankedMemory, chosen: bool) -> Text:
        """A candidate's whole reason and the gate's whole verdict, for the line under the table."""
        text = Text()
        text.append("in: " if chosen else "out: ", style="bold green" if chosen else "bold")
        text.append(one_line(item.memory.title), style="bold")
        text.append(" — ")
        text.append(one_line(item.reason) or "-", style="green" if chosen else "")
        if item.gate and item.gate != item.reason:
            text.append("\ngate: ", style="bold")
            text.append(one_line(item.gate))
        return text

    def cursor_memory_id(self) -> str | None:
        if not self.row_count:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)
