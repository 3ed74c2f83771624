"""A proposal side by side in the inbox (issue 27): `p` opens the memory in the store and the
new one with why, the merged text is editable, and the choice is one undoable action. Driven by
keys through Textual's Pilot, on a real demo store."""

from __future__ import annotations

import pytest
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from textual.widgets import Static, TextArea

from store import Config, FrozenClock, Store
from tui.testing import DEMO_NOW, SIZE, demo_app, settle
from tui.screens.proposal import ProposalScreen
from tui.widgets.memory_table import MemoryTable


async def open_proposal(app, pilot, memory_id: str) -> None:
    await pilot.press("I")
    await settle(pilot)
    table = app.screen.query_one(MemoryTable)
    table.move_cursor(row=table.get_row_index(memory_id))
    await settle(pilot)
    await pilot.press("v")
    await settle(pilot)


@pilot_test
async def test_a_contradiction_shows_both_sides_and_the_merged_text_is_editable(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        old = app.store.add("Never call the payments API from the web worker", type="pitfall",
                            project="eve-intel").memory
        new = app.store.add("Always call the payments API from the web worker", type="pitfall",
                            project="eve-intel").memory
        assert new.status == "pending"
        await open_proposal(app, pilot, new.id)
        screen = app.screen
        assert isinstance(screen, ProposalScreen)
        assert str(screen.query_one("#proposal-old", Static).render()) == old.content
        assert str(screen.query_one("#proposal-new", Static).render()) == new.content
        assert "polarity negated -> plain" in str(screen.query_one("#proposal-why", Static).render())
        area = screen.query_one("#proposal-merged", TextArea)
        await pilot.press("tab")  # into the merged text: letters are text there, not choices
        assert area.has_focus
        area.text = "Call the payments API from the web worker only through the queue"
        await pilot.press("end", "s")
        assert isinstance(app.screen, ProposalScreen) and area.text.endswith("queues")
        await pilot.press("ctrl+s")
        await settle(pilot)
        kept = app.store.get(old.id)
        assert kept.content == "Call the payments API from the web worker only through the queues"
        assert app.store.get(new.id).status == "deleted"
        assert [e.kind for e in app.store.events(old.id)][-2:] == ["merged", "resolved"]
        # One undoable action: the texts and the proposal come back.
        await pilot.press("u")
        await settle(pilot)
        assert app.store.get(old.id).content == old.content
        back = app.store.get(new.id)
        assert back.status == "pending" and back.meta["proposal"]["other"] == old.id


@pilot_test
async def test_keys_choose_supersede_and_escape_changes_nothing(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        old = app.store.add("Tests run with vitest", type="pattern", project="eve-intel").memory
        new = app.store.add("Tests run with jest", type="pattern", project="eve-intel").memory
        await open_proposal(app, pilot, new.id)
        await pilot.press("escape")
        await settle(pilot)
        assert app.store.get(new.id).status == "pending" and app.store.get(old.id).status == "active"
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, ProposalScreen) and app.screen.focused is None
        await pilot.press("s")
        await settle(pilot)
        assert app.store.get(new.id).status == "active"
        assert app.store.get(old.id).meta["superseded_by"] == new.id
        assert new.id not in [m.id for m in app.screen.query_one(MemoryTable).memories]


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
def test_snapshot_of_a_proposal_side_by_side(snap_compare, demo_db, size):
    with Store.open(demo_db, project="eve-intel", config=Config.defaults(), clock=FrozenClock(DEMO_NOW)) as store:
        store.add("Killmail polling runs every 30 seconds against the RedisQ endpoint", type="pattern",
                  memory_id="mem-1772300000-0a0a")
        new = store.add("Killmail polling runs every 10 seconds against the RedisQ endpoint", type="pattern",
                        memory_id="mem-1772300060-0b0b", status="pending").memory
    assert new.meta["proposal"]["other"] == "mem-1772300000-0a0a"

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        table = pilot.app.screen.query_one(MemoryTable)
        table.move_cursor(row=table.get_row_index(new.id))
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)

    assert snap_compare(demo_app(demo_db), terminal_size=size, run_before=run_before)


@pilot_test
async def test_a_chain_from_consolidate_shows_its_memories_and_supersede_retires_them_all(demo_db):
    from store.api import consolidate

    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chain = [app.store.add(f"The changelog boundary is now 96a7691..{tip}", type="context", project="eve-intel",
                               reinforce=False, created_at=DEMO_NOW - 600 + 60 * n).memory.id
                 for n, tip in enumerate(("3f2c1ab", "b81e0d4", "c0ffee1"))]
        assert consolidate(app.store, "eve-intel").proposed == 1
        await open_proposal(app, pilot, chain[-1])
        screen = app.screen
        assert isinstance(screen, ProposalScreen)
        shown = str(screen.query_one("#proposal-chain", Static).render())
        assert shown == f"chain of 3, oldest first: {' → '.join(chain)}; s retires the 2 before {chain[-1]}"
        await pilot.press("s")
        await settle(pilot)
        assert [app.store.get(i).status for i in chain] == ["inactive", "inactive", "active"]
