"""What the insight views (timeline, session log, injection preview) share: their workers hand
answers back as a message to the screen, so an answer that arrives after the screen closed is
dropped with the screen's queue instead of touching widgets that are gone."""

from __future__ import annotations

from typing import Any, Callable

from textual.message import Message

from tui.screens.base import StoreScreen
from tui.text import one_line


def short_id(session_id: str) -> str:
    """A session id in at most nine cells: uuids are told apart by their first eight."""
    return one_line(session_id if len(session_id) <= 9 else session_id[:8] + "…")


class InsightScreen(StoreScreen):
    class Loaded(Message):
        """A worker's answer: `show(*args)` runs on the screen's own thread."""

        def __init__(self, show: Callable[..., None], args: tuple[Any, ...]) -> None:
            super().__init__()
            self.show = show
            self.args = args

    def deliver(self, show: Callable[..., None], *args: Any) -> None:
        """From a worker thread: have `show(*args)` run on the screen (post_message is thread-safe)."""
        self.post_message(self.Loaded(show, args))

    def on_insight_screen_loaded(self, message: Loaded) -> None:
        message.show(*message.args)
