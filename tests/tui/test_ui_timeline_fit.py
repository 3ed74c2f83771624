"""The timeline at 160 and 80 columns: the legend names every mark the chart draws (wrapped when
it is more than a line), and the x-axis of a young memory ends at now, not a day later."""

from __future__ import annotations

import pytest
from insight_support import EVERY_KIND_TITLE, add_every_event
from ui_support import demo_db, demo_template, memory_titled, pilot_test  # noqa: F401 (fixtures)

from textual.geometry import Region
from textual.widgets import Static

from store.browse.timeline import EVENT_MARKS
from store.engine.clock import DAY, FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.demo import MAIN_PROJECT
from tui.testing import DEMO_NOW, demo_app, settle
from tui.widgets.confidence_chart import ConfidenceChart


def shown_text(widget) -> str:
    width, height = widget.size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
@pilot_test
async def test_the_legend_names_every_mark_drawn(demo_db, size):
    clock = FrozenClock(DEMO_NOW)
    with Store.open(demo_db, project=MAIN_PROJECT, clock=clock, config=Config.defaults()) as store:
        add_every_event(store, clock, DEMO_NOW - 50 * DAY)
    app = demo_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.go_to(memory_titled(app, EVERY_KIND_TITLE).id)
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        drawn = {p.kind for p in app.screen.query_one(ConfidenceChart).points}
        assert {"anchored", "checked"} <= drawn
        text = " ".join(shown_text(app.screen.query_one("#timeline-legend", Static)).split())
        for kind in drawn:
            assert f"{EVENT_MARKS[kind]} {kind.replace('_', ' ')}" in text, kind


@pilot_test
async def test_a_young_memorys_axis_ends_at_now(demo_db):
    clock = FrozenClock(DEMO_NOW - 2 * 3600)
    with Store.open(demo_db, project=MAIN_PROJECT, clock=clock, config=Config.defaults()) as store:
        made = store.add("Made two hours ago: the axis must end now", type="context").memory
    app = demo_app(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.go_to(made.id)
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        chart = app.screen.query_one(ConfidenceChart)
        start, end = chart._span()
        assert end == DEMO_NOW and start <= made.created_at
        lines = [chart.render_line(y).text for y in range(chart.content_region.height)]
        dates = next(line for line in lines if ":" in line).split()
        assert dates[0] == "10:00" and max(dates) <= "12:00"
