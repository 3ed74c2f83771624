"""The insight views driven through Textual's Pilot on a real demo store: following a session
that a real `memdeck ingest --follow` is writing, the preview changing with the hat and never
writing, copying and saving the block, and the links between memories, sessions and events."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess

from insight_support import EVERY_KIND_TITLE, LIVE_SESSION, add_every_event, add_live_session
from ui_support import demo_db, demo_template, memory_titled, pilot_test  # noqa: F401 (fixtures)

from store import Config, FrozenClock, Store
from store.engine.clock import DAY
from store.demo import MAIN_PROJECT
from store.retrieval.injection import InjectionContext, prime
from tests.cli_support import memdeck_command
from tests.transcript_support import assistant_line
from textual.widgets import Input, Select, SelectionList
from tui.commands import binding_commands
from tui.screens.main import MainScreen
from tui.screens.preview import DEBOUNCE_SECONDS, PreviewScreen
from tui.screens.sessions import KindFilter, SessionsScreen
from tui.screens.timeline import TimelineScreen
from tui.testing import DEMO_NOW, SIZE, demo_app, settle
from tui.widgets.activity_log import ActivityLog
from tui.widgets.confidence_chart import ConfidenceChart
from tui.widgets.memory_list import MemoryList
from tui.widgets.title_bar import TitleBar

REVIEW_TASK = "Review the websocket reconnect and retry backoff in the feed client before release"


async def wait_until(pilot, condition, seconds: float = 30) -> None:
    """Let the app run (its live polling included) until `condition()` holds."""
    for _ in range(int(seconds / 0.1)):
        if condition():
            return
        await pilot.pause(0.1)
    assert condition(), "timed out"


def rows(path) -> dict[str, list]:
    with sqlite3.connect(path) as db:
        return {table: db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                for table in ("memory", "event", "session", "activity", "project")}


@pilot_test
async def test_a_followed_transcript_shows_new_activity_live_until_the_person_scrolls_up(demo_db, tmp_path):
    transcript = tmp_path / "live.jsonl"
    transcript.write_text(assistant_line("live-1", "Reading the feed client first.", 0) + "\n")
    env = {**os.environ, "MEMDECK_DB": str(demo_db), "MEMDECK_PROJECT": MAIN_PROJECT}
    ingest = subprocess.Popen([*memdeck_command(), "ingest", str(transcript), "--follow", "--idle-exit", "60"],
                              stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        app = demo_app(demo_db, live=True)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await wait_until(pilot, lambda: any(s.id == "live-1" for s in app.store.sessions.recent()))
            app.open_sessions("live-1")
            # Live: the follower keeps writing, so wait for the pushed screen itself to compose.
            await wait_until(pilot, lambda: bool(app.screen.query(ActivityLog)))
            log = app.screen.query_one(ActivityLog)
            await wait_until(pilot, lambda: len(log.activities) == 1)

            with transcript.open("a") as handle:
                handle.write(assistant_line("live-1", "MEMORY:pitfall:RedisQ drops kills when two workers share a queueID", 1) + "\n")
            await wait_until(pilot, lambda: len(log.activities) == 4)
            assert [a.kind for a in log.activities] == ["assistant", "assistant", "marker", "memory_created"]
            assert log.follow and log.cursor == 3 and log.border_subtitle == "following"
            # The session list's counts refresh on their own poll, just after the log's.
            await wait_until(pilot, lambda: str(app.screen.query_one("#sessions").get_cell("live-1", "✚")) == "1")

            await pilot.press("k")  # the person reads back: the view stays where they are
            with transcript.open("a") as handle:
                handle.write(assistant_line("live-1", "Now the reconnect tests.", 2) + "\n")
            await wait_until(pilot, lambda: len(log.activities) == 5)
            assert not log.follow and log.cursor == 2 and log.border_subtitle == "paused · G follows"

            await pilot.press("G")
            assert log.follow and log.cursor == 4
    finally:
        ingest.send_signal(signal.SIGTERM)
        _, err = ingest.communicate(timeout=30)
    assert ingest.returncode == 0, err


@pilot_test
async def test_a_late_answer_to_an_older_request_does_not_overwrite_a_newer_one(demo_db):
    """A thread worker cannot be stopped once it reads: under load, the answer to an older
    request (counts from before a write, the whole log read before a newer open) can arrive
    after the newer one's. The screen keeps the newer one."""
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_sessions()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        table, log = screen.query_one("#sessions"), screen.query_one(ActivityLog)
        shown_sessions, shown_log = table.row_count, list(log.activities)
        assert shown_sessions > 1 and shown_log

        # Answers to requests older than the latest: nothing, and one entry of another session.
        screen.post_message(SessionsScreen.SummariesLoaded(0, [], screen.query_one(TitleBar).counts))
        stale = SessionsScreen.EntriesLoaded(0, screen.session_id, screen.kinds, True, shown_log[:1])
        screen.post_message(stale)
        await settle(pilot)
        assert table.row_count == shown_sessions and screen.summaries
        assert log.activities == shown_log

        # The latest request's answer is shown.
        screen.post_message(SessionsScreen.EntriesLoaded(screen._opens.latest, screen.session_id, screen.kinds,
                                                         True, shown_log[:1]))
        await settle(pilot)
        assert log.activities == shown_log[:1]


