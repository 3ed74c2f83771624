"""Keys that must not cost data or the session: a dialog closes with the key its footer names,
and a screen where a task or a form is typed does not quit or open another screen on a letter."""

from __future__ import annotations

import pytest
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from textual.widgets import Input

from tui.app import MemdeckApp
from tui.screens.base import APP_LETTER_KEYS
from tui.screens.bulk import BulkScreen
from tui.screens.edit import EditScreen
from tui.screens.filters import FilterScreen
from tui.screens.main import MainScreen
from tui.screens.preview import PreviewScreen
from tui.testing import SIZE, demo_app, settle
from tui.widgets.memory_list import MemoryList


def test_the_typing_keys_are_the_apps_one_key_bindings():
    one_key = {key for binding in MemdeckApp.BINDINGS for key in binding.key.split(",") if len(key) == 1
               or key == "question_mark"}
    assert set(APP_LETTER_KEYS) == one_key


@pytest.mark.parametrize("key", ["escape", "q"])
@pilot_test
async def test_the_bulk_dialog_closes_and_the_next_keys_touch_nothing(demo_db, key):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memory = app.screen.query_one(MemoryList).cursor_memory
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, BulkScreen)
        await pilot.press(key)
        await settle(pilot)
        assert isinstance(app.screen, MainScreen) and app.is_running
        # Before the fix these went to the dialog: enter applied its first action (trash).
        await pilot.press("enter")
        await settle(pilot)
        assert app.store.get(memory.id).status == memory.status


@pilot_test
async def test_letters_typed_in_the_preview_go_to_the_task_and_never_quit(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        screen.query_one("#why").focus()  # focus leaves the task box (a click on the table)
        await settle(pilot)
        await pilot.press("q", "p", "T", "I", "s", "i", "t")
        await settle(pilot)
        assert app.is_running and app.screen is screen
        assert screen.query_one("#task", Input).value == "qpTIsit"
        screen.query_one("#hat").focus()
        await pilot.press("q", "p")
        await settle(pilot)
        assert app.is_running and app.screen is screen
        assert screen.query_one("#task", Input).value == "qpTIsitqp"
        assert "Quit" not in [k.description for k in screen.query("FooterKey")]
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)


@pytest.mark.parametrize("opening", ["e", "f"])
@pilot_test
async def test_a_letter_on_a_form_select_neither_quits_nor_opens_a_screen(demo_db, opening):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(opening)
        await settle(pilot)
        form = app.screen
        assert isinstance(form, EditScreen if opening == "e" else FilterScreen)
        form.query_one("#type").focus()
        for key in APP_LETTER_KEYS:
            await pilot.press(key)
            await settle(pilot)
            assert app.is_running and app.screen is form, key
