"""The title bar's clock keeps time on the main screen (it stood still at the minute the screen
was drawn)."""

from __future__ import annotations

from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from store.engine.clock import FrozenClock
from tui.testing import DEMO_NOW, demo_app, settle
from tui.widgets import title_bar
from tui.widgets.title_bar import TitleBar


def test_the_main_screens_clock_keeps_ticking(demo_db, monkeypatch):
    monkeypatch.setattr(title_bar, "TICK_SECONDS", 0.05)
    clock = FrozenClock(DEMO_NOW)

    @pilot_test
    async def flow():
        app = demo_app(demo_db, clock=clock)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            bar = app.screen.query_one(TitleBar)
            assert str(bar.render()).endswith("12:00")
            clock.advance(seconds=3 * 60)
            for _ in range(100):  # the bar's own interval reads the clock again
                await pilot.pause(0.05)
                if str(bar.render()).endswith("12:03"):
                    break
            assert str(bar.render()).endswith("12:03")

    flow()
