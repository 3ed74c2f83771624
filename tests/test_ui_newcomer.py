"""Issue 43, what a newcomer met in the workbench in the first hour: a reason that could not be
read, a footer that wrapped or showed through a dialog, a count that counted what was not shown.
Pilot tests on the demo store at the three sizes the walk takes."""

from __future__ import annotations

import pytest
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from tui.screens.preview import DEBOUNCE_SECONDS
from tui.testing import demo_app, settle
from tui.widgets.score_table import ScoreTable

SIZES = [(80, 24), (100, 30), (160, 48)]
TASK = "Review the reconnect backoff in the feed client"


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await settle(pilot)


async def open_preview(pilot, task: str = TASK) -> None:
    from textual.widgets import Input, Select

    await press(pilot, "i")
    screen = pilot.app.screen
    screen.query_one("#hat", Select).value = "critic"
    screen.query_one("#task", Input).value = task
    await pilot.pause(DEBOUNCE_SECONDS + 0.2)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pilot_test
async def test_the_preview_shows_the_highlighted_candidates_whole_reason_and_verdict(demo_db, size):
    """Item 5: the reason column was 22 cells at every size with no way to read the rest."""
    app = demo_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await open_preview(pilot)
        screen = app.screen
        table = screen.query_one(ScoreTable)
        table.focus()
        await settle(pilot)
        candidates = {r.memory.id: r for r in [*screen.result.included, *screen.result.excluded]}
        assert max(len(r.reason) for r in candidates.values()) > 40  # reasons longer than a column
        for _ in range(6):
            item = candidates[table.cursor_memory_id()]
            reading = " ".join(str(screen.query_one("#why-reading").render()).split())
            assert " ".join(item.reason.split()) in reading
            assert " ".join(item.gate.split()) in reading
            shown = screen.query_one("#why-reading")
            lines = shown.render().wrap(shown.content_region.width)
            assert len(lines) <= shown.content_region.height, "the reading is cut at its foot"
            assert screen.region.contains_region(shown.region)
            await press(pilot, "j")
        if size[0] >= 160:  # the reason takes the room the other columns leave
            widths = {str(c.key.value): c.width for c in table.columns.values()}
            assert widths["reason"] > 22