def fill_preview(app, hat: str | None, task: str = REVIEW_TASK, budget: int = 160) -> None:
    screen = app.screen
    screen.query_one("#hat", Select).value = hat if hat else Select.NULL
    screen.query_one("#budget", Input).value = str(budget)
    screen.query_one("#task", Input).value = task


async def previewed(pilot) -> None:
    await pilot.pause(DEBOUNCE_SECONDS + 0.1)
    await settle(pilot)


async def open_preview(app, pilot) -> None:
    await settle(pilot)
    await pilot.press("i")
    await settle(pilot)
    assert isinstance(app.screen, PreviewScreen)


async def open_live_log(app, pilot) -> ActivityLog:
    await settle(pilot)
    app.open_sessions(LIVE_SESSION)
    await settle(pilot)
    await wait_until(pilot, lambda: bool(app.screen.query(ActivityLog)))
    return app.screen.query_one(ActivityLog)


@pilot_test
async def test_changing_the_hat_changes_the_block_and_nothing_is_written(demo_db):
    before = rows(demo_db)
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_preview(app, pilot)
        # The whole budget whatever the gate's confidence (the spend has its own tests), and room
        # for the best memory and one more: the hat decides which.
        app.store.config = app.store.config.with_overrides({"injection.gate.full_strength": 1.0})
        fill_preview(app, "critic", budget=200)
        await previewed(pilot)
        critic = app.screen.result
        assert critic.block and critic.tokens <= critic.budget == 200
        context = InjectionContext(hat="critic", task=REVIEW_TASK, budget=200)
        assert critic.block == app.db_call(lambda: prime(app.store, context).block)  # what prime prints

        app.screen.query_one("#hat", Select).value = "explorer"
        await previewed(pilot)
        explorer = app.screen.result
        assert explorer.block != critic.block
        assert {r.memory.id for r in explorer.included} != {r.memory.id for r in critic.included}
        assert any(r.reason == "over budget" for r in explorer.excluded)
    assert rows(demo_db) == before  # no usage recorded, no event, no activity


@pilot_test
async def test_typing_the_task_updates_the_preview_once_typing_pauses(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_preview(app, pilot)
        cold_start = app.screen.result.block  # no task yet: what prime injects without one
        assert cold_start == app.db_call(lambda: prime(app.store, InjectionContext()).block)
        await pilot.press(*"esi rate limit")
        await previewed(pilot)
        assert app.screen.result.block != cold_start
        titles = [r.memory.title for r in app.screen.result.included]
        assert any(title.startswith("ESI") for title in titles), titles
        # The demo's memory whose code changed since it was anchored is left out, and says why.
        stale = {r.memory.title: r.reason for r in app.screen.result.excluded}
        assert stale["ESI rate limit returns 420, not 429"].startswith("stale: src/esi/client.ts changed")
        await pilot.press("ctrl+y")
        assert app.clipboard == app.screen.result.block


@pilot_test
async def test_a_bad_budget_is_explained_and_nothing_is_previewed(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_preview(app, pilot)
        fill_preview(app, "critic", budget=0)
        await previewed(pilot)
        assert app.screen.result is None
        assert "positive number of tokens" in str(app.screen.query_one("#block").render())
        await pilot.press("ctrl+y")
        assert app.clipboard == ""


@pilot_test
async def test_saving_the_block_asks_before_replacing_a_file(demo_db, tmp_path):
    target = tmp_path / "block.md"
    target.write_text("my notes\n")
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_preview(app, pilot)
        fill_preview(app, "critic")
        await previewed(pilot)
        block = app.screen.result.block

        for answer in ("n", "y"):
            await pilot.press("ctrl+s")
            await settle(pilot)
            app.screen.query_one("#answer", Input).value = str(target)
            await pilot.press("enter")
            await settle(pilot)
            assert f"Replace {target}?" in str(app.screen.query_one(".dialog--title").render())
            await pilot.press(answer)
            await settle(pilot)
            assert target.read_text() == ("my notes\n" if answer == "n" else block)

        fresh = tmp_path / "[red]new.md"  # a name that looks like Rich markup is still a name
        await pilot.press("ctrl+s")
        await settle(pilot)
        app.screen.query_one("#answer", Input).value = str(fresh)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, PreviewScreen) and fresh.read_text() == block
        umask = os.umask(0)
        os.umask(umask)
        assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask  # not a private temporary's 0600

        nowhere = tmp_path / "no-such-folder" / "block.md"
        await pilot.press("ctrl+s")
        await settle(pilot)
        app.screen.query_one("#answer", Input).value = str(nowhere)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, PreviewScreen) and not nowhere.parent.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


