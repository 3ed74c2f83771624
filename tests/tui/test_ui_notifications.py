"""Notifications carry user text (types, tags, error messages naming what was typed): they show
it as text, never as Rich markup."""

from __future__ import annotations

from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from tui.testing import SIZE, demo_app, settle


@pilot_test
async def test_an_error_naming_markup_the_user_typed_is_shown_as_text(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.write(lambda: app.store.add("Some learning", type="[/bold][link=x]odd"))
        await app.workers.wait_for_complete()
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("unknown type '[/bold][link=x]odd'" in m for m in messages)
        assert all(not n.markup for n in app._notifications if "unknown type" in n.message)
        app.save_screenshot(str(pilot.app.screen.id) + ".svg", path=str(demo_db.parent))  # renders
