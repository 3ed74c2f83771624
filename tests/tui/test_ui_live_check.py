"""The live check on an SQLite store runs off the UI thread: one thread of its own reads
`PRAGMA data_version` (per connection, so always the same connection) and posts
`MemdeckApp.ChangedElsewhere`; the app's own write is reloaded for once, not again by the check;
another process's write still shows."""

from __future__ import annotations

import threading

from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from store.engine.core import Store
from tui.app import LIVE_CHECK_SECONDS, MemdeckApp
from tui.testing import SIZE, demo_app, settle
from tui.widgets.memory_list import MemoryList


async def wait_until(pilot, condition, seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
        await settle(pilot)
    assert condition(), "timed out"


@pilot_test
async def test_the_sqlite_live_check_reads_on_its_own_thread_and_a_write_of_ours_reloads_once(
        demo_db, run_cli_process, monkeypatch):
    read_on: list[str] = []  # the thread of every data-version read
    real_version = Store.data_version

    def data_version(store):
        read_on.append(threading.current_thread().name)
        return real_version(store)

    monkeypatch.setattr(Store, "data_version", data_version)
    app = demo_app(demo_db, live=True)
    reloads: list[int | None] = []
    changed: list[int] = []
    real_reload, real_changed = MemdeckApp.reload_screens, MemdeckApp.on_memdeck_app_changed_elsewhere
    monkeypatch.setattr(MemdeckApp, "reload_screens", lambda self, version=None: (reloads.append(version),
                                                                                  real_reload(self, version)))
    monkeypatch.setattr(MemdeckApp, "on_memdeck_app_changed_elsewhere",
                        lambda self, message: (changed.append(message.version), real_changed(self, message)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: "memdeck-live" in read_on)  # the watcher has started

        # Another process adds a memory: the watcher tells the app, which reloads the list.
        result = run_cli_process("add", "Killmail ids above 2^53 need BigInt", "--type", "pitfall",
                         env={"MEMDECK_DB": str(demo_db), "MEMDECK_PROJECT": "eve-intel"})
        assert result.returncode == 0, result.stderr
        await wait_until(pilot, lambda: len(app.screen.query_one(MemoryList).listing) == 33)
        assert len(changed) == 1 and reloads == [None]

        # A write of the app's own: one reload (its own), and the watcher does not post it again.
        memory_id = app.screen.query_one(MemoryList).cursor_id
        app.bulk("protect", [memory_id])
        await wait_until(pilot, lambda: len(reloads) == 2)
        for _ in range(int(3 * LIVE_CHECK_SECONDS / 0.05)):  # three checks' time
            await pilot.pause(0.05)
        await settle(pilot)
        assert app.store.get(memory_id).protected
        assert len(changed) == 1 and reloads == [None, None]

    # No version was read on the UI thread (the main thread here); the listing thread reads one
    # to know whether its cached filter still holds (store.browse.paging.scope).
    assert "memdeck-live" in read_on and threading.main_thread().name not in read_on
    assert set(read_on) <= {"memdeck-live", "memdeck-listing_0"}


@pilot_test
async def test_a_change_told_before_a_pushed_screen_has_mounted_is_read_by_its_mount(demo_db):
    """The live check can tell of a change between a screen's push and its mount (an ingest
    writing while the person opens its session): that screen is not reloaded then (it has no
    widgets yet); its mount reads the store, after the change."""
    from tui.screens.sessions import SessionsScreen
    from tui.widgets.activity_log import ActivityLog

    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_sessions(app.store.sessions.recent()[0].id)
        assert isinstance(app.screen, SessionsScreen) and not app.screen.is_mounted
        app.reload_screens()  # as a ChangedElsewhere arriving now does
        await settle(pilot)
        assert app.screen.query_one(ActivityLog).activities
