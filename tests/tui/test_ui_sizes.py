"""Snapshots of every workbench screen at 80×24, 100×30 and 160×48 (the 160×45 ones
are in test_ui_snapshots.py and test_ui_insight_snapshots.py): the panes stack, the tables drop
columns, dialogs fit the screen and the footer keeps `?` and `q`."""

from __future__ import annotations

import pytest
from insight_support import add_live_session, open_live_log
from ui_support import demo_db, demo_template, memory_titled  # noqa: F401 (fixtures)

from store.demo import MAIN_PROJECT
from tui.screens.preview import DEBOUNCE_SECONDS
from tui.testing import DEMO_NOW, demo_app, settle

SIZES = [(80, 24), (100, 30), (160, 48)]


async def keys(pilot, *pressed):
    for key in pressed:
        await pilot.press(key)
        await settle(pilot)


async def preview(pilot):
    from textual.widgets import Input, Select

    await keys(pilot, "i")
    screen = pilot.app.screen
    screen.query_one("#hat", Select).value = "critic"
    screen.query_one("#budget", Input).value = "400"
    screen.query_one("#task", Input).value = "Review the reconnect backoff in the feed client"
    await pilot.pause(DEBOUNCE_SECONDS + 0.2)


async def timeline(pilot):
    app = pilot.app
    app.go_to(memory_titled(app, "Structure kills").id)
    await settle(pilot)
    await keys(pilot, "t")


async def detail(pilot):
    app = pilot.app
    app.go_to(memory_titled(app, "Structure kills").id)


async def history(pilot):
    """The detail pane scrolled to the memory's history: who made each change, when, what."""
    from tui.widgets.detail import DetailPane

    await detail(pilot)
    await settle(pilot)
    pilot.app.screen.query_one(DetailPane).scroll_end(animate=False)


async def session_log(pilot):
    await open_live_log(pilot)


SCREENS = {
    "main": lambda pilot: keys(pilot),
    "search": lambda pilot: keys(pilot, "slash", *"esi cache"),
    "detail": detail,
    "history": history,
    "filters": lambda pilot: keys(pilot, "f"),
    "bulk": lambda pilot: keys(pilot, "space", "space", "b"),
    "edit": lambda pilot: keys(pilot, "e"),
    "trash": lambda pilot: keys(pilot, "T"),
    "inbox": lambda pilot: keys(pilot, "I"),
    "projects": lambda pilot: keys(pilot, "p"),
    "help": lambda pilot: keys(pilot, "question_mark"),
    "timeline": timeline,
    "sessions": session_log,
    "preview": preview,
}


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_screen_fits_a_small_terminal(snap_compare, demo_db, screen, size):
    if screen == "sessions":
        add_live_session(demo_db, MAIN_PROJECT, DEMO_NOW)
    app = demo_app(demo_db)

    async def run_before(pilot):
        await settle(pilot)
        await SCREENS[screen](pilot)
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
