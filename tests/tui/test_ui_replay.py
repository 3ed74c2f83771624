"""The replay screen (issue 38): snapshots at 80x24 and 100x30 of our own small SpecStory history
replayed, a row opening its memory and the prompts, Escape leaving it, and the palette's "Replay
a history" running the replay in a worker."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Static

from store.capture.ingest.history import read_histories
from store.replay.engine import open_scratch, replay
from tests.data_support import DATA
from tui.screens.main import MainScreen
from tui.cli.replay import run_replay_app
from tui.screens.replay import ReplayScreen, ask_replay, squeeze
from tui.testing import settle
from ui_support import pilot_test

HISTORY = DATA / "replay" / "specstory"


def replayed_app(folder: Path):
    histories = read_histories([HISTORY])
    store = open_scratch(folder, "pricing")
    try:
        result = replay(store, histories.sessions)
    finally:
        store.close()
    result.duplicates = histories.duplicates
    return run_replay_app(result, folder / "replay.db", still=True)


def _snap(snap_compare, tmp_path, size):
    app = replayed_app(tmp_path)

    async def run_before(pilot):
        await settle(pilot)

    return snap_compare(app, terminal_size=size, run_before=run_before)


def test_replay_screen_80x24(snap_compare, tmp_path):
    assert _snap(snap_compare, tmp_path, (80, 24))


def test_replay_screen_100x30(snap_compare, tmp_path):
    assert _snap(snap_compare, tmp_path, (100, 30))


def test_marks_squeeze_to_the_width_keeping_the_strongest():
    assert squeeze(tuple("·T·i··!·✓"), 9) == "·T·i··!·✓"
    assert squeeze(tuple("·T·i··!·✓"), 3) == "Ti!"


@pilot_test
async def test_a_row_opens_its_memory_and_the_prompts_and_escape_leaves(tmp_path):
    app = replayed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        assert screen.query_one(DataTable).row_count == len(screen.rows) >= 1
        detail = str(screen.query_one("#replay-detail", Static).render())
        assert "taught in 2025-03-01_09-00Z" in detail
        assert "again 2025-03-04" in detail and "http_client" in detail
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)


@pilot_test
async def test_the_palette_replays_a_history_in_a_worker(tmp_path):
    app = replayed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        ask_replay(app)
        await settle(pilot)
        app.screen.query_one("#answer", Input).value = str(DATA / "replay" / "aider")
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        for _ in range(50):
            if screen.replay is not None:
                break
            await pilot.pause(0.1)
            await settle(pilot)
        assert screen.replay is not None and screen.replay.project == "aider"
        assert "aider: 2 sessions" in str(screen.query_one("#replay-head", Static).render())
