"""The confidence chart: one memory's confidence over time as a step line of box-drawing
characters, each event marked by its letter (C created, U used, R reinforced, D decayed, ...)
where it happened, the inactive threshold drawn dashed across, a cursor on one event.

Drawn with Textual's Line API from plain characters rather than a plotting library: a step line
is what confidence does (it moves only at events), box-drawing characters are crisp in every
terminal and in snapshot SVGs (braille dots blur there), and it adds no dependency.
"""

from __future__ import annotations

from datetime import datetime, timezone

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from store.api import DAY, EVENT_MARKS, Timeline, TimelinePoint

AXIS_WIDTH = 6  # "0.50 ┤"
GAINS = {"created", "imported", "reinforced", "used", "restored"}
LOSSES = {"decayed", "deleted", "superseded", "contradicted"}
LEGEND = " · ".join(f"{mark} {kind.replace('_', ' ')}" for kind, mark in EVENT_MARKS.items())
# The least time the x-axis spans: a younger memory's axis starts earlier, never ends after now.
MIN_SPAN = 3600.0


def legend(kinds, width: int | None = None) -> str:
    """The marks of the event kinds in `kinds` (those drawn), in the chart's order. With `width`,
    in lines of at most that many characters, broken only between two marks: a mark never ends
    a line apart from its name (the terminal's own wrapping lost a mark at a line's end)."""
    present = set(kinds)
    units = [f"{mark} {kind.replace('_', ' ')}" for kind, mark in EVENT_MARKS.items() if kind in present]
    if width is None:
        return " · ".join(units)
    lines: list[str] = []
    for unit in units:
        if lines and len(lines[-1]) + len(" · ") + len(unit) <= width:
            lines[-1] += " · " + unit
        else:
            lines.append(unit)
    return "\n".join(lines)


