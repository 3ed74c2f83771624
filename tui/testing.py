"""What the UI tests, the screenshot script and the benchmark share: the demo store as of a
fixed moment, an app on it that holds still (frozen clock, no blink, no animation), and a way
to wait until the app has finished its store work instead of sleeping."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from store.api import FrozenClock, Config, MAIN_PROJECT, build_demo
from tui.app import MemdeckApp

# The demo's "now" in tests and screenshots: 2026-03-01 12:00 UTC.
DEMO_NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc).timestamp()
SIZE = (160, 45)


def demo_app(path: Path, *, project: str = MAIN_PROJECT, build: bool = True, live: bool = False,
             clock: FrozenClock | None = None) -> MemdeckApp:
    """An app that holds still on the demo store at `path` (built there first if `build`)."""
    if build and not path.exists():
        build_demo(path, now=DEMO_NOW)
    return MemdeckApp(path, project=project, clock=clock or FrozenClock(DEMO_NOW),
                      config=Config.defaults(), live=live, still=True)


async def settle(pilot: Pilot) -> None:
    """Wait until no worker runs, every message they posted has been handled, and the footer
    shows the keys of what now has focus (it redraws itself after a refresh: on a loaded
    machine, Textual's idle check can say idle before it has)."""
    for _ in range(10):
        await pilot.pause()
        if not any(w.is_running for w in pilot.app.workers):
            await pilot.pause()
            if not any(w.is_running for w in pilot.app.workers):
                break
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:  # a newer keystroke replaced it: wait for the newer one
            continue
    for _ in range(100):
        if _footer_current(pilot.app):
            return
        await pilot.pause(0.01)


def _footer_current(app) -> bool:
    """Whether every footer on the screen shows the keys its screen's bindings now give."""
    from textual.widgets._footer import FooterKey

    from tui.widgets.footer import KeyFooter

    screen = app.screen
    wanted = {binding.action for _, binding, _, _ in screen.active_bindings.values() if binding.show}
    for footer in screen.query(KeyFooter):
        if not footer._bindings_ready:
            continue
        # The footer leaves out keys that do not fit: it is current when it was composed from
        # the bindings there are now and shows no key of older ones.
        shown = {key.action for key in footer.query(FooterKey)}
        extra = {action for action in shown - wanted if not action.endswith("command_palette")}
        if footer.composed_for != wanted or extra:
            return False
    return True
