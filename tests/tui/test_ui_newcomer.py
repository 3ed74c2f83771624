"""Issue 43, what a newcomer met in the workbench in the first hour: a reason that could not be
read, a footer that wrapped or showed through a dialog, a count that counted what was not shown.
Pilot tests on the demo store at the three sizes the walk takes."""

from __future__ import annotations

import pytest
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from tui.screens.preview import DEBOUNCE_SECONDS
from tui.testing import demo_app, settle
from tui.widgets.score_table import ScoreTable
from tests.data_support import ROOT

SIZES = [(80, 24), (100, 30), (160, 48)]
TASK = "Review the reconnect backoff in the feed client"


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await settle(pilot)


async def open_preview(pilot, task: str = TASK) -> None:
    from textual.widgets import Input, Select

    await press(pilot, "i")
    screen = pilot.app.screen
    screen.query_one("#hat", Select).value = "critic"
    screen.query_one("#task", Input).value = task
    await pilot.pause(DEBOUNCE_SECONDS + 0.2)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pilot_test
async def test_the_preview_shows_the_highlighted_candidates_whole_reason_and_verdict(demo_db, size):
    """Item 5: the reason column was 22 cells at every size with no way to read the rest."""
    app = demo_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await open_preview(pilot)
        screen = app.screen
        table = screen.query_one(ScoreTable)
        table.focus()
        await settle(pilot)
        candidates = {r.memory.id: r for r in [*screen.result.included, *screen.result.excluded]}
        assert max(len(r.reason) for r in candidates.values()) > 40  # reasons longer than a column
        for _ in range(6):
            item = candidates[table.cursor_memory_id()]
            reading = " ".join(str(screen.query_one("#why-reading").render()).split())
            assert " ".join(item.reason.split()) in reading
            assert " ".join(item.gate.split()) in reading
            shown = screen.query_one("#why-reading")
            lines = shown.render().wrap(shown.content_region.width)
            assert len(lines) <= shown.content_region.height, "the reading is cut at its foot"
            assert screen.region.contains_region(shown.region)
            await press(pilot, "j")
        if size[0] >= 160:  # the reason takes the room the other columns leave
            widths = {str(c.key.value): c.width for c in table.columns.values()}
            assert widths["reason"] > 22


# The screens and dialogs the footer leads to, opened from the main list by these keys.
OPENED_BY = {"main": (), "filters": ("f",), "help": ("?",), "trash": ("T",), "inbox": ("I",),
             "projects": ("p",), "sessions": ("s",), "timeline": ("t",), "preview": ("i",),
             "anchors": ("a",), "edit": ("e",), "bulk": ("b",)}


def footers_on_screen(app):
    """Every footer the person sees: the top screen's, and a screen below's that shows."""
    from tui.widgets.footer import KeyFooter

    found = []
    for screen in app.screen_stack[1:]:
        found += [f for f in screen.query(KeyFooter) if f.display]
    return found


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pilot_test
async def test_the_footer_is_one_line_on_every_screen_and_none_shows_above_a_dialogs(demo_db, size):
    """Item 10: below 120 columns the footer wrapped to two lines, and over a dialog at 100x30
    the main screen's second line showed above the dialog's footer."""
    from textual.widgets._footer import FooterKey

    app = demo_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        main = app.screen
        for name, keys in OPENED_BY.items():
            await press(pilot, *keys)
            for footer in footers_on_screen(app):
                assert footer.region.height == 1, f"{name}: a footer of {footer.region.height} lines"
                assert footer.region.y == size[1] - 1, f"{name}: a footer at row {footer.region.y}"
                for key in footer.query(FooterKey):
                    if key.region.area:  # shown: whole, inside the footer
                        assert footer.region.contains_region(key.region), f"{name}: {key.description} cut"
            offered = [k.description for k in app.screen.query(FooterKey) if k.region.area]
            assert "Help" in offered or name in ("filters", "help", "edit", "bulk", "preview", "projects"), (name, offered)
            for _ in range(3):
                if app.screen is main:
                    break
                await press(pilot, "escape")
            assert app.screen is main, f"{name}: escape does not leave {app.screen!r}"


@pilot_test
async def test_the_anchors_screen_keeps_the_footers_order_and_offers_no_reanchor_without_anchors(demo_db):
    """Item 10: the anchors screen's footer put q Quit ? Help inline and offered r/w for a
    memory without anchors."""
    from textual.widgets._footer import FooterKey

    from tui.screens.anchors import AnchorScreen

    app = demo_app(demo_db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "a")
        assert isinstance(app.screen, AnchorScreen) and not app.screen.specs
        keys = [k for k in app.screen.query(FooterKey) if k.region.area]
        offered = [k.key for k in keys]
        assert "r" not in offered and "w" not in offered
        pinned = [k for k in keys if k.key in ("question_mark", "q")]
        assert pinned and all(k.region.x > app.size.width // 2 for k in pinned)  # at the right edge
        await press(pilot, "r", "w")
        assert app.screen.memory.status == "active"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pilot_test
async def test_the_filter_chips_fit_their_room_and_x_clears_is_never_cut(demo_db, size):
    """Item 10: at 160x48 the chips cut the hat value and "x clears" (their width stayed that of
    "no filters" when a filter was set)."""
    from store.browse.search import MemoryFilter
    from tui.widgets.filter_bar import FilterChips

    app = demo_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.screen.set_query(filter=MemoryFilter(types=("pitfall", "fix", "decision"), hats=("critic", "explorer"),
                                                 tags=("esi",), min_confidence=0.5))
        await settle(pilot)
        chips = app.screen.query_one(FilterChips)
        shown = chips.render()
        assert shown.cell_len <= chips.content_region.width, (str(shown), chips.content_region)
        assert str(shown).endswith("x clears")
        if size[0] >= 160:
            assert "hat: critic,explorer" in str(shown)


def test_the_insight_pages_byte_for_byte_example_prints_a_block_on_a_fresh_demo(tmp_path):
    """Item 12: docs/insight.md's "byte for byte" preview example printed "nothing to inject"."""
    import os
    import re
    import subprocess

    page = (ROOT / "docs" / "insight.md").read_text(encoding="utf-8")
    after = page[page.index("byte for byte"):]
    command = re.search(r"```sh\n(.*?)\n```", after, re.S).group(1)
    # The docs say `.venv/bin/`: the environment running the tests is that one (CI makes its own
    # elsewhere), as tests/test_docs_examples.py has it.
    import sys

    env = {**os.environ, "MEMDECK_DB": str(tmp_path / "memdeck.db"), "HOME": str(tmp_path)}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command.replace(".venv/bin/", f"{sys.prefix}/bin/")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("## Project Memory") and "nothing to inject" not in done.stderr