class ConfidenceChart(Widget, can_focus=True):
    """Give it a `Timeline` with `show`; it posts `PointHighlighted` as the cursor moves."""

    BINDINGS = [
        Binding("left,h", "move(-1)", "Earlier", tooltip="The event before"),
        Binding("right,l", "move(1)", "Later", tooltip="The event after"),
        Binding("home,g", "jump(0)", "First", show=False),
        Binding("end,G", "jump(-1)", "Last", show=False),
    ]

    COMPONENT_CLASSES = {
        "confidence-chart--axis", "confidence-chart--line", "confidence-chart--threshold",
        "confidence-chart--gain", "confidence-chart--loss", "confidence-chart--neutral",
        "confidence-chart--cursor",
    }

    DEFAULT_CSS = """
    ConfidenceChart { height: 1fr; min-height: 8; padding: 0 1; }
    ConfidenceChart > .confidence-chart--axis { color: $text-muted; }
    ConfidenceChart > .confidence-chart--line { color: $primary; }
    ConfidenceChart > .confidence-chart--threshold { color: $warning 70%; }
    ConfidenceChart > .confidence-chart--gain { color: $success; text-style: bold; }
    ConfidenceChart > .confidence-chart--loss { color: $error; text-style: bold; }
    ConfidenceChart > .confidence-chart--neutral { color: $accent; text-style: bold; }
    ConfidenceChart > .confidence-chart--cursor { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
    """

    class PointHighlighted(Message):
        def __init__(self, point: TimelinePoint | None) -> None:
            super().__init__()
            self.point = point

    def __init__(self, *, threshold: float = 0.3, **kwargs) -> None:
        super().__init__(**kwargs)
        self.threshold = threshold
        self.timeline: Timeline | None = None
        self.now = 0.0
        self.cursor = 0
        self._grid: list[list[tuple[str, str]]] | None = None  # rows of (character, component)
        self._columns: list[int] = []  # each point's column in the plot

    @property
    def points(self) -> tuple[TimelinePoint, ...]:
        return self.timeline.points if self.timeline else ()

    def show(self, timeline: Timeline | None, now: float) -> None:
        """Draw `timeline` up to `now`, the cursor on its latest event."""
        self.timeline, self.now = timeline, now
        self.cursor = max(0, len(self.points) - 1)
        self._invalidate()
        self.post_message(self.PointHighlighted(self.points[self.cursor] if self.points else None))

    def _invalidate(self) -> None:
        self._grid = None
        self.refresh()

    def on_resize(self) -> None:
        self._invalidate()

    # -- geometry --------------------------------------------------------------------------------

    def _plot_size(self) -> tuple[int, int]:
        width, height = self.content_region.size
        return max(10, width - AXIS_WIDTH), max(3, height - 2)

    def _span(self) -> tuple[float, float]:
        points = self.points
        start = points[0].at if points else self.now
        end = max(self.now, points[-1].at if points else self.now)
        # A short history is drawn over the last hour up to now: stretching the end past now
        # (a day from the first event, before) drew an axis into the future.
        return min(start, end - MIN_SPAN), end

    def _row(self, confidence: float, height: int) -> int:
        return round((1.0 - max(0.0, min(1.0, confidence))) * (height - 1))

    def _column(self, at: float, width: int) -> int:
        start, end = self._span()
        return round((at - start) / (end - start) * (width - 1))

    # -- drawing ---------------------------------------------------------------------------------

    def _draw(self) -> list[list[tuple[str, str]]]:
        width, height = self._plot_size()
        grid = [[(" ", "")] * width for _ in range(height)]
        threshold = self._row(self.threshold, height)
        for x in range(0, width, 2):
            grid[threshold][x] = ("╌", "threshold")
        points = self.points
        self._columns = [self._column(p.at, width) for p in points]
        rows = [self._row(p.confidence, height) for p in points]
        for i, (x, y) in enumerate(zip(self._columns, rows)):
            next_x = self._columns[i + 1] if i + 1 < len(points) else width
            for cx in range(x + 1, next_x):
                grid[y][cx] = ("─", "line")
            if i + 1 < len(points) and rows[i + 1] != y and next_x < width:
                self._step(grid, next_x, y, rows[i + 1])
        for x, y, point in zip(self._columns, rows, points):
            grid[y][x] = (point.mark, self._tone(point.kind))
        return grid

    @staticmethod
    def _step(grid, x: int, from_y: int, to_y: int) -> None:
        """The vertical part of a step at column `x`, from row `from_y` to `to_y`."""
        down = to_y > from_y
        grid[from_y][x] = ("╮" if down else "╯", "line")
        for y in range(min(from_y, to_y) + 1, max(from_y, to_y)):
            grid[y][x] = ("│", "line")
        grid[to_y][x] = ("╰" if down else "╭", "line")

    @staticmethod
    def _tone(kind: str) -> str:
        return "gain" if kind in GAINS else "loss" if kind in LOSSES else "neutral"

    def render_line(self, y: int) -> Strip:
        width = self.content_region.width
        if not self.points:
            return Strip([Segment(("  no events" if y == 0 else "").ljust(width), self.rich_style)])
        if self._grid is None:
            self._grid = self._draw()
        plot_width, height = self._plot_size()
        axis = self.get_component_rich_style("confidence-chart--axis")
        if y < height:
            return self._plot_row(y, height, axis).adjust_cell_length(width, self.rich_style)
        if y == height:
            ticks = self._ticks(plot_width)
            line = "".join("┬" if x in ticks else "─" for x in range(plot_width))
            segments = [Segment(" " * (AXIS_WIDTH - 1), self.rich_style), Segment("└" + line, axis)]
        elif y == height + 1:
            segments = self._dates(plot_width, axis)
        else:
            return Strip.blank(width, self.rich_style)
        return Strip(segments).adjust_cell_length(width, self.rich_style)

    def _plot_row(self, y: int, height: int, axis: Style) -> Strip:
        labels = {0: "1.00", height - 1: "0.00", self._row(0.5, height): "0.50",
                  self._row(self.threshold, height): f"{self.threshold:.2f}"}
        label = labels.get(y)
        segments = [Segment(f"{label} ┤", axis)] if label else [
            Segment(" " * (AXIS_WIDTH - 1), self.rich_style), Segment("│", axis)]
        cursor_x = self._columns[self.cursor] if self.points else -1
        cursor_y = self._row(self.points[self.cursor].confidence, height) if self.points else -1
        for x, (char, component) in enumerate(self._grid[y]):
            if x == cursor_x and y == cursor_y:
                style = self.get_component_rich_style("confidence-chart--cursor")
            elif component:
                style = self.get_component_rich_style(f"confidence-chart--{component}")
            else:
                style = self.rich_style
            segments.append(Segment(char, style))
        return Strip(segments).simplify()

    def _ticks(self, width: int) -> list[int]:
        step = max(12, width // 8)
        return list(range(0, width, step))

    def _dates(self, width: int, style: Style) -> list[Segment]:
        start, end = self._span()
        fmt = "%Y-%m" if end - start > 400 * DAY else "%m-%d" if end - start > 2 * DAY else "%H:%M"
        segments, position = [], 0
        for x in self._ticks(width):
            at = start + (end - start) * x / max(1, width - 1)
            label = datetime.fromtimestamp(at, tz=timezone.utc).strftime(fmt)
            if AXIS_WIDTH + x + len(label) > AXIS_WIDTH + width:
                break
            segments += [Segment(" " * (AXIS_WIDTH + x - position), self.rich_style), Segment(label, style)]
            position = AXIS_WIDTH + x + len(label)
        return segments

    # -- cursor ----------------------------------------------------------------------------------

    def _set_cursor(self, index: int) -> None:
        if not self.points:
            return
        index = max(0, min(len(self.points) - 1, index))
        if index != self.cursor:
            self.cursor = index
            self.refresh()
        self.post_message(self.PointHighlighted(self.points[index]))

    def action_move(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)

    def action_jump(self, index: int) -> None:
        self._set_cursor(index if index >= 0 else len(self.points) - 1)

    def _nearest(self, x: int) -> int | None:
        """The event drawn nearest to column `x` of the widget (within two cells), latest first."""
        if not self.points or self._grid is None:
            return None
        column = x - self.styles.padding.left - AXIS_WIDTH
        distance, index = min((abs(c - column), -i) for i, c in enumerate(self._columns))
        return -index if distance <= 2 else None

    def on_mouse_move(self, event) -> None:
        index = self._nearest(event.x)
        if index is not None and index != self.cursor:
            self._set_cursor(index)

    def on_click(self, event) -> None:
        self.focus()
        index = self._nearest(event.x)
        if index is not None:
            self._set_cursor(index)
