"""A listing longer than a page: its head (first rows and size) is drawn first and the whole
follows; a search's head is the start of its whole listing; the workbench opens on the first
screen read while Textual is imported. On a real store of 2,500 memories, more than
`search.BROAD_MATCHES` match a word of every title."""

from __future__ import annotations

import shutil
from concurrent.futures import Future
from pathlib import Path

import pytest
from ui_support import pilot_test

from store import Config, FrozenClock, Store
from store.demo import build_large
from store.browse.paging import HEAD_ROWS, PAGE_SIZE, Listing, ListQuery, Loaded, head, listing, read_head
from store.browse.search import BROAD_MATCHES, MemoryFilter
from tui.app import MemdeckApp
from tui.cli.ui import read_first_screen
from tui.testing import DEMO_NOW, SIZE, settle
from tui.widgets.memory_list import MemoryList

pytestmark = pytest.mark.slow  # a listing of thousands of memories

COUNT = 2500


@pytest.fixture(scope="module")
def large_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("large") / "large.db"
    with Store.open(path, project="demo", config=Config.defaults(), clock=FrozenClock(DEMO_NOW)) as store:
        build_large(store, COUNT)
    return path


@pytest.fixture
def large_db(large_template, tmp_path) -> Path:
    target = tmp_path / "large.db"
    shutil.copy(large_template, target)
    return target


@pytest.fixture
def large(large_db):
    with Store.open(large_db, project="demo", config=Config.defaults(), clock=FrozenClock(DEMO_NOW)) as store:
        yield store


def open_app(path: Path) -> MemdeckApp:
    return MemdeckApp(path, project="demo", clock=FrozenClock(DEMO_NOW), config=Config.defaults(),
                      live=False, still=True)


def shown(app) -> MemoryList:
    return app.screen.query_one(MemoryList)


@pytest.mark.parametrize("text", ["needs", "retry", "socket timeout", "retry timeo"])
def test_a_search_head_is_the_start_of_its_whole_listing(large, text):
    whole = listing(large, ListQuery(text=text))
    first = head(large, ListQuery(text=text), PAGE_SIZE)
    assert first.ids == whole.ids[:PAGE_SIZE] and len(first) == len(whole) > 0
    assert first.complete == (len(whole) <= PAGE_SIZE)


def test_a_broad_search_lists_the_newest_matches_first(large):
    whole = listing(large, ListQuery(text="needs"))  # in every title
    assert len(whole) == COUNT > BROAD_MATCHES
    rowids = [large.db.execute_sql("SELECT rowid FROM memory WHERE id = ?", (i,)).fetchone()[0]
              for i in whole.ids[:50]]
    assert rowids == sorted(rowids, reverse=True)


def test_a_search_head_counts_only_what_the_filter_lets_through(large):
    only_fixes = ListQuery(MemoryFilter(types=("fix",)), text="needs")
    first = head(large, only_fixes, PAGE_SIZE)
    assert len(first) == len(listing(large, only_fixes)) < COUNT
    assert {m.type for m in large.get_many(first.ids)} == {"fix"}


def test_a_lone_last_letter_waits_for_the_next_one(large):
    # As a prefix, one letter matches nearly every memory: it narrows nothing, and costs most.
    assert not ListQuery(text="r").searching and len(head(large, ListQuery(text="r"), PAGE_SIZE)) == COUNT
    assert listing(large, ListQuery(text="socket t")).ids == listing(large, ListQuery(text="socket")).ids
    assert listing(large, ListQuery(text="socket t")).words == ("socket",)
    assert len(listing(large, ListQuery(text="socket ti")).ids) < len(listing(large, ListQuery(text="socket")).ids)


def test_a_search_head_counts_what_the_store_holds_after_each_write(large, large_db):
    needs = ListQuery(text="needs")  # broad: every title
    assert len(head(large, needs, PAGE_SIZE)) == COUNT
    newest = head(large, needs, PAGE_SIZE).ids[0]
    large.trash.delete([newest], actor="test")  # this connection's own write
    after_delete = head(large, needs, PAGE_SIZE)
    assert len(after_delete) == COUNT - 1 and newest not in after_delete.ids
    with Store.open(large_db, project="demo", config=Config.defaults(), clock=FrozenClock(DEMO_NOW)) as other:
        added = other.add("The pager needs a retry cap", type="fix", reinforce=False).memory
    after_add = head(large, needs, PAGE_SIZE)  # another connection's write
    assert len(after_add) == COUNT and after_add.ids[0] == added.id
    assert after_add.ids == listing(large, needs).ids[:PAGE_SIZE]


