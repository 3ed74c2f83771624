"""Snapshots of every workbench screen on the demo store: fixed size, frozen clock, no blink,
and the app's store work finished before each picture."""

from __future__ import annotations

from ui_support import demo_db, demo_template, memory_titled  # noqa: F401 (fixtures)

from tui.testing import SIZE, demo_app, settle


def snap(snap_compare, app, *keys, before=None):
    async def run_before(pilot):
        await settle(pilot)
        if before is not None:
            await before(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_main_screen(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db))


def test_search_results_are_highlighted(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db), "slash", *"esi cache")


def test_active_filters_show_as_chips(snap_compare, demo_db):
    app = demo_app(demo_db)

    async def filter_(pilot):
        screen = app.screen
        screen.set_query(filter=screen.query_state.filter.with_(types=("pitfall", "fix"), hats=("critic",),
                                                                min_confidence=0.5))
        await settle(pilot)

    assert snap(snap_compare, app, before=filter_)


def test_filter_form(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db), "f")


def at_memory(app, title_start: str):
    """A `before` step that puts the cursor on the memory whose title starts so."""
    async def go(pilot):
        app.go_to(memory_titled(app, title_start).id)
        await settle(pilot)

    return go


def test_detail_with_history(snap_compare, demo_db):
    app = demo_app(demo_db)
    assert snap(snap_compare, app, before=at_memory(app, "Structure kills"))


def test_memory_text_with_markup_and_escapes_is_shown_as_text(snap_compare, demo_db):
    app = demo_app(demo_db)
    assert snap(snap_compare, app, before=at_memory(app, "Log lines hold"))


def test_edit_form_with_a_validation_error(snap_compare, demo_db):
    app = demo_app(demo_db)

    async def break_fields(pilot):
        await pilot.press("e")
        await settle(pilot)
        app.screen.query_one("#title").value = ""
        app.screen.query_one("#confidence").value = "1.7"

    assert snap(snap_compare, app, "ctrl+s", before=break_fields)


def test_bulk_selection(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db), "j", "space", "space", "j", "shift+down", "shift+down")


def test_bulk_actions_menu(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db), "space", "space", "b")


def test_trash(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db), "T")


def test_inbox(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db), "I")


def test_project_picker(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db), "p")


def test_help(snap_compare, demo_db):
    assert snap(snap_compare, demo_app(demo_db), "question_mark")


def test_empty_store_explains_how_to_start(snap_compare, tmp_path):
    assert snap(snap_compare, demo_app(tmp_path / "empty.db", build=False))
