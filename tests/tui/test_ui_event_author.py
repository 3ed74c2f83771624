"""The workbench names who made each change (an event's author, migration 9) in the detail
pane's history and on the timeline, as text: an author that looks like Rich markup prints as
typed, on a terminal of 80×24."""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region
from textual.widgets import Static
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from store import Config, FrozenClock, Store
from store.demo import MAIN_PROJECT
from tui.testing import DEMO_NOW, demo_app, settle
from tui.widgets.detail import AUTHOR_WIDTH, DetailPane

HOSTILE = "[red]eve"  # Rich markup: parsed, it would print `eve` in red
LONG = "bartholomew-the-third"


def add_memory_by_authors(path) -> str:
    """A memory created by HOSTILE and edited by LONG, the latest of the demo's project."""
    config = Config.defaults().with_overrides({"team.author": HOSTILE})
    clock = FrozenClock(DEMO_NOW - 60)
    with Store.open(path, project=MAIN_PROJECT, clock=clock, config=config) as store:
        memory_id = store.add("Authors are data, never markup.", type="pitfall",
                              title="Authors are shown as typed").memory.id
    config = config.with_overrides({"team.author": LONG})
    clock.at = DEMO_NOW - 30
    with Store.open(path, project=MAIN_PROJECT, clock=clock, config=config) as store:
        store.edit(memory_id, tags=["authors"], actor="ui")
    return memory_id


def shown(widget) -> list[tuple[str, list[Style]]]:
    """Each line the widget draws: its text, and the styles of its segments."""
    width, height = widget.size
    lines = widget.render_lines(Region(0, 0, width, height))
    return [("".join(s.text for s in line), [s.style for s in line if s.style]) for line in lines]


@pilot_test
async def test_the_history_and_the_timeline_name_each_change_s_author_as_text(demo_db):
    memory_id = add_memory_by_authors(demo_db)
    app = demo_app(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.go_to(memory_id)
        await settle(pilot)
        pane = app.screen.query_one(DetailPane)
        assert pane.detail.memory.id == memory_id
        pane.scroll_end(animate=False)
        await settle(pilot)
        history = shown(pane.query_one("#detail-history", Static))
        created = next(text for text, _ in history if " created " in text)
        edited = next(text for text, _ in history if " edited " in text)
        # Time, then who, then what: the markup is printed, not obeyed.
        assert created.split()[:4] == ["03-01", "11:59", HOSTILE, "created"]
        # A long name is cut with an ellipsis, so the history keeps its columns at 80 columns.
        assert LONG[:AUTHOR_WIDTH - 1] + "…" in edited and LONG not in edited
        assert "tags" in edited  # the note (what changed) still fits beside it
        styles = [style for _, line in history for style in line]
        assert not any(style.color and style.color.name == "red" for style in styles)

        await pilot.press("t")
        await settle(pilot)
        point = shown(app.screen.query_one("#timeline-point", Static))[0][0].strip()
        # The latest event under the cursor: its author right after its time, before the screen's edge.
        assert point.startswith("▸ 2026-03-01 11:59") and LONG in point
        assert point.index(LONG) < point.index("edited") < 80
        await pilot.press("left")
        await settle(pilot)
        point = shown(app.screen.query_one("#timeline-point", Static))[0][0].strip()
        assert f"11:59 {HOSTILE} created" in point