def test_a_search_head_reads_at_most_head_matches_and_says_there_are_more(large, monkeypatch):
    import store.browse.paging as paging

    monkeypatch.setattr(paging, "HEAD_MATCHES", 1000)  # fewer than BROAD_MATCHES: still broad
    needs = ListQuery(text="needs")  # in every title
    oldest = listing(large, needs).ids[-1]
    large.edit(oldest, title="Needs needs needs needs")  # first by BM25, last by age
    first = head(large, needs, PAGE_SIZE)
    whole = listing(large, needs)
    assert first.more and not first.complete and len(first) == 1000 and len(whole) == COUNT
    assert first.ids == whole.ids[:PAGE_SIZE]
    loaded = read_head(large, needs, with_counts=False)  # no fuzzy pass: there are many matches
    assert loaded.listing.more and len(loaded.listing.ids) == PAGE_SIZE
    fixes = ListQuery(MemoryFilter(types=("fix",)), text="needs")
    assert len(head(large, fixes, PAGE_SIZE)) < 1000 and head(large, fixes, PAGE_SIZE).more
    assert not head(large, ListQuery(text="socket timeout"), PAGE_SIZE).more


@pilot_test
async def test_a_search_with_more_matches_than_its_head_read_shows_them_all_after(large_db, monkeypatch):
    import store.browse.paging as paging

    monkeypatch.setattr(paging, "HEAD_MATCHES", 1000)
    app = open_app(large_db)
    titles_meanwhile = []

    def whole(store, query):  # the rest of the listing, read once the head is shown
        titles_meanwhile.append(shown(app).border_title)
        return real_listing(store, query)

    real_listing = paging.listing
    monkeypatch.setattr(paging, "listing", whole)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"needs")
        await settle(pilot)
        memories = shown(app)
        assert titles_meanwhile[-1] == f"Memories 1000+ of {COUNT}"
        assert memories.border_title == f"Memories {COUNT} of {COUNT}" and len(memories.listing.ids) == COUNT


def test_the_quick_read_of_a_typo_is_its_fuzzy_title_matches(large):
    loaded = read_head(large, ListQuery(text="webhok"), with_counts=False)
    assert loaded.listing.ids and loaded.listing.complete and loaded.counts is None
    assert [m.id for m in loaded.first_page] == list(loaded.listing.ids[:HEAD_ROWS])
    assert "webhook" in loaded.first_page[0].title.lower()


@pilot_test
async def test_the_whole_listing_follows_its_head(large_db):
    app = open_app(large_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memories = shown(app)
        assert len(memories.listing.ids) == COUNT and memories.border_title == f"Memories {COUNT} of {COUNT}"
        await pilot.press("G")
        await settle(pilot)
        assert memories.cursor == COUNT - 1 and memories.rows_ready
        assert memories.cursor_memory.id == memories.listing.ids[-1]
        await pilot.press("ctrl+a")
        assert len(memories.selected) == COUNT


@pilot_test
async def test_a_search_shows_its_head_then_its_whole_listing(large_db):
    app = open_app(large_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"socket")
        await settle(pilot)
        memories = shown(app)
        expected = listing(app.store, ListQuery(text="socket"))
        assert memories.listing.ids == expected.ids and memories.listing.query.text == "socket"
        assert memories.border_title == f"Memories {len(expected)} of {COUNT}" and memories.rows_ready
        assert memories.cursor_memory.id == expected.ids[0]
        await pilot.press("escape")  # clears the search: every memory again, newest update first
        await settle(pilot)
        assert len(memories.listing.ids) == COUNT


@pilot_test
async def test_the_first_screen_read_beforehand_is_what_the_workbench_opens_on(large_db):
    store = Store.open(large_db, project="demo", config=Config.defaults(), clock=FrozenClock(DEMO_NOW))
    first_read = read_first_screen(store)
    first = first_read.result(timeout=30)
    assert first.listing.ids == listing(store, ListQuery()).ids[:PAGE_SIZE] and len(first.listing) == COUNT
    assert [m.id for m in first.first_page] == list(first.listing.ids[:HEAD_ROWS]) and first.counts.total == COUNT
    app = MemdeckApp(store=store, first_read=first_read, live=False, still=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memories = shown(app)
        assert memories.listing.ids == listing(app.store, ListQuery()).ids and memories.rows_ready


@pilot_test
async def test_the_main_screen_draws_a_finished_first_read_without_reading_again(large_db):
    store = Store.open(large_db, project="demo", config=Config.defaults(), clock=FrozenClock(DEMO_NOW))
    newest = read_head(store, ListQuery(), with_counts=True)
    three = Loaded(Listing(ListQuery(), newest.listing.ids[:3]), newest.counts, newest.first_page[:3])
    first_read: Future[Loaded] = Future()
    first_read.set_result(three)
    app = MemdeckApp(store=store, first_read=first_read, live=False, still=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memories = shown(app)
        assert memories.listing.ids == newest.listing.ids[:3] and memories.rows_ready
        assert memories.border_title == f"Memories 3 of {COUNT}"

