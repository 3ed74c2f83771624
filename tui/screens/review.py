"""What the inbox and the trash share: a table of memories to act on, one by one or as a
selection, beside (or, on a small terminal, under) the review pane, which follows the cursor."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Container
from textual.message import Message
from textual.widgets import DataTable, Static

from store.api import Counts, Memory
from tui.requests import Requests
from tui.screens.base import StoreScreen
from tui.widgets.footer import KeyFooter
from tui.widgets.memory_table import MemoryTable
from tui.widgets.review_pane import ReviewDetail, ReviewPane
from tui.widgets.title_bar import TitleBar

# Below this many columns the pane goes under the table: beside it, neither would be readable.
SIDE_BY_SIDE = 140


class ReviewScreen(StoreScreen):
    DEFAULT_CSS = """
    ReviewScreen #review-panes { layout: horizontal; height: 1fr; }
    ReviewScreen #review-panes MemoryTable { width: 1fr; height: 1fr; }
    ReviewScreen #review-panes ReviewPane { width: 58; height: 1fr; }
    ReviewScreen.-stacked #review-panes { layout: vertical; }
    ReviewScreen.-stacked #review-panes MemoryTable { width: 1fr; height: 2fr; min-height: 7; }
    ReviewScreen.-stacked #review-panes ReviewPane { width: 1fr; height: 3fr; }
    ReviewPane { border: round $border-blurred; border-title-color: $text-muted; }
    """

    table_id = "review"

    @dataclass
    class Listed(Message, bubble=False):
        """The screen's memories (the inbox's candidates, the trash's deleted) and the counts."""

        asked: int
        memories: list[Memory]
        counts: Counts

    @dataclass
    class DetailLoaded(Message, bubble=False):
        detail: ReviewDetail

    def __init__(self) -> None:
        super().__init__()
        self._listings = Requests()

    def reload(self) -> None:
        self._list(self._listings.new())

    @work(thread=True, exclusive=True, group="review-list")
    def _list(self, asked: int) -> None:
        from store.api import paging

        store = self.app.store
        memories, counts = self.app.db_call(lambda: (self.memories_of(store), paging.counts(store)))
        self.post_message(self.Listed(asked, memories, counts))

    def memories_of(self, store) -> list[Memory]:
        """What the table lists (read on the worker's thread)."""
        raise NotImplementedError

    def on_review_screen_listed(self, message: Listed) -> None:
        if not self._listings.is_latest(message.asked):
            return  # read before a newer reload (a write meanwhile): a newer answer follows
        self.query_one(TitleBar).counts = message.counts
        self.query_one(TitleBar).now = self.app.now()
        self.query_one("#screen-heading", Static).update(self.heading(message.memories))
        self.show_memories(message.memories)

    def heading(self, memories: list[Memory]) -> str:
        """The line above the table, for these memories."""
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="screen-heading", classes="screen--heading")
        with Container(id="review-panes"):
            yield MemoryTable(self.app.now, id=self.table_id)
            yield ReviewPane()
        yield KeyFooter()

    def on_mount(self) -> None:
        self._fit(self.size.width)
        self.query_one(MemoryTable).focus()
        self.reload()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.set_class(width < SIDE_BY_SIDE, "-stacked")

    def show_memories(self, memories: list[Memory]) -> None:
        """Fill the table (keeping the cursor's memory) and the pane for the cursor's row."""
        table = self.query_one(MemoryTable)
        table.show(memories)
        self._load_detail(table.cursor_memory())

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._load_detail(self.query_one(MemoryTable).cursor_memory())

    def _load_detail(self, memory: Memory | None) -> None:
        if memory is None:
            self.query_one(ReviewPane).show(None)
        else:
            self._read_detail(memory)

    @work(thread=True, exclusive=True, group="review-detail")
    def _read_detail(self, memory: Memory) -> None:
        from store.api import NotFound, resembling

        store = self.app.store

        def load() -> ReviewDetail:
            session = None
            if memory.session_id:
                try:
                    session = store.sessions.get(memory.session_id)
                except NotFound:  # a session id recorded on import, whose log is elsewhere
                    pass
            return ReviewDetail(memory, session, tuple(resembling(store, memory)))

        self.post_message(self.DetailLoaded(self.app.db_call(load)))

    def on_review_screen_detail_loaded(self, message: DetailLoaded) -> None:
        current = self.query_one(MemoryTable).cursor_memory()
        if current is not None and current.id == message.detail.memory.id:  # the cursor has not moved on
            self.query_one(ReviewPane).show(message.detail)

    def shown_detail(self) -> ReviewDetail | None:
        return self.query_one(ReviewPane).detail
