"""The workbench is a long-lived reader too: its injection preview shows what another process
(an agent's `memdeck mcp`, here the `memdeck` command) wrote since it opened, on a live SQLite
store: a memory remembered elsewhere enters the block, and one judged not relevant for this task
leaves it."""

from __future__ import annotations

import json

from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from store.engine.core import Store
from store.engine.feedback import give_feedback
from tests.tui.test_ui_insight_flows import fill_preview, open_preview, previewed
from tests.tui.test_ui_live_check import wait_until
from tui.testing import SIZE, demo_app

TASK = "Add partial refunds to the killmail checkout"


@pilot_test
async def test_the_preview_follows_another_processes_writes(demo_db, run_cli_process):
    app = demo_app(demo_db, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await open_preview(app, pilot)
        fill_preview(app, "creator", task=TASK, budget=2000)
        await previewed(pilot)
        before = {r.memory.id for r in app.screen.result.included}

        added = run_cli_process("add", "Killmail checkout totals are integer cents; partial refunds round per line",
                        "--type", "pitfall", "--json", env={"MEMDECK_DB": str(demo_db), "MEMDECK_PROJECT": "eve-intel"})
        assert added.returncode == 0, added.stderr
        new_id = json.loads(added.stdout)["id"]
        assert new_id not in before
        await wait_until(pilot, lambda: app.screen.result is not None
                         and new_id in {r.memory.id for r in app.screen.result.included})

        with Store.open(demo_db, project="eve-intel") as other:  # another connection's verdict
            give_feedback(other, new_id, "not_relevant", task=TASK, actor="mcp")
        await wait_until(pilot, lambda: app.screen.result is not None
                         and new_id not in {r.memory.id for r in app.screen.result.included})
        (out,) = [r for r in app.screen.result.excluded if r.memory.id == new_id]
        assert out.reason.startswith("judged not relevant to a similar task")
