"""What the two cursor lists share (`tui.widgets.cursor_list`), driven through Textual's Pilot
on the demo store: a page moves the cursor one row less than the view shows and keeps it in
view, the ends hold it, and a click puts it on the row clicked (never on the memory list's
header, nor on a border)."""

from __future__ import annotations

from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from store import Config, FrozenClock, Store
from store.demo import MAIN_PROJECT
from tui.testing import DEMO_NOW, demo_app, settle
from tui.widgets.activity_log import ActivityLog
from tui.widgets.cursor_list import CursorList
from tui.widgets.memory_list import MemoryList

SMALL = (120, 24)  # fewer rows than the lists hold, so they page and scroll


def in_view(widget: CursorList) -> bool:
    top = widget.scroll_offset.y
    return top <= widget.cursor < top + widget.visible_rows


def row_line(widget: CursorList, row: int) -> int:
    """The line, counted from the widget's top edge (its border included), that shows `row`."""
    return widget.content_region.y - widget.region.y + widget.HEADER_ROWS + row - widget.scroll_offset.y


async def pages_and_ends(pilot, widget: CursorList) -> None:
    widget.focus()
    await pilot.press("g")
    rows, count = widget.visible_rows, widget.row_count
    assert count > rows + 1
    await pilot.press("pagedown")
    assert widget.cursor == rows - 1 and in_view(widget)
    for _ in range(count // max(1, rows - 1) + 1):
        await pilot.press("pagedown")
    assert widget.cursor == count - 1 and in_view(widget)  # the end holds it
    await pilot.press("pageup")
    assert widget.cursor == count - rows and in_view(widget)
    await pilot.press("g", "k")
    assert widget.cursor == 0 and widget.scroll_offset.y == 0


@pilot_test
async def test_the_memory_list_pages_holds_at_its_ends_and_takes_clicks_on_rows(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        memories = app.screen.query_one(MemoryList)
        await pages_and_ends(pilot, memories)
        await pilot.click(MemoryList, offset=(10, row_line(memories, 4)))
        await settle(pilot)
        assert memories.cursor == 4
        await pilot.click(MemoryList, offset=(10, row_line(memories, 0)))
        await settle(pilot)
        assert memories.cursor == 0
        await pilot.click(MemoryList, offset=(10, row_line(memories, 4)))
        await pilot.click(MemoryList, offset=(10, row_line(memories, -1)))  # the header
        await pilot.click(MemoryList, offset=(10, 0))  # the border
        await settle(pilot)
        assert memories.cursor == 4


@pilot_test
async def test_the_activity_log_pages_holds_at_its_ends_and_takes_clicks_on_rows(demo_db):
    with Store.open(demo_db, project=MAIN_PROJECT, clock=FrozenClock(DEMO_NOW), config=Config.defaults()) as store:
        store.sessions.ensure("long", started_at=DEMO_NOW - 3600)
        for seq in range(60):
            store.sessions.append_activity("long", "tool_use", f"Read src/file{seq}.ts", at=DEMO_NOW - 3600 + seq, seq=seq)
    app = demo_app(demo_db)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        app.open_sessions("long")
        await settle(pilot)
        log = app.screen.query_one(ActivityLog)
        assert log.row_count == 60 and log.follow and log.cursor == 59
        await pages_and_ends(pilot, log)
        assert not log.follow  # moved off the newest entry
        await pilot.click(ActivityLog, offset=(10, row_line(log, 3)))
        await settle(pilot)
        assert log.cursor == 3 and log.cursor_activity.summary == "Read src/file3.ts"
        await pilot.click(ActivityLog, offset=(10, 0))  # the border
        await settle(pilot)
        assert log.cursor == 3
