"""The workbench's flows driven by keys through Textual's Pilot, on a real demo store."""

from __future__ import annotations

from ui_support import demo_db, demo_template, memory_titled, pilot_test  # noqa: F401 (fixtures)

from store.browse.search import MemoryFilter, list_memories
from tui.screens.bulk import ACTIONS
from tui.testing import SIZE, demo_app, settle
from tui.widgets.memory_list import MemoryList
from tui.widgets.title_bar import TitleBar


def shown(app) -> MemoryList:
    return app.screen.query_one(MemoryList)


@pilot_test
async def test_editing_a_memory_and_saving_records_an_edited_event(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memory = shown(app).cursor_memory
        await pilot.press("e")
        await settle(pilot)
        app.screen.query_one("#title").value = "Integration tests need Redis on 6379"
        app.screen.query_one("#confidence").value = "0.9"
        await pilot.press("ctrl+s")
        await settle(pilot)
        saved = app.store.get(memory.id)
        assert saved.title == "Integration tests need Redis on 6379" and saved.confidence == 0.9
        edited = app.store.events(memory.id)[-1]
        assert edited.kind == "edited" and set(edited.detail["changes"]) == {"title", "confidence"}
        assert edited.actor == "ui"


@pilot_test
async def test_an_invalid_form_is_not_saved(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memory = shown(app).cursor_memory
        await pilot.press("e")
        await settle(pilot)
        app.screen.query_one("#confidence").value = "lots"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "confidence: a number from 0 to 1" in str(app.screen.query_one("#form-errors").render())
        await pilot.press("escape")
        await settle(pilot)
        assert app.store.events(memory.id)[-1].kind != "edited"


@pilot_test
async def test_new_memory_is_stored_as_an_operator_memory(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        app.screen.query_one("#content").text = "Killmail webhooks must be retried with the same id."
        await pilot.press("ctrl+s")
        await settle(pilot)
        found = memory_titled(app, "Killmail webhooks must be retried")
        assert found.source == "operator" and found.confidence == 0.8


@pilot_test
async def test_bulk_delete_then_undo_restores_everything(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space", "space", "space")
        ids = shown(app).chosen_ids()
        before = app.store.get_many(ids)
        assert len(ids) == 3
        await pilot.press("d")
        await settle(pilot)
        assert {m.status for m in app.store.get_many(ids)} == {"deleted"}
        assert not set(ids) & set(shown(app).listing.ids)
        await pilot.press("u")
        await settle(pilot)
        after = app.store.get_many(ids)
        assert [(m.status, m.confidence, m.tags) for m in after] == [(m.status, m.confidence, m.tags) for m in before]
        assert set(ids) <= set(shown(app).listing.ids)


@pilot_test
async def test_merging_from_the_bulk_menu_keeps_the_strongest(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "space", "space")
        ids = shown(app).chosen_ids()
        strongest = max(app.store.get_many(ids), key=lambda m: m.confidence)
        await pilot.press("b")
        await settle(pilot)
        app.screen.query_one("#actions").highlighted = [a for a, _, _ in ACTIONS].index("merge")
        await pilot.press("enter")
        await settle(pilot)
        statuses = {m.id: m.status for m in app.store.get_many(ids)}
        assert statuses[strongest.id] == strongest.status != "deleted"  # the demo's order picks the two
        assert sorted(statuses.values()) == sorted([strongest.status, "deleted"])
        assert all("merged" in [e.kind for e in app.store.events(i)] for i in ids)


@pilot_test
async def test_typing_a_search_filters_the_list(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"redisq")
        await settle(pilot)
        found = app.store.get_many(shown(app).listing.ids)
        assert 3 <= len(found) < 32
        # Full-text hits come first; fuzzy title matches ("Redis") follow them.
        assert all("redisq" in (m.title + m.content).lower() for m in found[:3])
        await pilot.press("escape", "escape", "x")  # clear the search, leave the box, clear filters
        await settle(pilot)
        assert len(shown(app).listing) == 32


@pilot_test
async def test_switching_project_from_the_picker(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        options = app.screen.query_one("#projects")
        options.highlighted = [options.get_option_at_index(i).id for i in range(options.option_count)].index("ledger-api")
        await pilot.press("enter")
        await settle(pilot)
        assert app.store.project == "ledger-api"
        assert app.screen.query_one(TitleBar).counts.project == "ledger-api"
        assert {m.project for m in app.store.get_many(shown(app).listing.ids)} == {"ledger-api"}


@pilot_test
async def test_inbox_accepts_and_rejects_candidates(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pending = list_memories(app.store, MemoryFilter(statuses=("pending",)), sort="created")
        await pilot.press("I")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        statuses = [app.store.get(m.id).status for m in pending]
        assert statuses == ["active", "deleted", "pending"]


@pilot_test
async def test_trash_restores_a_memory(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        trashed = app.store.trash.memories()
        await pilot.press("T")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert app.store.get(trashed[0].id).status != "deleted"
        assert len(app.store.trash.memories()) == len(trashed) - 1


@pilot_test
async def test_a_memory_added_by_another_process_appears_live(demo_db, run_cli_process):
    app = demo_app(demo_db, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "space")
        cursor, selected = shown(app).cursor_id, set(shown(app).selected)
        result = run_cli_process("add", "Killmail ids above 2^53 need BigInt", "--type", "pitfall",
                         env={"MEMDECK_DB": str(demo_db), "MEMDECK_PROJECT": "eve-intel"})
        assert result.returncode == 0, result.stderr
        for _ in range(50):  # the live check runs every half second
            await pilot.pause(0.1)
            await settle(pilot)
            if len(shown(app).listing) == 33:
                break
        assert len(shown(app).listing) == 33
        assert shown(app).cursor_id == cursor and shown(app).selected == selected


@pilot_test
async def test_the_palette_switches_to_a_project_another_process_just_created(demo_db, run_cli_process):
    from tui.commands import binding_commands

    app = demo_app(demo_db, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listed = {c.title: c.help for c in binding_commands(app, app.screen) if c.title.startswith("Project: ")}
        assert listed["Project: eve-intel"] == "32 memories"
        result = run_cli_process("add", "Payments retry on 409", "--type", "fix",
                         env={"MEMDECK_DB": str(demo_db), "MEMDECK_PROJECT": "billing"})
        assert result.returncode == 0, result.stderr
        for _ in range(50):  # the live check runs every half second; projects are read in a worker
            await pilot.pause(0.1)
            await settle(pilot)
            if any(p.name == "billing" for p in app.projects):
                break
        switch = next(c for c in binding_commands(app, app.screen) if c.title == "Project: billing")
        assert switch.help == "1 memory"
        switch.callback()
        await settle(pilot)
        assert app.store.project == "billing"
        assert [m.title for m in app.store.get_many(shown(app).listing.ids)] == ["Payments retry on 409"]
