"""Snapshots of the inbox and the trash with the review pane, at the sizes people use: 80×24,
100×30 (the pane under the table) and 160×45 (beside it, in test_ui_snapshots)."""

from __future__ import annotations

import pytest
from ui_support import demo_db, demo_template  # noqa: F401 (fixtures)

from tui.testing import demo_app, settle

SIZES = [(80, 24), (100, 30)]


def snap(snap_compare, app, size, *keys):
    async def run_before(pilot):
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "100x30"])
def test_inbox_with_the_review_pane(snap_compare, demo_db, size):
    assert snap(snap_compare, demo_app(demo_db), size, "I", "j")


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "100x30"])
def test_trash_with_the_review_pane(snap_compare, demo_db, size):
    assert snap(snap_compare, demo_app(demo_db), size, "T")
