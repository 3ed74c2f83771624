"""The workbench on a store with nothing in it yet (right after `memdeck init`, or an import
into another project): every list is empty, and the keys that move through them do nothing."""

from __future__ import annotations

from ui_support import pilot_test

from textual.widgets import DataTable

from tui.screens.sessions import SessionsScreen
from tui.testing import demo_app, settle


@pilot_test
async def test_the_sessions_screen_with_no_sessions_survives_the_last_row_key(tmp_path):
    app = demo_app(tmp_path / "empty.db", build=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for key in ("s", "tab", "G", "g", "j", "k", "enter"):
            await pilot.press(key)
            await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        assert app.screen.query_one("#sessions", DataTable).row_count == 0
