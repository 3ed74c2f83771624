"""A small table of memories with a selection, for the trash and the inbox. These lists are
short (a project's trash, its pending candidates), so Textual's `DataTable` suits them; the
main list is virtual instead."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

from store.api import Memory
from tui.text import age, one_line
from tui.widgets.fitted_table import Column, FittedTable

# More rows than this are not drawn: curate the rest from the main list with a status filter.
MAX_ROWS = 2000


class MemoryTable(FittedTable):
    HELP_TITLE = "List"

    # Narrow, the source goes first, then the hat, the type, the age; never the title.
    COLUMNS = (
        Column("mark", " ", 1), Column("type", "type", 12, drop=3), Column("title", "title", 36, grow=True),
        Column("conf", "conf", 4), Column("hat", "hat", 8, drop=2), Column("source", "source", 9, drop=1),
        Column("when", "when", 4, drop=4),
    )

    BINDINGS = [
        Binding("space", "toggle", "Select"),
        Binding("ctrl+a", "select_all", "Select all", show=False),
    ]

    def __init__(self, now, **kwargs) -> None:
        super().__init__(**kwargs)
        self._now = now
        self.memories: list[Memory] = []
        self.selected: set[str] = set()

    def show(self, memories: list[Memory]) -> None:
        self.memories = memories[:MAX_ROWS]
        self.selected &= {m.id for m in self.memories}
        self.set_rows([(memory.id, self._cells(memory)) for memory in self.memories])

    def _cells(self, memory: Memory) -> dict:
        return {"mark": self._mark_cell(memory.id), "type": memory.type,
                "title": Text(one_line(memory.title), no_wrap=True, overflow="ellipsis"),
                "conf": f"{memory.confidence:.2f}", "hat": memory.hat or "-", "source": memory.source,
                "when": age(memory.updated_at, self._now())}

    def _mark_cell(self, memory_id: str) -> Text:
        return Text("●" if memory_id in self.selected else " ", style="bold")

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
        self.update_row(memory_id, {**self._row_cells[memory_id], "mark": self._mark_cell(memory_id)})

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
