"""One session's activity stream: a virtual list (Line API) of log entries with a cursor, that
follows the tail as entries are appended, until the person moves up or scrolls back; `G`
follows again. Enter on an entry that touched a memory asks to open it. The cursor and its keys
are `CursorList`'s."""

from __future__ import annotations

from typing import Sequence

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip

from store.api import Activity
from tui.text import one_line, stamp
from tui.widgets.cursor_list import CursorList, cursor_bindings

# How each kind reads in the stream: (label, component class for its colour).
KIND_LABELS = {
    "prompt": ("prompt", "prompt"),
    "assistant": ("agent", ""),
    "thinking": ("thinking", "dim"),
    "tool_use": ("tool", ""),
    "tool_result": ("result", "dim"),
    "tool_error": ("✗ error", "error"),
    "marker": ("marker", "marker"),
    "marker_rejected": ("✗ marker", "error"),
    "memory_created": ("✚ memory", "memory"),
    "memory_reinforced": ("↻ memory", "memory"),
    "candidate": ("? inbox", "marker"),
    "injected": ("⇢ injected", "memory"),
    "lookup": ("⌕ lookup", "dim"),
    "feedback": ("± feedback", "memory"),
    "summary": ("summary", "prompt"),
}
LABEL_WIDTH = 11


class ActivityLog(CursorList, can_focus=True):
    HELP_TITLE = "Activity"

    BINDINGS = [
        *cursor_bindings(Binding("G,end", "follow", "Follow", tooltip="Jump to the newest entry and follow new ones")),
        Binding("enter", "open", "Open memory", tooltip="Open the memory this entry touched"),
    ]

    COMPONENT_CLASSES = {
        "activity-log--time", "activity-log--cursor", "activity-log--prompt", "activity-log--dim",
        "activity-log--error", "activity-log--marker", "activity-log--memory", "activity-log--link",
    }

    DEFAULT_CSS = """
    ActivityLog { background: $surface; overflow-x: hidden; }
    ActivityLog > .activity-log--time { color: $text-muted; }
    ActivityLog > .activity-log--cursor { background: $boost; text-style: bold; }
    ActivityLog:focus > .activity-log--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    ActivityLog > .activity-log--prompt { text-style: bold; }
    ActivityLog > .activity-log--dim { color: $text-muted; }
    ActivityLog > .activity-log--error { color: $error; }
    ActivityLog > .activity-log--marker { color: $warning; }
    ActivityLog > .activity-log--memory { color: $success; }
    ActivityLog > .activity-log--link { color: $accent; }
    """

    class Opened(Message):
        """Enter on an entry that touched a memory."""

        def __init__(self, activity: Activity) -> None:
            super().__init__()
            self.activity = activity

    class Moved(Message):
        """The cursor or the following state changed: the screen updates its captions."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.session_id: str | None = None
        self.activities: list[Activity] = []
        self.follow = True

    @property
    def row_count(self) -> int:
        return len(self.activities)

    @property
    def last_seq(self) -> int:
        return self.activities[-1].seq if self.activities else -1

    @property
    def cursor_activity(self) -> Activity | None:
        return self.activities[self.cursor] if 0 <= self.cursor < len(self.activities) else None

    def replace(self, session_id: str, activities: Sequence[Activity]) -> None:
        """Show another session (or another filter) from its newest entry, following."""
        self.session_id = session_id
        self.activities = list(activities)
        self.follow = True
        self._resized()
        self._to_tail()

    def append(self, activities: Sequence[Activity]) -> None:
        """New entries at the tail; the view follows them only if it was following."""
        if not activities:
            return
        self.activities.extend(activities)
        self._resized()
        if self.follow:
            self._to_tail()
        else:
            self.refresh()
            self.post_message(self.Moved())

    def _to_tail(self) -> None:
        self.cursor = max(0, len(self.activities) - 1)
        self._scroll_to_tail()
        self.refresh()
        self.post_message(self.Moved())

    def _scroll_to_tail(self) -> None:
        """The view ends with the newest entry: now, and again once the layout has given this
        log its height (a log opened before that showed its oldest entries)."""
        def scroll() -> None:
            if self.follow:
                height = self.scrollable_content_region.height
                self.scroll_to(y=max(0, len(self.activities) - height), animate=False, immediate=True)

        scroll()
        self.call_after_refresh(scroll)

    # -- drawing --------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = self._row_index(y)
        if index >= len(self.activities):
            return Strip.blank(width, self.rich_style)
        text = self._row(self.activities[index])
        base = self.rich_style
        if index == self.cursor:
            cursor = self.get_component_rich_style("activity-log--cursor")
            text.stylize(cursor)  # over the kinds' colours: one even bar across the row
            base = base + cursor
        segments = list(text.render(self.app.console))
        return Strip(segments).crop(0, width).adjust_cell_length(width, base).apply_style(base)

    def _row(self, activity: Activity) -> Text:
        label, component = KIND_LABELS.get(activity.kind, (activity.kind, ""))
        style = self.get_component_rich_style(f"activity-log--{component}") if component else None
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(stamp(activity.at, "%H:%M:%S") + " ", style=self.get_component_rich_style("activity-log--time"))
        label = label[:LABEL_WIDTH]
        text.append(label, style=style)
        text.append(" " * (LABEL_WIDTH + 1 - len(label)))
        if activity.memory_id and activity.memory_id not in activity.summary:
            text.append(f"{activity.memory_id} ", style=self.get_component_rich_style("activity-log--link"))
        text.append(one_line(activity.summary), style=style if component in ("dim", "error") else None)
        return text

    # -- cursor and following ---------------------------------------------------------------------

    def _cursor_set(self) -> None:
        self.follow = self.cursor == len(self.activities) - 1  # on the newest entry: following again

    def _announce(self) -> None:
        self.post_message(self.Moved())

    def action_follow(self) -> None:
        self.follow = True
        self._to_tail()

    def action_open(self) -> None:
        activity = self.cursor_activity
        if activity is None or not activity.memory_id:
            self.notify("This entry touched no memory", severity="warning")
            return
        self.post_message(self.Opened(activity))

    def on_mouse_scroll_up(self) -> None:
        """Scrolling back through the log stops following the tail."""
        if self.follow:
            self.follow = False
            self.post_message(self.Moved())

    def on_resize(self) -> None:
        self._resized()
        if self.follow:
            self._scroll_to_tail()
