"""What memdeck's virtual lists share (Textual's Line API: `MemoryList`, a session's
`ActivityLog`): a cursor row kept inside the list and in view, moved by keys, pages and clicks,
under `HEADER_ROWS` lines that do not scroll. Each list draws its own rows, says what `G`/`end`
does, and tells its screen where the cursor is (`_announce`)."""

from __future__ import annotations

from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView


def cursor_bindings(last: Binding) -> list[Binding]:
    """The keys that move a list's cursor; `last` is what `G`/`end` does in that list. Each list
    declares them in its own `BINDINGS`, so the help screen and docs/keys.md list them under it."""
    return [
        Binding("j,down", "cursor(1)", "Down", show=False),
        Binding("k,up", "cursor(-1)", "Up", show=False),
        Binding("g,home", "jump(0)", "First", show=False),
        last,
        Binding("pagedown,ctrl+f", "page(1)", "Page down", show=False),
        Binding("pageup,ctrl+b", "page(-1)", "Page up", show=False),
    ]


class CursorList(ScrollView, can_focus=True):
    """A list of `row_count` rows with a cursor on one of them (`cursor`, from 0)."""

    HEADER_ROWS = 0  # lines drawn above the rows that stay when the rows scroll (a column header)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cursor = 0

    @property
    def row_count(self) -> int:
        raise NotImplementedError

    @property
    def visible_rows(self) -> int:
        """How many rows the view shows at once (at least one)."""
        return max(1, self.scrollable_content_region.height - self.HEADER_ROWS)

    def _row_index(self, y: int) -> int:
        """The row drawn on line `y` of the view (below the header)."""
        return self.scroll_offset.y + y - self.HEADER_ROWS

    def _resized(self) -> None:
        """The scrollable size follows the number of rows."""
        self.virtual_size = Size(self.size.width, self.row_count + self.HEADER_ROWS)

    # -- the cursor ---------------------------------------------------------------------------

    def _set_cursor(self, index: int) -> None:
        """Put the cursor on row `index` (the first or last row past the ends), in view."""
        count = self.row_count
        if not count:
            return
        self.cursor = max(0, min(count - 1, index))
        self._cursor_set()
        self._scroll_cursor_into_view()
        self.refresh()
        self._announce()

    def _cursor_set(self) -> None:
        """Called with the cursor on its new row, before it is scrolled into view."""

    def _announce(self) -> None:
        """Tell the screen where the cursor is."""

    def _scroll_cursor_into_view(self) -> None:
        visible = self.visible_rows
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)

    def action_jump(self, index: int) -> None:
        """To row `index`; -1 is the last row."""
        self._set_cursor(index if index >= 0 else self.row_count - 1)

    def action_page(self, direction: int) -> None:
        """A page down (1) or up (-1): one row fewer than the view shows, so one stays in sight."""
        self._set_cursor(self.cursor + direction * max(1, self.visible_rows - 1))

    def on_click(self, event) -> None:
        """A click on a row puts the cursor there; one on the header or the border does nothing.
        (The event's `y` counts from the widget's edge, its border included: the line is the
        offset in the content.)"""
        offset = event.get_content_offset(self)
        if offset is None or offset.y < self.HEADER_ROWS:
            return
        row = self._row_index(offset.y)
        if 0 <= row < self.row_count:
            self._set_cursor(row)
