"""The main screen: title bar, search box and filter chips, the memory list, the detail pane.

The screen owns the `ListQuery` (filter, sort, search text); the list owns cursor and
selection. Listings and details load in workers that post typed messages back
(docs/development.md, "Workers").
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from store.api import paging, NotFound, Counts, Listing, ListQuery, Loaded, Memory, MemoryFilter
from tui.screens.base import StoreScreen
from tui.widgets.detail import DetailPane, MemoryDetail
from tui.widgets.filter_bar import FilterChips, SearchBox
from tui.widgets.footer import KeyFooter
from tui.widgets.memory_list import MemoryList
from tui.widgets.title_bar import TitleBar

# While the search text changes, the rest of a listing (its ids past the head, the counts) waits
# for typing to pause this long: read at every keystroke, it held back the next one's first rows.
TYPING_PAUSE = 0.15

SORT_ORDER = ("updated", "confidence", "used", "type", "title", "hat", "scope", "status", "created")

EMPTY_STORE = """\
No memories in this project yet.

  n              write one here
  memdeck add "Retry backoff must cap at 60 s" --type fix
  memdeck import .agent/memories.md
  memdeck demo   open a demo store with a few months of history

p switches project · ? shows every key"""

NOTHING_MATCHES = """\
No memory matches the search and filters.

  escape clears the search · x clears the filters"""


class MainScreen(StoreScreen):
    """Browse, search, filter and curate the memories of one project."""

    HELP_TITLE = "Memories"
    # No focus by default: the list takes it when it has rows (`on_main_screen_listing_loaded`).
    # Textual's default gave an empty store's screen to the search box, where `q` and `?` are
    # typed as text instead of quitting and helping.
    AUTO_FOCUS = ""

    BINDINGS = [
        Binding("slash", "focus_search", "Search", tooltip="Search titles, content and tags as you type"),
        Binding("f", "filters", "Filters", tooltip="Filter by type, hat, status, source, tags, confidence, stale"),
        Binding("x", "clear_filters", "Clear", show=False, tooltip="Clear the search and every filter"),
        Binding("e", "edit", "Edit", tooltip="Edit the memory under the cursor"),
        Binding("n", "new", "New", tooltip="Write a new memory"),
        Binding("b", "bulk", "Bulk…", tooltip="Bulk actions on the selection (or the memory under the cursor)"),
        Binding("d", "delete", "Delete", tooltip="Move the selection (or the cursor's memory) to the trash"),
        Binding("u", "undo", "Undo", tooltip="Undo the last bulk action or edit"),
        Binding("o", "sort(1)", "Sort", tooltip="Sort by the next column"),
        Binding("O", "sort(-1)", "Sort back", show=False, tooltip="Sort by the previous column"),
        Binding("v", "toggle_detail", "Detail", show=False, tooltip="Hide or show the detail pane"),
        Binding("a", "anchors", "Anchors", show=False,
                tooltip="What changed in its anchored code; re-anchor or mark it wrong"),
        Binding("L", "layer", "Layer", show=False,
                tooltip="Filter by layer: all, your own, the team store, the team file"),
        Binding("S", "share", "Share", show=False,
                tooltip="Copy the selection (or the cursor's memory) to the team store"),
    ]

    @dataclass
    class ListingLoaded(Message, bubble=False):
        loaded: Loaded

    @dataclass
    class DetailLoaded(Message, bubble=False):
        detail: MemoryDetail

    def __init__(self) -> None:
        super().__init__()
        self.query_state = ListQuery()
        self._goto: str | None = None
        self._counts: Counts | None = None
        self._from_top = False  # another project: its listing opens at the first row

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="search-row"):
            yield SearchBox(placeholder="/ search titles, content, tags", id="search")
            yield FilterChips(id="filters")
        with Horizontal(id="panes"):
            with Vertical(id="list-pane"):
                yield MemoryList(self.app.fetch_memories, self.app.now, id="memories")
                yield Static(id="empty")
            yield DetailPane(id="detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(TitleBar).now = self.app.now()
        self.set_focus(self.query_one(MemoryList))  # now: a listing shown meanwhile may hide it
        first, self.app.first_read = self.app.first_read, None
        if first is not None and first.done() and first.exception() is None:
            self.on_main_screen_listing_loaded(self.ListingLoaded(first.result()))  # in the first frame
        else:
            self.reload()
        # After the first screen of your own memories: the other layers, shown with them when
        # there are any (docs/team.md).
        self.call_after_refresh(self._open_layers)

    # -- loading ---------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the quick part, in bounded reads: the head of the listing (a search's first
        full-text hits) with the memories of its first screen. The rest follows once it is
        drawn (`_load_rest`), so the screen never waits for the slow part."""
        query, layer = self.query_state, self.app.layer
        # The counts once (the header's first numbers); after that, with the rest.
        with_counts = self._counts is None
        self._show_head(query, self.app.read_listing(lambda: layer.read_head(query, with_counts=with_counts)))

    # The listing's two workers are async workers awaiting a read on the listing thread, not
    # thread workers: the read starts at the keystroke (see `MemdeckApp.read_listing`), and the
    # next keystroke cancels an async worker at its await, so a stale answer is never posted.
    # They hand their answer back like every other worker: a typed message.
    @work(exclusive=True, group="listing")
    async def _show_head(self, query: ListQuery, reading: asyncio.Future) -> None:
        """A keystroke meanwhile cancels this worker: its answer is dropped."""
        self.post_message(self.ListingLoaded(await reading))
        if not query.searching:
            # What the first keystroke of a search reuses, read now on the listing thread.
            store = self.app.layer.store
            await self.app.read_listing(lambda: paging.warm(store, query))

    @work(exclusive=True, group="listing")
    async def _load_rest(self, first: Listing, pause: float) -> None:
        """The counts, and the whole listing whose head is shown, after `pause` seconds (a
        keystroke meanwhile cancels this worker)."""
        await asyncio.sleep(pause)
        layer = self.app.layer
        self.post_message(self.ListingLoaded(await asyncio.to_thread(self.app.db_call, layer.read_rest, first)))

    def on_main_screen_listing_loaded(self, message: ListingLoaded) -> None:
        listing = message.loaded.listing
        counts = message.loaded.counts or self._counts
        if listing.query != self.query_state or counts is None:
            return  # an older query's answer, or one read before the project changed
        self._counts = counts
        memories = self.query_one(MemoryList)
        typed = listing.query.text != memories.listing.query.text
        memories.set_listing(listing, keep_cursor=not typed and not self._from_top,
                             first_page=message.loaded.first_page)
        self._from_top = False
        if message.loaded.first_page is not None and (not listing.complete or message.loaded.counts is None):
            self.call_after_refresh(self._load_rest, listing, TYPING_PAUSE if typed else 0)
        if self._goto and memories.move_to(self._goto):
            self._goto = None
        self.query_one(TitleBar).counts = counts
        self.query_one(TitleBar).now = self.app.now()
        order = "relevance" if listing.query.searching else listing.query.sort
        memories.border_title = (f"Memories {len(listing)}{'+' if listing.more else ''} of {counts.total}"
                                 + self._layer_words())
        memories.border_subtitle = f"by {order}" + (f" · {len(memories.selected)} selected"
                                                     if memories.selected else "")
        empty = self.query_one("#empty", Static)
        empty.display = not listing.ids
        if not listing.ids:
            empty.update(Text(EMPTY_STORE if counts.total == 0 and not self._narrowed() else NOTHING_MATCHES))
            self.query_one(DetailPane).show(None)
        memories.display = bool(listing.ids)
        # Focus leaves a hidden list now, not at Textual's next layout pass (until then the
        # footer offered the list's keys), and comes back when it shows rows again.
        if not listing.ids and self.focused is memories:
            self.set_focus(None)
        elif listing.ids and self.focused is None:
            memories.focus()
        if listing.complete and message.loaded.counts is not None:
            self.app.started()

    def _narrowed(self) -> bool:
        return self.query_state.searching or self.query_state.filter != MemoryFilter() or self.app.layer.name != "all"

    def _layer_words(self) -> str:
        """What the list's title says of the layers: nothing with one store."""
        layer = self.app.layer
        if not layer.several and layer.name == "all":
            return ""
        if layer.name == "all":
            return " · all layers"
        return f" · {layer.name} layer" + (", read-only" if layer.read_only else "")

    @on(MemoryList.CursorMoved)
    def _cursor_moved(self, message: MemoryList.CursorMoved) -> None:
        # After the list is painted: showing the detail (Markdown, a new layout) first kept a
        # search keystroke's rows off the screen for 10-30 ms.
        if message.memory is not None:
            self.call_after_refresh(self._load_detail, message.memory)

    @on(MemoryList.SelectionChanged)
    def _selection_changed(self, message: MemoryList.SelectionChanged) -> None:
        memories = self.query_one(MemoryList)
        order = "relevance" if self.query_state.searching else self.query_state.sort
        memories.border_subtitle = f"by {order}" + (f" · {message.count} selected" if message.count else "")

    @work(thread=True, exclusive=True, group="detail")
    def _load_detail(self, memory: Memory) -> None:
        from store.api import anchors_of

        store = self.app.layer.store_of(memory.layer)

        def read() -> MemoryDetail:
            session = None
            if memory.session_id:
                try:
                    session = store.sessions.get(memory.session_id)
                except NotFound:  # a session id from an import that has no session row
                    session = None
            return MemoryDetail(memory, tuple(store.events(memory.id)), session,
                                tuple(anchors_of(store, memory.id)))

        detail = self.app.db_call(read)
        if not get_current_worker().is_cancelled:
            self.post_message(self.DetailLoaded(detail))

    def on_main_screen_detail_loaded(self, message: DetailLoaded) -> None:
        if message.detail.memory.id == self.query_one(MemoryList).cursor_id:  # the cursor has not moved on
            self.query_one(DetailPane).show(message.detail)

    # -- query changes -----------------------------------------------------------------------------

    def set_query(self, **changes) -> None:
        self.query_state = ListQuery(**{**self.query_state.__dict__, **changes})
        self.query_one(FilterChips).filter = self.query_state.filter
        self.reload()

    @on(SearchBox.Changed, "#search")
    def _search_changed(self, event: SearchBox.Changed) -> None:
        self.set_query(text=event.value)

    def go_to(self, memory_id: str) -> None:
        """Put the cursor on a memory, clearing the search and filters if they hide it."""
        if self.query_one(MemoryList).move_to(memory_id):
            return
        self._goto = memory_id
        self.query_one(SearchBox).value = ""
        self.set_query(filter=MemoryFilter(statuses=("active", "inactive", "pending")), text="")

    def project_changed(self) -> None:
        self._counts = None
        self._from_top = True
        self.query_one(MemoryList).selected.clear()
        self.query_one(SearchBox).value = ""
        self.set_query(filter=MemoryFilter(), text="")

    # -- actions -----------------------------------------------------------------------------------

    def action_focus_search(self) -> None:
        self.query_one(SearchBox).focus()

    def action_filters(self) -> None:
        from tui.screens.filters import FilterScreen

        self.app.push_screen(FilterScreen(self.query_state.filter, self.app.store.vocabulary),
                             lambda flt: flt is not None and self.set_query(filter=flt))

    def action_clear_filters(self) -> None:
        self.query_one(SearchBox).value = ""
        if self.app.layer.name != "all":  # the layer filter too: every layer again
            self._show_layer("all", reload=False)
        self.set_query(filter=MemoryFilter(), text="")

    def action_sort(self, step: int) -> None:
        current = SORT_ORDER.index(self.query_state.sort)
        self.set_query(sort=SORT_ORDER[(current + step) % len(SORT_ORDER)])

    def action_toggle_detail(self) -> None:
        self.toggle_class("-detail-hidden")

    def sort_by(self, sort: str) -> None:
        self.set_query(sort=sort)

    def _read_only(self, ids) -> bool:
        """Whether any of `ids` is shown from a layer other than your own (the team store, the
        team file): those are read here, not written; a one-line notice says so."""
        others = self.app.layer.not_own(ids)
        if others:
            layers = " and ".join(sorted(set(others.values())))
            what = "This memory is" if len(ids) == 1 else f"{len(others)} of the {len(ids)} chosen are"
            self.notify(f"{what} in the {layers} layer, read-only here: edit and share your own memories"
                        " (L filters the list by layer)", severity="warning")
        return bool(others)

    def action_layer(self) -> None:
        self._step_layer()

    @work(thread=True, exclusive=True, group="layer")
    def _step_layer(self) -> None:
        names, problems = self.app.db_call(self.app.layer.open)
        self.post_message(self.LayerStepped(names, problems))

    @work(thread=True, exclusive=True, group="layer")
    def _open_layers(self) -> None:
        names, problems = self.app.db_call(self.app.layer.open)
        self.post_message(self.LayersOpened(names, problems))

    @dataclass
    class LayerStepped(Message, bubble=False):
        names: tuple[str, ...]
        problems: list[tuple[str, str]]

    @dataclass
    class LayersOpened(Message, bubble=False):
        names: tuple[str, ...]
        problems: list[tuple[str, str]]

    def on_main_screen_layers_opened(self, message: LayersOpened) -> None:
        """The layers are open: with more than one, the list shows them all, each row marked
        (and the team store's changes are watched)."""
        self.app.watch_layers()
        for name, problem in message.problems:
            self.notify(f"The {name} layer is not read: {problem}", severity="warning", markup=False)
        if len(message.names) > 1:
            self._show_layer(self.app.layer.name)

    def on_main_screen_layer_stepped(self, message: LayerStepped) -> None:
        self.app.watch_layers()
        if len(message.names) == 1:
            for name, problem in message.problems:
                self.notify(f"The {name} layer is not read: {problem}", severity="warning", markup=False)
            self.notify("Only your own memories: no team store (team.db) or team file (team.file)",
                        severity="warning")
            return
        self._show_layer(self.app.layer.next(message.names))
        layer = self.app.layer
        self.notify("Showing every layer" if layer.name == "all" else
                    f"Showing the {layer.name} layer" + (" (read-only)" if layer.read_only else ""))

    def _show_layer(self, name: str, reload: bool = True) -> None:
        """List the layer `name` ("all": every layer) from the next reload on."""
        self.app.layer.name = name
        memories = self.query_one(MemoryList)
        memories.show_layers = self.app.layer.several
        memories.selected.clear()
        self.query_one(FilterChips).layer_filter = name if self.app.layer.several else "all"
        self._counts = None
        if reload:
            self.reload()

    def action_edit(self) -> None:
        memory = self.query_one(MemoryList).cursor_memory
        if memory is None:
            self.notify("No memory under the cursor", severity="warning")
            return
        if self._read_only([memory.id]):
            return
        self.app.edit_memory(memory, anchors=self._anchor_specs(memory))

    def _anchor_specs(self, memory: Memory) -> tuple[str, ...] | None:
        """The anchors of `memory` as the detail pane read them (None: not read yet)."""
        detail = self.query_one(DetailPane).detail
        if detail is None or detail.memory.id != memory.id:
            return None
        return tuple(a.spec for a in detail.anchors)

    def action_anchors(self) -> None:
        memory = self.query_one(MemoryList).cursor_memory
        if memory is None:
            self.notify("No memory under the cursor", severity="warning")
            return
        if self._read_only([memory.id]):
            return
        from tui.screens.anchors import AnchorScreen

        self.app.push_screen(AnchorScreen(memory))

    def action_new(self) -> None:
        self.app.edit_memory(None)

    def action_share(self) -> None:
        ids = self.query_one(MemoryList).chosen_ids()
        if ids and not self._read_only(ids):
            self.app.share(ids)

    def action_delete(self) -> None:
        ids = self.query_one(MemoryList).chosen_ids()
        if ids and not self._read_only(ids):
            self.app.bulk("delete", ids)
            self.query_one(MemoryList).selected.clear()

    def action_undo(self) -> None:
        self.app.undo()

    def action_bulk(self) -> None:
        ids = self.query_one(MemoryList).chosen_ids()
        if not ids:
            self.notify("Nothing to act on", severity="warning")
            return
        if self._read_only(ids):
            return
        from tui.screens.bulk import BulkScreen

        self.app.push_screen(BulkScreen(ids, self.app.store.vocabulary))