@pilot_test
async def test_enter_on_an_activity_opens_the_memory_it_touched(demo_db):
    add_live_session(demo_db, MAIN_PROJECT, DEMO_NOW)
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        log = await open_live_log(app, pilot)
        touched = next(i for i, a in enumerate(log.activities) if a.memory_id)
        await pilot.press("enter")  # the newest entry touched no memory: nothing happens
        assert isinstance(app.screen, SessionsScreen)
        await pilot.press(*["k"] * (log.cursor - touched), "enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.screen.query_one(MemoryList).cursor_id == log.activities[touched].memory_id


@pilot_test
async def test_the_kind_filter_shows_only_the_chosen_kinds(demo_db):
    add_live_session(demo_db, MAIN_PROJECT, DEMO_NOW)
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_live_log(app, pilot)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, KindFilter)
        kinds = app.screen.query_one(SelectionList)
        kinds.deselect_all()
        kinds.select("tool_error")
        kinds.select("marker")
        await pilot.press("enter")
        await settle(pilot)
        log = app.screen.query_one(ActivityLog)
        assert [a.kind for a in log.activities] == ["marker", "tool_error"]
        assert "only tool error, marker" in log.border_title


@pilot_test
async def test_the_timeline_names_the_event_under_the_cursor_and_opens_its_session(demo_db):
    clock = FrozenClock(DEMO_NOW)
    with Store.open(demo_db, project=MAIN_PROJECT, clock=clock, config=Config.defaults()) as store:
        critic = next(s for s in store.sessions.recent() if s.hat == "critic")
        add_every_event(store, clock, DEMO_NOW - 50 * DAY, session_id=critic.id)
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.go_to(memory_titled(app, EVERY_KIND_TITLE).id)
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        chart = app.screen.query_one(ConfidenceChart)
        assert "".join(p.mark for p in chart.points) == "CURDEAINKMSPVTHXOWJG"
        await pilot.press("home", "right")
        described = str(app.screen.query_one("#timeline-point").render())
        assert "used" in described and f"session {critic.id[:8]}" in described and critic.task in described
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen) and app.screen.session_id == critic.id


@pilot_test
async def test_each_view_has_a_key_and_a_palette_command_and_a_memory_links_to_its_session(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        names = {command.title for command in binding_commands(app, app.screen)}
        assert {"Timeline", "Sessions", "Inject"} <= names
        memories = app.screen.query_one(MemoryList)
        for _ in range(10):  # the first memory an agent session wrote (operators' have none)
            if memories.cursor_memory.session_id:
                break
            await pilot.press("j")
            await settle(pilot)
        memory = memories.cursor_memory
        assert memory.session_id
        for key, screen in (("t", TimelineScreen), ("s", SessionsScreen), ("i", PreviewScreen)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, screen)
            if key == "s":
                assert app.screen.session_id == memory.session_id
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, MainScreen)


@pilot_test
async def test_the_list_under_a_view_catches_up_with_writes_when_it_is_shown_again(demo_db, run_cli_process):
    app = demo_app(demo_db, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = len(app.screen.query_one(MemoryList).listing)
        await pilot.press("s")
        await settle(pilot)
        sessions = app.screen
        result = run_cli_process("add", "Killmail ids above 2^53 need BigInt", "--type", "pitfall",
                         env={"MEMDECK_DB": str(demo_db), "MEMDECK_PROJECT": MAIN_PROJECT})
        assert result.returncode == 0, result.stderr
        main = app.screen_stack[-2]
        await wait_until(pilot, lambda: main.stale)  # hidden: it waits instead of re-reading
        assert len(main.query_one(MemoryList).listing) == shown and app.screen is sessions
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen.query_one(MemoryList).listing) == shown + 1 and not main.stale
