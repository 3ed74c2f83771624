"""Snapshots of the insight views on the demo store: a timeline with every event kind, a session
log while its session is still running, the injection preview for two hats on the same task
(different memories make the cut), and a budget that forces memories out."""

from __future__ import annotations

from insight_support import EVERY_KIND_TITLE, add_every_event, add_live_session, open_live_log
from ui_support import demo_db, demo_template, memory_titled  # noqa: F401 (fixtures)

from store import Config, FrozenClock, Store
from store.engine.clock import DAY
from store.demo import MAIN_PROJECT
from tui.screens.preview import DEBOUNCE_SECONDS
from tui.testing import DEMO_NOW, SIZE, demo_app, settle

REVIEW_TASK = "Review the websocket reconnect and retry backoff in the feed client before release"


def snap(snap_compare, app, before):
    async def run_before(pilot):
        await settle(pilot)
        await before(pilot)
        await settle(pilot)

    return snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_timeline_with_every_event_kind(snap_compare, demo_db):
    clock = FrozenClock(DEMO_NOW)
    with Store.open(demo_db, project=MAIN_PROJECT, clock=clock, config=Config.defaults()) as store:
        critic = next(s.id for s in store.sessions.recent() if s.hat == "critic")
        add_every_event(store, clock, DEMO_NOW - 50 * DAY, session_id=critic)
    app = demo_app(demo_db)

    async def open_timeline(pilot):
        app.go_to(memory_titled(app, EVERY_KIND_TITLE).id)
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        await pilot.press("left", "left")  # the cursor names an earlier event

    assert snap(snap_compare, app, open_timeline)


def test_session_log_mid_session(snap_compare, demo_db):
    add_live_session(demo_db, MAIN_PROJECT, DEMO_NOW)
    app = demo_app(demo_db)

    async def open_log(pilot):
        await open_live_log(pilot)

    assert snap(snap_compare, app, open_log)


def preview(app, hat: str, budget: int, task: str = REVIEW_TASK):
    async def fill(pilot):
        from textual.widgets import Input, Select

        await pilot.press("i")
        await settle(pilot)
        screen = app.screen
        screen.query_one("#hat", Select).value = hat
        screen.query_one("#budget", Input).value = str(budget)
        screen.query_one("#task", Input).value = task
        await pilot.pause(DEBOUNCE_SECONDS + 0.2)

    return fill


def test_preview_for_the_critic(snap_compare, demo_db):
    app = demo_app(demo_db)
    assert snap(snap_compare, app, preview(app, "critic", 200))


def test_preview_for_the_explorer_on_the_same_task(snap_compare, demo_db):
    app = demo_app(demo_db)
    assert snap(snap_compare, app, preview(app, "explorer", 200))


def test_preview_where_the_budget_forces_memories_out(snap_compare, demo_db):
    app = demo_app(demo_db)
    assert snap(snap_compare, app, preview(app, "critic", 100, "Fix the websocket reconnect and retry backoff"))
