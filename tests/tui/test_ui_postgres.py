"""The workbench on a PostgreSQL store: the demo store copied to the server, and a memory another
process adds shows live, told by the server (LISTEN/NOTIFY), not found by polling."""

from __future__ import annotations

import pytest
from ui_support import demo_template, pilot_test  # noqa: F401 (fixtures)

import tui.app
from store.interop.copying import copy_store
from tui.testing import SIZE, demo_app, settle
from tui.widgets.memory_list import MemoryList


@pytest.fixture
def demo_url(postgres_server, demo_template):
    url = postgres_server.empty_database()
    copy_store(demo_template, url)
    return url


@pilot_test
async def test_a_memory_added_by_another_process_appears_live_on_postgres(demo_url, run_cli_process, monkeypatch):
    monkeypatch.setattr(tui.app, "LIVE_CHECK_SECONDS", 3600)  # no polling: only the server's notice
    app = demo_app(demo_url, build=False, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        assert len(shown.listing) == 32
        result = run_cli_process("add", "Killmail ids above 2^53 need BigInt", "--type", "pitfall",
                         env={"MEMDECK_DB": demo_url, "MEMDECK_PROJECT": "eve-intel"})
        assert result.returncode == 0, result.stderr
        for _ in range(100):
            await pilot.pause(0.1)
            await settle(pilot)
            if len(app.screen.query_one(MemoryList).listing) == 33:
                break
        assert len(app.screen.query_one(MemoryList).listing) == 33
