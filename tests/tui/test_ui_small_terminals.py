"""At 80×24 and 100×30: the footer shows every key of the screen and the ways to other screens
(taking a second line rather than cutting `p`, `T`, `I`), the edit form shows type, hat and
status without scrolling and without blank lines at its top, and the filter lists show their
choices whole."""

from __future__ import annotations

import pytest
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from textual.widgets import Select, SelectionList
from textual.widgets._footer import FooterKey

from tui.testing import demo_app, settle

SIZES = [(80, 24), (100, 30)]


def footer_keys(app) -> dict[str, FooterKey]:
    return {key.key: key for key in app.screen.query(FooterKey)}


def whole_on_screen(app, widget) -> bool:
    region, screen = widget.region, app.screen.region
    return region.width > 0 and region.height > 0 and screen.contains_region(region)


@pytest.mark.parametrize("size", SIZES)
@pilot_test
async def test_the_main_footer_shows_the_ways_to_other_screens_and_the_first_keys(demo_db, size):
    """One line (issue 43): the ways to the other screens, help and quit always; of the screen's
    own keys, the first ones in their order, as many as fit (`?` lists the rest)."""
    app = demo_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        keys = footer_keys(app)
        own = ["slash", "f", "e", "n", "b", "d", "u", "o"]
        shown_own = [key for key in own if key in keys]
        assert shown_own == own[:len(shown_own)] and len(shown_own) >= 3, list(keys)
        for key in (*shown_own, "p", "T", "I", "question_mark", "q"):
            assert key in keys, key
            widget = keys[key]
            assert whole_on_screen(app, widget), key
            # Not hidden behind the keys pinned at the right edge.
            pinned = app.screen.query_one(".footer--pinned")
            assert widget in pinned.query(FooterKey) or not widget.region.overlaps(pinned.region), key


@pytest.mark.parametrize("size", SIZES)
@pilot_test
async def test_the_edit_form_shows_type_hat_and_status_without_scrolling(demo_db, size):
    app = demo_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        form = app.screen
        for name in ("type", "hat", "status"):
            assert whole_on_screen(app, form.query_one(f"#{name}", Select)), name
        heading = form.query_one(".dialog--title")
        title_label = form.query("Label").first()
        assert title_label.region.y - heading.region.bottom <= 1  # no blank lines between them


@pytest.mark.parametrize("size", SIZES)
@pilot_test
async def test_the_filter_lists_show_their_choices_whole(demo_db, size):
    app = demo_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        for choices in app.screen.query(SelectionList):
            longest = max(len(str(choices.get_option_at_index(i).prompt)) for i in range(choices.option_count))
            # The check box and a space before the choice, inside the list's padding and scrollbar.
            room = choices.scrollable_content_region.width - len("▐X▌ ")
            assert room >= longest, (choices.id, room, longest)
