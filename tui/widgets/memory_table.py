"""A small table of memories with a selection, for the trash and the inbox. These lists are
short (a project's trash, its pending candidates), so Textual's `DataTable` suits them; the
main list is virtual instead."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from store.records import Memory
from tui.text import age, one_line

# More rows than this are not drawn: curate the rest from the main list with a status filter.
MAX_ROWS = 2000
COLUMNS = (("type", 12), ("title", 50), ("conf", 5), ("hat", 8), ("source", 9), ("when", 5))
TITLE_MIN, TITLE_MAX = 20, 90


class MemoryTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "First", show=False),
        Binding("G", "scroll_bottom", "Last", show=False),
        Binding("space", "toggle", "Select"),
        Binding("ctrl+a", "select_all", "Select all", show=False),
    ]

    def __init__(self, now, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self._now = now
        self.memories: list[Memory] = []
        self.selected: set[str] = set()

    def on_mount(self) -> None:
        self.add_column(" ", key="mark", width=1)
        for label, width in COLUMNS:
            self.add_column(label, key=label, width=width)

    def on_resize(self) -> None:
        """The title takes the width the other columns leave (within bounds), so a small
        terminal shows every column without scrolling sideways."""
        others = 1 + sum(width for label, width in COLUMNS if label != "title")
        padding = 2 * self.cell_padding * (len(COLUMNS) + 1) + 2  # and the vertical scrollbar
        width = max(TITLE_MIN, min(TITLE_MAX, self.size.width - others - padding))
        column = self.columns.get("title")
        if column is not None and column.width != width:
            column.width = width
            self.refresh(layout=True)

    def show(self, memories: list[Memory]) -> None:
        current = self.chosen_ids()[:1] if self.memories else []
        self.memories = memories[:MAX_ROWS]
        self.selected &= {m.id for m in self.memories}
        self.clear()
        for memory in self.memories:
            self.add_row(*self._cells(memory), key=memory.id)
        if current and current[0] in {m.id for m in self.memories}:
            self.move_cursor(row=self.get_row_index(current[0]))

    def _cells(self, memory: Memory) -> list:
        return [Text("●" if memory.id in self.selected else " ", style="bold"), memory.type,
                Text(one_line(memory.title)), f"{memory.confidence:.2f}", memory.hat or "-",
                memory.source, age(memory.updated_at, self._now())]

    def cursor_memory(self) -> Memory | None:
        if not self.memories or self.cursor_row >= len(self.memories):
            return None
        return self.memories[self.cursor_row]

    def chosen_ids(self) -> list[str]:
        """The selection in table order, else the row under the cursor."""
        if self.selected:
            return [m.id for m in self.memories if m.id in self.selected]
        memory = self.cursor_memory()
        return [memory.id] if memory else []

    def _mark(self, memory_id: str) -> None:
        self.update_cell(memory_id, "mark", Text("●" if memory_id in self.selected else " ", style="bold"))

    def action_toggle(self) -> None:
        memory = self.cursor_memory()
        if memory is None:
            return
        self.selected ^= {memory.id}
        self._mark(memory.id)
        self.action_cursor_down()

    def action_select_all(self) -> None:
        self.selected = {m.id for m in self.memories}
        for memory in self.memories:
            self._mark(memory.id)
