"""The memory list: a virtual table over a `Listing` of ids (Textual's Line API, as toolong's
`LogLines`). Its `virtual_size` is the row count; `render_line` reads rows from a page cache
filled by a thread worker, so 100,000 memories open and scroll as fast as 30.

The cursor and the selection are kept by memory id, so they survive a new listing (a refresh,
another sort, a write by another process) as long as the memory is still shown. Moving the cursor
is `CursorList`'s, under one header line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip

from store.api import PAGE_SIZE, Listing, ListQuery, Memory
from tui.text import age, bar, plain
from tui.widgets.cursor_list import CursorList, cursor_bindings

# (name, header, width; 0 = takes the remaining width), dropped from the right end of
# `OPTIONAL` first when the pane is narrow.
COLUMNS = (
    ("mark", "", 2), ("layer", "layer", 6), ("type", "type", 12), ("title", "title", 0), ("confidence", "conf", 10),
    ("hat", "hat", 9), ("scope", "scope", 9), ("tags", "tags", 14), ("used", "used", 5),
    ("updated", "upd", 5), ("status", "status", 9),
)
OPTIONAL = ("tags", "scope", "used", "status", "updated", "hat")
MIN_TITLE = 34
# The layer column shows only while the list shows more than one layer (`show_layers`).
LAYER_MARKS = {"own": "own", "team": "team", "file": "file"}
# Columns left out while every row read so far has nothing in them (a Ralph import has no hat,
# scope, tags or uses): their width goes to the title.
HIDE_EMPTY = {"hat": "hat", "scope": "scope", "tags": "tags", "used": "use_count"}
# On a wide terminal a title past this width is mostly blank: the tags take the rest, up to
# `MAX_TAGS`.
ROOMY_TITLE = 90
MAX_TAGS = 40


@dataclass(frozen=True)
class _Page:
    generation: int
    number: int
    rows: list[Memory]


class MemoryList(CursorList, can_focus=True):
    """Rows of memories with a cursor (`▸`) and a selection (`●`)."""

    HELP_TITLE = "Memory list"
    HEADER_ROWS = 1  # the column names

    BINDINGS = [
        *cursor_bindings(Binding("G,end", "jump(-1)", "Last", show=False)),
        Binding("space", "toggle", "Select", tooltip="Select or unselect the memory under the cursor"),
        Binding("shift+down,J", "extend(1)", "Extend down", show=False),
        Binding("shift+up,K", "extend(-1)", "Extend up", show=False),
        Binding("ctrl+a", "select_all", "Select all shown", show=False),
        Binding("escape", "clear_selection", "Clear selection", show=False),
    ]

    COMPONENT_CLASSES = {
        "memory-list--header", "memory-list--cursor", "memory-list--selected", "memory-list--match",
        "memory-list--dim", "memory-list--bar", "memory-list--stale", "memory-list--layer",
    }

    DEFAULT_CSS = """
    MemoryList { background: $surface; overflow-x: hidden; }
    MemoryList > .memory-list--header { text-style: bold; color: $text-muted; }
    MemoryList > .memory-list--cursor { background: $boost; text-style: bold; }
    MemoryList:focus > .memory-list--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    MemoryList > .memory-list--selected { color: $accent; }
    MemoryList > .memory-list--match { text-style: bold underline; color: $warning; }
    MemoryList > .memory-list--dim { color: $text-muted; }
    MemoryList > .memory-list--bar { color: $success; }
    MemoryList > .memory-list--stale { color: $warning; text-style: bold; }
    MemoryList > .memory-list--layer { color: $secondary; text-style: bold; }
    """

    class CursorMoved(Message):
        """The cursor rests on another memory (None: the list is empty)."""

        def __init__(self, memory: Memory | None) -> None:
            super().__init__()
            self.memory = memory

    @dataclass
    class PageLoaded(Message, bubble=False):
        """A page of rows arrived from the worker."""

        page: _Page

    class SelectionChanged(Message):
        def __init__(self, count: int) -> None:
            super().__init__()
            self.count = count

    def __init__(self, fetch: Callable[[Sequence[str]], list[Memory]], now: Callable[[], float],
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self._fetch = fetch  # ids -> memories; runs in a worker thread
        self._now = now
        self.listing = Listing(ListQuery(), ())
        self._pages: dict[int, list[Memory]] = {}
        self._loading: set[int] = set()
        self._generation = 0
        self.selected: set[str] = set()
        self._anchor: int | None = None
        self._announced: str | None = None
        self._drawing: tuple[int, list[tuple[str, str, int]], Style] | None = None
        self._filled: set[str] | None = None  # the HIDE_EMPTY columns some loaded row fills
        # More than one layer is configured (docs/team.md): each row says its layer.
        self.show_layers = False

    # -- state from the screen -------------------------------------------------------------------

    def set_listing(self, listing: Listing, *, keep_cursor: bool = True,
                    first_page: Sequence[Memory] | None = None) -> None:
        """Show a new listing, keeping the selection of the memories still shown, and the cursor
        on the same memory (or, with `keep_cursor` False, on the first row: a new search).
        `first_page` holds the memories of its first `PAGE_SIZE` ids when they were read with
        it: the list is drawn at once, without waiting for a page worker."""
        current = self.cursor_id if keep_cursor else None
        if not keep_cursor:
            self.cursor = 0
        old = self.listing
        # More of the listing already shown (the whole of a head, fuzzy matches after the
        # full-text hits): the loaded pages are still right.
        grown = (first_page is None and listing.query == old.query
                 and listing.ids[:len(old.ids)] == old.ids)
        self.listing = listing
        if not grown:
            self._generation += 1
            self._pages.clear()
            self._loading.clear()
            self._filled = None
            if first_page is not None:
                self._pages[0] = self._aligned(listing.ids[:PAGE_SIZE], first_page)
                self._fill(self._pages[0])
        if self.selected:
            self.selected.intersection_update(listing.ids)
        position = self._position(current)
        self.cursor = position if position is not None else min(self.cursor, max(0, len(listing) - 1))
        self._resized()
        self._scroll_cursor_into_view()
        self.refresh()
        self.post_message(self.SelectionChanged(len(self.selected)))
        self._announce()

    @property
    def row_count(self) -> int:
        return len(self.listing)

    @property
    def cursor_id(self) -> str | None:
        ids = self.listing.ids
        return ids[self.cursor] if 0 <= self.cursor < len(ids) else None

    @property
    def cursor_memory(self) -> Memory | None:
        return self._row(self.cursor) if self.cursor_id else None

    @property
    def rows_ready(self) -> bool:
        """Whether every row in view is loaded (drawn, not `…`)."""
        top = self.scroll_offset.y
        end = min(len(self.listing.ids), top + self.visible_rows)
        return all(self._loaded(index) for index in {top, end - 1} if index < end)

    def _loaded(self, index: int) -> bool:
        page = self._pages.get(index // PAGE_SIZE)
        return page is not None and index % PAGE_SIZE < len(page)

    def chosen_ids(self) -> list[str]:
        """What an action applies to: the selection in list order, else the memory under the cursor."""
        if self.selected:
            return [i for i in self.listing.ids if i in self.selected]
        return [self.cursor_id] if self.cursor_id else []

    def move_to(self, memory_id: str) -> bool:
        position = self._position(memory_id)
        if position is None:
            return False
        self._set_cursor(position)
        return True

    def _position(self, memory_id: str | None) -> int | None:
        # A scan, not a dict: 100,000 ids are searched in about a millisecond, and a listing
        # arrives at every keystroke of a search.
        try:
            return self.listing.ids.index(memory_id) if memory_id is not None else None
        except ValueError:
            return None

    # -- rows and pages ------------------------------------------------------------------------

    def _row(self, index: int) -> Memory | None:
        if index >= len(self.listing.ids):
            return None  # beyond the head of a listing still being read
        number, offset = divmod(index, PAGE_SIZE)
        page = self._pages.get(number)
        # A page read while the listing was shorter (its head, before fuzzy matches) is read
        # again for the rows it lacks; the rows it has are drawn meanwhile.
        if page is None or offset >= len(page):
            if number not in self._loading:
                self._loading.add(number)
                ids = self.listing.ids[number * PAGE_SIZE:(number + 1) * PAGE_SIZE]
                self._load_page(self._generation, number, ids)
            return None
        return page[offset]

    @work(thread=True, group="memory-pages")
    def _load_page(self, generation: int, number: int, ids: Sequence[str]) -> None:
        self.post_message(self.PageLoaded(_Page(generation, number, self._aligned(ids, self._fetch(ids)))))

    @staticmethod
    def _aligned(ids: Sequence[str], rows: Sequence[Memory]) -> list[Memory | None]:
        """`rows` in the places of `ids` (None for a memory deleted since the listing)."""
        if len(rows) == len(ids):
            return list(rows)
        by_id = {m.id: m for m in rows}
        return [by_id.get(i) for i in ids]

    def on_memory_list_page_loaded(self, message: PageLoaded) -> None:
        page = message.page
        if page.generation != self._generation:
            return
        self._pages[page.number] = page.rows
        self._loading.discard(page.number)
        self._fill(page.rows)
        self.refresh()
        self._announce()

    # -- drawing --------------------------------------------------------------------------------

    def _fill(self, rows: Sequence[Memory | None]) -> None:
        filled = self._filled if self._filled is not None else set()
        for name, field in HIDE_EMPTY.items():
            if name not in filled and any(getattr(m, field) for m in rows if m is not None):
                filled.add(name)
        self._filled = filled if self._filled is not None or any(rows) else None

    def _layout(self, width: int) -> list[tuple[str, str, int]]:
        columns = [c for c in COLUMNS if (self._filled is None or c[0] not in HIDE_EMPTY or c[0] in self._filled)
                   and (c[0] != "layer" or self.show_layers)]
        fixed = sum(w for _, _, w in columns)
        for name in OPTIONAL:
            if width - fixed >= MIN_TITLE:
                break
            columns = [c for c in columns if c[0] != name]
            fixed = sum(w for _, _, w in columns)
        title = max(8, width - fixed)
        spare = min(title - ROOMY_TITLE, MAX_TAGS - 14) if any(n == "tags" for n, _, _ in columns) else 0
        if spare > 0:
            title -= spare
            columns = [(n, h, w + spare if n == "tags" else w) for n, h, w in columns]
        return [(n, h, w or title) for n, h, w in columns]

    def render_lines(self, crop: Region) -> list[Strip]:
        # Read once per drawing, not once per line: the base style alone took 0.1 ms a line.
        self._drawing = self._measure()
        return super().render_lines(crop)

    def _measure(self) -> tuple[int, list[tuple[str, str, int]], Style]:
        width = self.scrollable_content_region.width
        return width, self._layout(width), self.rich_style

    def render_line(self, y: int) -> Strip:
        width, layout, base = self._drawing or self._measure()
        if y == 0:
            style = self.get_component_rich_style("memory-list--header")
            header = Text.assemble(*((h.ljust(w)[:w], style) for _, h, w in layout))
            return self._strip(header, width, base)
        index = self._row_index(y)
        if index >= len(self.listing):
            return Strip.blank(width, base)
        memory = self._row(index)
        selected = index < len(self.listing.ids) and self.listing.ids[index] in self.selected
        if index == self.cursor:
            base = base + self.get_component_rich_style("memory-list--cursor")
        return Strip(self._row_segments(memory, layout, selected, base)).adjust_cell_length(width, base)

    def _strip(self, text: Text, width: int, base: Style) -> Strip:
        segments = list(text.render(self.app.console))
        return Strip(segments).adjust_cell_length(width, base).apply_style(base)

    def _row_segments(self, memory: Memory | None, layout, selected: bool, base: Style) -> list[Segment]:
        """A row's cells, each cut (with `…`) or padded to its column, over `base`. Every paint
        draws every row in view: a cell without spans of its own style skips Rich's `Text`
        rendering (that made a row cost 0.2 ms, a search keystroke's paint 8 ms)."""
        dim = self.get_component_rich_style("memory-list--dim")
        if memory is None:
            return [Segment("  …", base + dim)]
        console = self.app.console
        segments: list[Segment] = []
        for name, _, width in layout:
            cell = self._cell(name, memory, selected, dim)  # a new Text each: no copy
            if cell.spans:
                cell.truncate(width - 1, overflow="ellipsis")
                cell.pad_right(width - cell.cell_len)
                segments += [Segment(part.text, base + part.style if part.style else base)
                             for part in cell.render(console)]
                continue
            text = cell.plain
            if cell_len(text) > width - 1:
                text = set_cell_size(text, width - 2) + "…"
            style = console.get_style(cell.style) if isinstance(cell.style, str) else cell.style
            segments.append(Segment(set_cell_size(text, width), base + style if style else base))
        return segments

    def _cell(self, name: str, memory: Memory, selected: bool, dim: Style) -> Text:
        if name == "mark":
            return Text("●" if selected else " ", style=self.get_component_rich_style("memory-list--selected"))
        if name == "layer":
            return Text(LAYER_MARKS.get(memory.layer, memory.layer),
                        style=dim if memory.layer == "own" else self.get_component_rich_style("memory-list--layer"))
        if name == "type":
            return Text(memory.type)
        if name == "title":
            title = plain(memory.title, style="" if memory.status == "active" else dim)
            if self.listing.words:
                title.highlight_words(self.listing.words, self.get_component_rich_style("memory-list--match"),
                                      case_sensitive=False)
            if memory.stale:  # the code it is anchored to changed or went missing
                return Text.assemble(("⚠ ", self.get_component_rich_style("memory-list--stale")), title)
            return title
        if name == "confidence":
            return Text.assemble(f"{memory.confidence:.2f} ",
                                 (bar(memory.confidence), self.get_component_rich_style("memory-list--bar")))
        if name == "hat":
            return plain(memory.hat or "-", style=dim if not memory.hat else "")
        if name == "scope":
            return plain(memory.scope or "-")
        if name == "tags":
            return plain(",".join(memory.tags), style=dim)
        if name == "used":
            return Text(f"{memory.use_count}×".rjust(4) if memory.use_count else "   -", style=dim)
        if name == "updated":
            return Text(age(memory.updated_at, self._now()), style=dim)
        if name == "status":
            status = memory.status + (" ◆" if memory.protected else "")
            return Text(status, style="" if memory.status in ("active", "pending") else dim)
        return Text("")

    # -- cursor and selection ---------------------------------------------------------------------

    def _announce(self) -> None:
        """Tell the screen where the cursor is, once per change, when the row is loaded."""
        memory = self.cursor_memory
        key = f"{self._generation}:{memory.id}:{memory.updated_at}" if memory else None
        if memory is None and self.cursor_id is not None:
            return  # its page is on its way; `on_memory_list_page_loaded` announces it
        if key != self._announced:
            self._announced = key
            self.post_message(self.CursorMoved(memory))

    def action_cursor(self, delta: int) -> None:
        self._anchor = None  # a plain move ends a shift-extended selection
        super().action_cursor(delta)

    def action_jump(self, index: int) -> None:
        self._anchor = None
        super().action_jump(index)

    def action_toggle(self) -> None:
        memory_id = self.cursor_id
        if memory_id is None:
            return
        self.selected ^= {memory_id}
        self._selection_changed()
        self._set_cursor(self.cursor + 1)

    def action_extend(self, delta: int) -> None:
        if self.cursor_id is None:
            return
        if self._anchor is None:
            self._anchor = self.cursor
        self._set_cursor(self.cursor + delta)
        low, high = sorted((self._anchor, self.cursor))
        self.selected |= set(self.listing.ids[low:high + 1])
        self._selection_changed()

    def action_select_all(self) -> None:
        self.selected = set(self.listing.ids)
        self._selection_changed()

    def action_clear_selection(self) -> None:
        self.selected.clear()
        self._anchor = None
        self._selection_changed()

    def _selection_changed(self) -> None:
        self.refresh()
        self.post_message(self.SelectionChanged(len(self.selected)))

    def on_resize(self) -> None:
        self._resized()
