"""The timeline's project view: how confidence is spread over the project's memories (a bar per
tenth, highest first, the tenths below the inactive threshold dimmed) and how many memories are
gaining, losing or holding confidence over the window."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from store.api import BUCKETS, ProjectConfidence
from tui.text import bar, one_line


class ConfidenceSpread(Static):
    DEFAULT_CSS = """
    ConfidenceSpread { padding: 0 1; }
    """

    _spread: ProjectConfidence | None = None

    def show(self, spread: ProjectConfidence) -> None:
        self._spread = spread
        self.border_title = f"Project {one_line(spread.project)}: {spread.total} memories in play"
        self.update(self._picture(spread))

    def on_resize(self) -> None:
        if self._spread is not None:
            self.update(self._picture(self._spread))

    def _picture(self, spread: ProjectConfidence) -> Text:
        text = Text()
        largest = max(spread.buckets) or 1
        width = max(10, min(40, self.content_region.width - 22))
        for bucket in reversed(range(BUCKETS)):
            count = spread.buckets[bucket]
            low = bucket / BUCKETS
            below = low < spread.inactive_below
            text.append(f"{low:.1f}–{low + 1 / BUCKETS:.1f} ", style="dim")
            text.append(bar(count / largest, width).rstrip().ljust(width),
                        style="dim" if below else "green")
            text.append(f" {count:>4}\n", style="dim" if not count else "")
        text.append(f"last {spread.days} days: ")
        text.append(f"▲ {spread.gaining} gaining", style="green")
        text.append("  ")
        text.append(f"▼ {spread.losing} losing", style="red")
        text.append(f"  ═ {spread.steady} steady", style="dim")
        return text
