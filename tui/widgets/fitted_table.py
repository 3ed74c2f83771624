"""A `DataTable` whose columns fit its width: the least useful columns go first when it is
narrow, one column (the title, the task) takes what is left, and nothing is cut at the right
edge. With two growing columns (the preview's title and reason), the first takes what is left
up to its most, the next the rest. The trash, the inbox, the session list and the preview's "why" table are such tables.

Rows are kept as cells by column key, so the table can be rebuilt with other columns when
its width changes; these tables hold at most a few thousand rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from textual.binding import Binding
from textual.widgets import DataTable


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int  # the least it needs; the growing column takes more when there is room
    drop: int = 0  # 0: always shown; otherwise 1 is dropped first, then 2, ...
    grow: bool = False
    max_width: int = 0  # the most a growing column takes (0: no limit)


def fit(columns: Sequence[Column], width: int, padding: int = 1) -> list[tuple[Column, int]]:
    """The columns shown in `width` cells, each with its width: drop the optional columns in
    `drop` order until the rest fit, then give the growing column what is left."""
    shown = list(columns)

    def needed(cols: Sequence[Column]) -> int:
        return sum(c.width + 2 * padding for c in cols)

    for column in sorted((c for c in columns if c.drop), key=lambda c: c.drop):
        if needed(shown) <= width:
            break
        shown.remove(column)
    spare = max(0, width - needed(shown))
    fitted = []
    for column in shown:
        extra = 0
        if column.grow:
            extra = spare if not column.max_width else min(spare, max(0, column.max_width - column.width))
            spare -= extra
        fitted.append((column, column.width + extra))
    return fitted


class FittedTable(DataTable):
    """Subclasses set `COLUMNS`; rows are given as `{column key: cell}` through `set_rows` and
    `update_row`."""

    COLUMNS: tuple[Column, ...] = ()
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "First", show=False),
        Binding("G", "scroll_bottom", "Last", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", False)
        super().__init__(**kwargs)
        self._row_cells: dict[str, Mapping[str, Any]] = {}
        self._fitted: list[tuple[Column, int]] = []

    def _fit(self) -> list[tuple[Column, int]]:
        # The vertical scrollbar's width is kept free, so a longer list does not cut a column.
        width = self.size.width - self.styles.scrollbar_size_vertical
        return fit(self.COLUMNS, width, self.cell_padding)

    def set_rows(self, rows: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Show these rows (key, cells), keeping the cursor on the same row key when it stays."""
        current = self._cursor_key()
        self._row_cells = dict(rows)
        self._rebuild(current)

    def update_row(self, key: str, cells: Mapping[str, Any]) -> None:
        self._row_cells[key] = cells
        for column, _ in self._fitted:
            self.update_cell(key, column.key, cells.get(column.key, ""))

    def _cursor_key(self) -> str | None:
        if not self.row_count or self.cursor_row >= self.row_count:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def _rebuild(self, cursor_key: str | None) -> None:
        fitted = self._fit()
        if fitted != self._fitted:
            self._fitted = fitted
            self.clear(columns=True)
            for column, width in fitted:
                self.add_column(column.label, key=column.key, width=width)
        else:
            self.clear()
        for key, cells in self._row_cells.items():
            self.add_row(*(cells.get(column.key, "") for column, _ in fitted), key=key)
        if cursor_key in self._row_cells:
            self.move_cursor(row=self.get_row_index(cursor_key), animate=False)

    def on_resize(self) -> None:
        if self._fit() != self._fitted:
            self._rebuild(self._cursor_key())
