"""A walk of the whole workbench by keys alone, as a newcomer would take it: at 80×24, 100×30
and 160×48, on the demo and on an empty store, every screen and dialog the footer leads to is
opened and every key its footer offers is pressed (one level deeper too). After each key the
app is still running and the focused widget is on screen, whole (or, when larger than its
pane, in part); no footer takes a second line; the preview's reading of the highlighted
candidate (its whole reason) fits its lines.

A screen reached again the same way (the trash by `T` from the inbox after the main screen;
the same dialog by the same key from the same screen) is checked and left, not walked again:
each of its keys was pressed the first time. The demo store is built once (`demo_template`)
and copied for each case."""

from __future__ import annotations

import pytest
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from textual.screen import Screen

from tui.testing import demo_app, settle

pytestmark = pytest.mark.slow

SIZES = [(80, 24), (100, 30), (160, 48)]
LEAVING = {"q", "ctrl+q", "ctrl+c"}  # they end the walk, not a screen
DEPTH = 2  # main screen → a screen or dialog → one opened from there
# The main screen's keys to the screens its footer leaves to the help (`?` lists them).
HIDDEN_WAYS = ("t", "s", "i", "a", "v", "L")


def offered_keys(screen: Screen) -> list[str]:
    """The keys the screen's footer shows, in its order."""
    keys = []
    for key, active in screen.active_bindings.items():
        if active.binding.show and active.enabled and key not in LEAVING and key not in keys:
            keys.append(key)
    return keys


# Keys that lead to the same screen from anywhere (the app's): a screen opened by one is the
# same screen whichever screen it was pressed on.
APP_WAYS = {"p", "T", "I", "?", "question_mark", "ctrl+p"}


def text_fits(app, where: str) -> None:
    """No footer wraps to a second line; the preview's reading of its highlighted candidate (the
    whole reason, which the table's column may cut) is not cut at its foot."""
    from tui.widgets.footer import KeyFooter

    for footer in app.screen.query(KeyFooter):
        if footer.display and footer.region.area:
            assert footer.region.height == 1, f"{where}: the footer takes {footer.region.height} lines"
    for reading in app.screen.query("#why-reading"):
        if reading.region.area:
            lines = reading.render().wrap(reading.content_region.width)
            assert len(lines) <= reading.content_region.height, f"{where}: the reason is cut"


def check(app, where: str) -> None:
    assert app.is_running and app._exception is None, f"{where}: the app stopped ({app._exception!r})"
    text_fits(app, where)
    focused = app.focused
    if focused is None:
        return
    shown = app.screen._compositor.visible_widgets.get(focused)
    assert shown is not None, f"{where}: the focused {focused!r} is out of sight"
    region, clip = shown
    seen = region.intersection(clip)
    larger = region.height > clip.height or region.width > clip.width
    assert seen == region or (larger and seen.area > 0), \
        f"{where}: the focused {focused!r} is cut ({region} shown as {seen})"


def walked_kinds(walked: set) -> set:
    return {way for way in walked if isinstance(way, type)}


async def back_to(pilot, screen: Screen, where: str) -> None:
    """Close what the walk opened over `screen`: escape, as a person would."""
    app = pilot.app
    for _ in range(4):
        if app.screen is screen or screen not in app.screen_stack:
            break
        await pilot.press("escape")
        await settle(pilot)
        check(app, f"{where} escape")
    assert app.screen is screen, f"{where}: escape does not leave {app.screen!r}"


async def walk(pilot, path: str, depth: int, opened_by: str | None = None, more: tuple[str, ...] = (),
               walked: set | None = None) -> None:
    """Press every key `app.screen`'s footer offers; a key that closes the screen (apply,
    cancel) is followed by `opened_by`, pressed on the screen below, to open it again. A screen
    reached the way one was already walked (`walked`) is not walked again."""
    app = pilot.app
    screen = app.screen
    below = app.screen_stack[-2] if len(app.screen_stack) > 1 else None
    walked = set() if walked is None else walked
    way = ((type(screen), opened_by) if opened_by in APP_WAYS
           else (type(below) if below is not None else None, opened_by, type(screen)))
    if way in walked:
        return
    walked.add(way)
    home = app.focused  # each key is pressed from where the screen opened (`/` moves to the search)
    # Tab reaches each control, and each is in sight: once for each kind of screen.
    tabbed = type(screen) in walked_kinds(walked)
    walked.add(type(screen))
    for step in range(0 if tabbed else len(screen.focus_chain)):
        await pilot.press("tab")
        await settle(pilot)
        check(app, f"{path} tab×{step + 1}")
        if app.screen is not screen:
            break
    for key in [*offered_keys(screen), *more]:
        if screen not in app.screen_stack:  # the last key closed it
            assert below is not None and opened_by is not None, f"{path}: the main screen closed"
            await back_to(pilot, below, path)
            await pilot.press(opened_by)
            await settle(pilot)
            screen, home = app.screen, app.focused
        if app.screen is not screen:
            await back_to(pilot, screen, path)
        if home is not None and app.focused is not home and home.is_attached:
            home.focus()  # the key's press settles after it
        where = f"{path} {key}"
        await pilot.press(key)
        await settle(pilot)
        check(app, where)
        if app.screen is not screen and screen in app.screen_stack:
            if depth < DEPTH:
                await walk(pilot, where, depth + 1, key, walked=walked)
            await back_to(pilot, screen, where)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("store", ["demo", "empty"])
@pilot_test
async def test_every_screen_by_keys_alone_keeps_running_and_the_focus_in_sight(demo_db, tmp_path, store, size):
    app = demo_app(demo_db if store == "demo" else tmp_path / "empty.db", build=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        check(app, "start")
        await walk(pilot, f"{store} {size[0]}x{size[1]}:", 1, more=HIDDEN_WAYS)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pilot_test
async def test_the_anchors_of_a_demo_memory_whose_code_changed_by_keys_alone(demo_db, size):
    """The demo's anchored memory (its code changed after it was anchored): the anchors view shows
    the change, and every key its footer offers (re-anchor, edit, wrong) is walked like the rest."""
    import io

    from rich.console import Console
    from ui_support import memory_titled

    from tui.screens.anchors import AnchorScreen

    app = demo_app(demo_db, build=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.screen.go_to(memory_titled(app, "ESI rate limit returns 420").id)
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, AnchorScreen)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#anchor-body").content)
        shown = console.export_text()
        assert "changed src/esi/client.ts:5-10" in shown and "+  if (response.status === 429) {" in shown
        await walk(pilot, f"anchors {size[0]}x{size[1]}:", 2, opened_by="a")
