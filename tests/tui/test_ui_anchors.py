"""Anchors in the workbench, on a store anchored to a real git repository: the stale badge and
filter, anchors in the detail pane, the anchors view with its diff, re-anchoring, marking a
memory wrong, and the anchors field of the edit form. Snapshots of each."""

from __future__ import annotations

import io

from rich.console import Console

from anchor_ui_support import FRESH_ID, PLAIN_ID, STALE_ID, anchored_app, anchored_repo  # noqa: F401
from ui_support import pilot_test

from store.anchors.anchoring import anchors_of
from tui.screens.anchors import AnchorScreen
from tui.testing import SIZE, settle
from tui.widgets.memory_list import MemoryList


def shown_text(static) -> str:
    """What a Static shows, as plain text."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(static.content)
    return console.export_text()


def listed(app) -> list[str]:
    return list(app.screen.query_one(MemoryList).listing.ids)


async def at(pilot, app, memory_id):
    app.screen.go_to(memory_id)
    await settle(pilot)


async def keys(pilot, *names):
    for name in names:
        await pilot.press(name)
        await settle(pilot)


@pilot_test
async def test_the_stale_filter_shows_only_memories_whose_code_changed(anchored_repo):
    app = anchored_app(anchored_repo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert set(listed(app)) == {STALE_ID, FRESH_ID, PLAIN_ID}
        await keys(pilot, "f")
        app.screen.query_one("#stale").value = True
        await keys(pilot, "ctrl+s")
        assert listed(app) == [STALE_ID]
        assert "stale" in str(app.screen.query_one("#filters").render())


@pilot_test
async def test_reanchoring_from_the_anchors_view_makes_the_memory_fresh(anchored_repo):
    app = anchored_app(anchored_repo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await at(pilot, app, STALE_ID)
        await keys(pilot, "a")
        assert isinstance(app.screen, AnchorScreen)
        body = shown_text(app.screen.query_one("#anchor-body"))
        assert "-    amount = order.total - order.fees" in body and "+    amount = order.total" in body
        await keys(pilot, "r")
        assert [a.status for a in anchors_of(app.store, STALE_ID)] == ["fresh", "fresh"]
        assert "The anchored lines are as they were." in shown_text(app.screen.query_one("#anchor-body"))
        await keys(pilot, "escape")
        assert not app.store.get(STALE_ID).stale


@pilot_test
async def test_the_anchors_view_saves_its_check_once_not_at_every_change_it_causes(anchored_repo, monkeypatch):
    """Opening the view checks the anchors and saves the check; a change of the store (its own
    save among them, on a live store) checks again without saving. It used to save at every
    reload: its own save brought it back, and it checked and wrote in a loop while open."""
    import store.anchors.verify as verify_module

    saved = []
    real = verify_module.save_checks
    monkeypatch.setattr(verify_module, "save_checks", lambda *a, **k: (saved.append(1), real(*a, **k))[1])
    app = anchored_app(anchored_repo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await at(pilot, app, STALE_ID)
        await keys(pilot, "a")
        assert isinstance(app.screen, AnchorScreen) and len(saved) == 1
        for _ in range(3):
            app.reload_screens()  # what the live check calls on every change it sees
            await settle(pilot)
        assert len(saved) == 1
        assert "-    amount = order.total - order.fees" in shown_text(app.screen.query_one("#anchor-body"))


@pilot_test
async def test_marking_a_memory_wrong_sets_it_inactive_and_u_undoes_it(anchored_repo):
    app = anchored_app(anchored_repo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await at(pilot, app, STALE_ID)
        await keys(pilot, "a")
        await keys(pilot, "w")
        assert app.store.get(STALE_ID).status == "inactive"
        await keys(pilot, "escape")
        await keys(pilot, "u")
        assert app.store.get(STALE_ID).status == "active"


@pilot_test
async def test_the_edit_form_changes_anchors_and_a_bad_one_saves_nothing(anchored_repo):
    app = anchored_app(anchored_repo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await at(pilot, app, FRESH_ID)
        await keys(pilot, "e")
        anchors = app.screen.query_one("#anchors")
        assert anchors.value == "billing/invoice.py:2"
        anchors.value = "billing/invoice.py:1-2, billing/nope.py"
        app.screen.query_one("#title").value = "Invoices are order totals"
        await keys(pilot, "ctrl+s")
        assert app.store.get(FRESH_ID).title != "Invoices are order totals"
        assert [a.spec for a in anchors_of(app.store, FRESH_ID)] == ["billing/invoice.py:2"]
        await keys(pilot, "e")
        app.screen.query_one("#anchors").value = "billing/invoice.py:1-2, billing/refund.py:2-5"
        await keys(pilot, "ctrl+s")
        assert [a.spec for a in anchors_of(app.store, FRESH_ID)] == ["billing/invoice.py:1-2", "billing/refund.py:2-5"]


@pilot_test
async def test_a_malformed_anchor_is_shown_in_the_form(anchored_repo):
    app = anchored_app(anchored_repo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await at(pilot, app, PLAIN_ID)
        await keys(pilot, "e")
        app.screen.query_one("#anchors").value = "Makefile:9-3"
        await keys(pilot, "ctrl+s")
        assert "anchors: anchor 'Makefile:9-3': lines run from 1" in str(app.screen.query_one("#form-errors").render())


def snap(snap_compare, app, *keys, memory_id=STALE_ID, focus=None):
    async def run_before(pilot):
        await settle(pilot)
        await at(pilot, app, memory_id)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        if focus:
            app.screen.query_one(focus).focus()
            await settle(pilot)

    return snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_stale_badge_and_anchors_in_the_detail_pane(snap_compare, anchored_repo):
    assert snap(snap_compare, anchored_app(anchored_repo))


def test_anchors_view_with_the_diff_since_the_commit(snap_compare, anchored_repo):
    assert snap(snap_compare, anchored_app(anchored_repo), "a")


def test_edit_form_with_anchors(snap_compare, anchored_repo):
    assert snap(snap_compare, anchored_app(anchored_repo), "e", memory_id=FRESH_ID, focus="#anchors")


def test_a_diff_line_wider_than_the_view_wraps_and_hides_nothing():
    from store.anchors.anchoring import Anchor
    from store.anchors.diff import AnchorDiff
    from store.anchors.verify import AnchorCheck
    from tui.screens.anchors import render_diff

    anchor = Anchor(1, "mem-1", "src/rate.js", 3, 3, "h", "", "abc1234def", None, "changed", None, 0.0)
    long = "+const reset = Number(response.headers['x-esi-error-limit-reset']) * 1000 + ENDS_HERE"
    diff = AnchorDiff(AnchorCheck(anchor, "changed", "src/rate.js", 3, 3), ("@@ -3 +3 @@", long), "git")
    console = Console(width=40, record=True, file=io.StringIO())
    console.print(render_diff(diff))
    shown = console.export_text()
    assert "ENDS_HERE" in shown and "…" not in shown
