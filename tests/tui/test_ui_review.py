"""Review in the inbox and the trash: the pane follows the cursor with the candidate's evidence
and the memories it resembles; accept (after editing, with E), reject or merge, singly or on a
selection. Driven by keys through Textual's Pilot, on a real demo store."""

from __future__ import annotations

from ui_support import demo_db, demo_template, memory_titled, pilot_test  # noqa: F401 (fixtures)

from tui.testing import SIZE, demo_app, settle
from tui.widgets.memory_table import MemoryTable
from tui.widgets.review_pane import ReviewPane


def pane(app) -> ReviewPane:
    return app.screen.query_one(ReviewPane)


@pilot_test
async def test_the_pane_shows_the_cursors_candidate_with_its_evidence(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        first = app.screen.query_one(MemoryTable).cursor_memory()
        assert pane(app).detail.memory.id == first.id and app.screen.has_class("-stacked")
        await pilot.press("j")
        await settle(pilot)
        second = app.screen.query_one(MemoryTable).cursor_memory()
        assert second.id != first.id and pane(app).detail.memory.id == second.id
        (evidence,) = pane(app).detail.memory.meta["evidence"]
        assert evidence["line"] == 88 and "two workers must never share a queueID" in evidence["text"]
        assert pane(app).border_title == second.id


@pilot_test
async def test_merge_folds_the_candidate_into_the_memory_it_resembles(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        known = app.store.add("Every RedisQ consumer process needs its own unique queueID", type="pitfall",
                              project="eve-intel", source="operator").memory
        candidate = memory_titled(app, "RedisQ queueID must be unique")
        await pilot.press("I")
        await settle(pilot)
        table = app.screen.query_one(MemoryTable)
        table.move_cursor(row=table.get_row_index(candidate.id))
        await settle(pilot)
        assert pane(app).detail.resembling[0][0].id == known.id
        await pilot.press("m")
        await settle(pilot)
        assert app.store.get(candidate.id).status == "deleted"
        assert app.store.events(candidate.id)[-2].detail == {"into": known.id}
        assert app.store.events(known.id)[-1].kind == "merged"
        assert candidate.id not in [m.id for m in app.screen.query_one(MemoryTable).memories]


@pilot_test
async def test_edit_and_accept_saves_the_form_and_makes_the_candidate_active(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        candidate = app.screen.query_one(MemoryTable).cursor_memory()
        await pilot.press("E")
        await settle(pilot)
        app.screen.query_one("#title").value = "Integration tests need Redis on 6379"
        await pilot.press("ctrl+s")
        await settle(pilot)
        saved = app.store.get(candidate.id)
        assert saved.status == "active" and saved.title == "Integration tests need Redis on 6379"


@pilot_test
async def test_a_selection_is_accepted_in_one_go(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        shown = [m.id for m in app.screen.query_one(MemoryTable).memories]
        await pilot.press("space", "space", "a")
        await settle(pilot)
        assert [app.store.get(i).status for i in shown] == ["active", "active", "pending"]


@pilot_test
async def test_the_trash_shows_the_pane_and_restores(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("T")
        await settle(pilot)
        trashed = app.screen.query_one(MemoryTable).cursor_memory()
        assert pane(app).detail.memory.id == trashed.id
        await pilot.press("r")
        await settle(pilot)
        assert app.store.get(trashed.id).status != "deleted"
