"""The edit form: keys typed at once add to the title, leaving with changes asks first, `u`
undoes a save, and a save that meets another process's change (a reinforcement, a content edit,
a move to the trash, made by a real `memdeck` process while the form is open) shows what changed
and asks: keep theirs, apply mine, or back to the form."""

from __future__ import annotations

import os
import subprocess

from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from store.demo import MAIN_PROJECT
from tests.cli_support import memdeck_command
from tui.screens.conflict import ConflictScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.edit import EditScreen
from tui.testing import SIZE, demo_app, settle
from tui.widgets.memory_list import MemoryList


def other_process(db, *args: str) -> None:
    """Another `memdeck` process changes the store while the form is open; it has finished
    when this returns."""
    subprocess.run([*memdeck_command(), "--db", str(db), "--project", MAIN_PROJECT, *args],
                   check=True, capture_output=True, env={**os.environ, "MEMDECK_PROJECT": MAIN_PROJECT})


async def open_form(app, pilot):
    await settle(pilot)
    memory = app.screen.query_one(MemoryList).cursor_memory
    await pilot.press("e")
    await settle(pilot)
    assert isinstance(app.screen, EditScreen)
    return memory


@pilot_test
async def test_keys_typed_right_after_e_add_to_the_title(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memory = app.screen.query_one(MemoryList).cursor_memory
        await pilot.press("e", "!", "!")
        await settle(pilot)
        assert app.screen.query_one("#title").value == memory.title + "!!"


@pilot_test
async def test_leaving_an_edited_form_asks_before_discarding(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        memory = await open_form(app, pilot)
        app.screen.query_one("#scope").value = "billing"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # back to the form, changes still there
        await settle(pilot)
        assert isinstance(app.screen, EditScreen) and app.screen.query_one("#scope").value == "billing"
        await pilot.press("escape", "y")
        await settle(pilot)
        assert not isinstance(app.screen, (EditScreen, ConfirmScreen))
        assert app.store.get(memory.id) == memory


@pilot_test
async def test_leaving_an_unchanged_form_asks_nothing(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_form(app, pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, (EditScreen, ConfirmScreen))


@pilot_test
async def test_u_undoes_a_saved_edit(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        memory = await open_form(app, pilot)
        app.screen.query_one("#title").value = "A better title"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.store.get(memory.id).title == "A better title"
        await pilot.press("u")
        await settle(pilot)
        undone = app.store.get(memory.id)
        assert undone.title == memory.title and app.store.events(memory.id)[-1].actor == "ui:undo"


@pilot_test
async def test_saving_writes_only_the_fields_changed_keeping_a_reinforcement_made_meanwhile(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        memory = await open_form(app, pilot)
        app.screen.query_one("#title").value = "Edited while a session reinforced it"
        other_process(demo_db, "add", memory.content, "--type", memory.type, "--tags", "from-session",
                      *(["--scope", memory.scope] if memory.scope else []))
        reinforced = app.store.get(memory.id)
        assert reinforced.version > memory.version and "from-session" in reinforced.tags
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConflictScreen)
        shown = str(app.screen.query_one(".dialog--detail").render())
        assert "tags:" in shown and "from-session" in shown
        await pilot.press("m")  # apply mine: only the title, over their version
        await settle(pilot)
        saved = app.store.get(memory.id)
        assert saved.title == "Edited while a session reinforced it"
        assert saved.confidence == reinforced.confidence and saved.tags == reinforced.tags


@pilot_test
async def test_a_memory_trashed_while_the_form_was_open_stays_in_the_trash_when_theirs_is_kept(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        memory = await open_form(app, pilot)
        app.screen.query_one("#title").value = "Too late"
        other_process(demo_db, "delete", memory.id)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConflictScreen)
        assert "status: 'active' → 'deleted'" in str(app.screen.query_one(".dialog--detail").render())
        await pilot.press("t")
        await settle(pilot)
        assert not isinstance(app.screen, (EditScreen, ConflictScreen))
        kept = app.store.get(memory.id)
        assert kept.status == "deleted" and kept.title == memory.title


@pilot_test
async def test_a_content_edit_meanwhile_is_kept_and_cancel_goes_back_to_the_form(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        memory = await open_form(app, pilot)
        app.screen.query_one("#confidence").value = "0.99"
        other_process(demo_db, "edit", memory.id, "--content", "Rewritten by another process.")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConflictScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, EditScreen) and app.screen.query_one("#confidence").value == "0.99"
        await pilot.press("ctrl+s", "m")
        await settle(pilot)
        saved = app.store.get(memory.id)
        assert saved.content == "Rewritten by another process." and saved.confidence == 0.99
