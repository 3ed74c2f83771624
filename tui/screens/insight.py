"""What the insight views (timeline, session log, injection preview, anchors) share. Their
workers hand answers back as typed messages to the screen (docs/development.md, "Workers"), so an
answer that arrives after the screen closed is dropped with the screen's queue instead of touching
widgets that are gone."""

from __future__ import annotations

from tui.screens.base import StoreScreen
from tui.text import one_line


def short_id(session_id: str) -> str:
    """A session id in at most nine cells: uuids are told apart by their first eight."""
    return one_line(session_id if len(session_id) <= 9 else session_id[:8] + "…")


class InsightScreen(StoreScreen):
    """A screen over the store's history rather than its list of memories."""
