"""The workbench's live check watches the team store too (docs/team.md): another member's write
there shows in the merged list without a key press, read off the UI thread; a share of the
workbench's own is reloaded for once."""

from __future__ import annotations

import threading

from team_support import as_member, team  # noqa: F401 (fixtures)
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from store.engine.clock import FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from tui.app import LIVE_CHECK_SECONDS, MemdeckApp
from tui.testing import DEMO_NOW, MAIN_PROJECT, SIZE, settle
from tui.widgets.memory_list import MemoryList


async def _until(pilot, condition, seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    assert condition(), "timed out"


def _live_app(demo_db, url: str) -> MemdeckApp:
    config = Config.defaults().with_overrides({"team.db": url})
    return MemdeckApp(demo_db, project=MAIN_PROJECT, clock=FrozenClock(DEMO_NOW), config=config,
                      live=True, still=True)


def _from_another_member(url: str, text: str) -> str:
    """bo adds a memory to the team store from a connection of his own, as from his machine."""
    with Store.open(as_member(url, "bo"), project=MAIN_PROJECT, config=Config.defaults()) as bo:
        return bo.add(text, type="pitfall", actor="cli").memory.id


@pilot_test
async def test_another_members_write_to_the_team_store_shows_without_a_key_press(demo_db, team, monkeypatch):
    read_on: list[str] = []  # the thread of every team-store version read
    real_version = Store.data_version

    def data_version(store):
        if store.backend.name == "postgresql":
            read_on.append(threading.current_thread().name)
        return real_version(store)

    monkeypatch.setattr(Store, "data_version", data_version)
    first = _from_another_member(team, "Killmail ids above 2^53 need BigInt in the team's parser")
    app = _live_app(demo_db, as_member(team, "ana"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        await _until(pilot, lambda: first in shown.listing.ids and "memdeck-team-live" in read_on)
        before = len(shown.listing.ids)

        # bo adds a memory and another member's feedback moves one: the list shows both, unasked.
        second = _from_another_member(team, "The zKillboard feed drops connections every hour")
        await _until(pilot, lambda: second in shown.listing.ids)
        assert len(shown.listing.ids) == before + 1
        with Store.open(as_member(team, "bo"), project=MAIN_PROJECT, config=Config.defaults()) as bo:
            bo.record_usage([first])

        def used_once() -> bool:
            row = shown._row(shown.listing.ids.index(first))
            return row is not None and row.use_count == 1 and row.layer == "team"

        await _until(pilot, used_once)
    # The team store was read on the watcher's thread, never on the UI thread (the main one).
    assert threading.main_thread().name not in read_on


@pilot_test
async def test_a_share_of_ours_reloads_once_not_again_by_the_team_check(demo_db, team, monkeypatch):
    reloads: list[int | None] = []
    real_reload = MemdeckApp.reload_screens
    monkeypatch.setattr(MemdeckApp, "reload_screens",
                        lambda self, version=None: (reloads.append(version), real_reload(self, version)))
    app = _live_app(demo_db, as_member(team, "bo"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _until(pilot, lambda: app._team_watch is not None)
        await pilot.pause(3 * LIVE_CHECK_SECONDS)
        reloads.clear()
        await pilot.press("S")
        await app.workers.wait_for_complete()
        await _until(pilot, lambda: "Shared 1 with the team" in [n.message for n in app._notifications])
        for _ in range(int(4 * LIVE_CHECK_SECONDS / 0.05)):  # four checks' time
            await pilot.pause(0.05)
        await settle(pilot)
        assert len(reloads) == 1, reloads


def test_a_write_of_our_own_is_not_reported_even_when_a_check_falls_between_its_commit_and_seen(team):
    """The race the share test met on a loaded machine: a check that reads the team store after
    the share committed and before `seen()` reloaded a second time. `expect()` before the write
    holds the reports; after `seen()`, another member's write is reported again."""
    from tui.team_live import LayerWatch

    changes = threading.Semaphore(0)
    writer = Store.open(as_member(team, "bo"), project=MAIN_PROJECT, config=Config.defaults())
    watch = LayerWatch(Store.open(as_member(team, "ana"), project=MAIN_PROJECT, config=Config.defaults()),
                       changes.release, every=0.02)
    try:
        watch.start()
        watch.expect()
        writer.add("Retry the feed after a 502 with backoff", type="pattern")  # committed, not yet seen
        assert not changes.acquire(timeout=0.5)  # 25 checks: none reports our own write
        watch.seen(5)
        assert not changes.acquire(timeout=0.3)
        writer.add("The feed's cursor is kept in Redis", type="context")  # another member's, now
        assert changes.acquire(timeout=10)
    finally:
        watch.stop()
        writer.close()
