"""The session log (`s`): the project's agent sessions with their counts, and one session's
activity stream. While the app is live, the stream polls for entries after the last one shown
(an indexed range read, off the UI thread, twice a second), so what `memdeck ingest --follow`
writes from another process appears within a second; the counts follow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, SelectionList, Static

from store.api import paging, session_log, Counts, Activity, SessionSummary, ACTIVITY_KINDS
from tui.requests import Requests
from tui.screens.insight import InsightScreen, short_id
from tui.text import one_line, stamp
from tui.widgets.activity_log import ActivityLog
from tui.widgets.fitted_table import Column, FittedTable
from tui.widgets.footer import KeyFooter
from tui.widgets.title_bar import TitleBar

POLL_SECONDS = 0.25
LIVE_RECHECK_SECONDS = 15.0  # how often a session shown live is checked for having gone idle


class SessionTable(FittedTable):
    """The sessions with their counts. Narrow, the marker count goes first, then the start,
    the duration and the hat; never the task."""

    HELP_TITLE = "Sessions"

    COLUMNS = (
        Column("live", "", 1), Column("session", "session", 9), Column("hat", "hat", 8, drop=4),
        Column("task", "task", 20, grow=True, max_width=60), Column("start", "start", 11, drop=2),
        Column("dur", "dur", 5, drop=3), Column("✚", "✚", 2), Column("↻", "↻", 2),
        Column("mk", "mk", 2, drop=1), Column("✗", "✗", 2),
    )


def duration(seconds: float) -> str:
    """A duration in at most five characters: `47s`, `12m`, `2h05`, `3d`."""
    if seconds < 60:
        return f"{int(seconds)}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}"
    return f"{int(seconds // 86400)}d"


class KindFilter(ModalScreen[tuple[str, ...] | None]):
    """Which activity kinds the stream shows."""

    HELP_TITLE = "Activity kinds"

    BINDINGS = [
        Binding("enter,ctrl+s", "apply", "Apply", priority=True),  # before the list toggles with enter
        Binding("a", "all", "All kinds"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, kinds: Sequence[str]) -> None:
        super().__init__()
        self.kinds = set(kinds or ACTIVITY_KINDS)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Show these kinds of activity", classes="dialog--title")
            yield SelectionList[str](*((k.replace("_", " "), k, k in self.kinds) for k in ACTIVITY_KINDS),
                                     id="kinds")
            yield Static("space toggles · a all · enter apply · escape cancel", classes="dialog--keys")
        yield KeyFooter()

    def action_apply(self) -> None:
        chosen = tuple(k for k in ACTIVITY_KINDS if k in self.query_one(SelectionList).selected)
        self.dismiss(() if len(chosen) == len(ACTIVITY_KINDS) else chosen)

    def action_all(self) -> None:
        self.query_one(SelectionList).select_all()

    def action_cancel(self) -> None:
        self.dismiss(None)


class SessionsScreen(InsightScreen):
    """Sessions of the project, newest first; `session_id` is the one opened first."""

    HELP_TITLE = "Session log"

    BINDINGS = [
        Binding("f", "kinds", "Kinds…", tooltip="Show only some kinds of activity"),
        Binding("tab", "app.focus_next", "Next pane", show=False),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    DEFAULT_CSS = """
    SessionsScreen #sessions { width: 45%; max-width: 84; height: 1fr; }
    SessionsScreen.-narrow #session-panes { layout: vertical; }
    SessionsScreen.-narrow #sessions { width: 1fr; max-width: 100%; height: 40%; }
    SessionsScreen.-narrow #session-pane { width: 1fr; height: 1fr; }
    SessionsScreen #session-pane { width: 1fr; }
    SessionsScreen #session-heading { height: 1; padding: 0 1; }
    SessionsScreen #activity-log { height: 1fr; }
    SessionsScreen #sessions, SessionsScreen #activity-log {
        border: round $border-blurred; border-title-color: $text-muted;
    }
    SessionsScreen #sessions:focus, SessionsScreen #activity-log:focus {
        border: round $border; border-title-color: $text;
    }
    """

    @dataclass
    class SummariesLoaded(Message, bubble=False):
        asked: int
        summaries: list[SessionSummary]
        counts: Counts

    @dataclass
    class EntriesLoaded(Message, bubble=False):
        """A session's entries, read for `kinds`: the whole log (`replace`), or a poll's new ones.
        `opened`: the number of the `_open` they follow."""

        opened: int
        session_id: str
        kinds: tuple[str, ...]
        replace: bool
        activities: list[Activity]

    def __init__(self, session_id: str | None = None) -> None:
        super().__init__()
        self.session_id = session_id
        self.kinds: tuple[str, ...] = ()
        self.summaries: dict[str, SessionSummary] = {}
        self._polling = False  # a poll is on its way: the next tick waits for it
        self._summaries = Requests()
        self._opens = Requests()  # each session (or kinds filter) opened: polls follow the latest

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="session-panes"):
            yield SessionTable(id="sessions")
            with Vertical(id="session-pane"):
                yield Static(id="session-heading")
                yield ActivityLog(id="activity-log")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(TitleBar).now = self.app.now()
        self.query_one(ActivityLog).focus()
        self.reload()
        if self.app.live:
            self.set_interval(POLL_SECONDS, self._poll)
        # A live session nothing happens in stops being live after `sessions.idle_minutes`
        # (one a hook started and no one stopped): read the summaries again now and then, or
        # it would stay "live" on this screen for good.
        self.set_interval(LIVE_RECHECK_SECONDS, self._recheck_live)

    # -- loading ---------------------------------------------------------------------------------

    def reload(self) -> None:
        """The summaries, and the shown session's new entries (the app calls this when another
        process wrote to the store)."""
        self._load_summaries()
        if self.session_id is not None:
            if self.query_one(ActivityLog).session_id == self.session_id:
                self._poll()
            else:
                self._open(self.session_id)

    def _recheck_live(self) -> None:
        if any(summary.live for summary in self.summaries.values()):
            self._load_summaries()

    def _poll(self) -> None:
        log = self.query_one(ActivityLog)
        if self.session_id is not None and log.session_id == self.session_id and not self._polling:
            self._polling = True
            self._load_entries(self._opens.latest, self.session_id, self.kinds, log.last_seq, replace=False)

    def _open(self, session_id: str) -> None:
        self.session_id = session_id
        self._load_entries(self._opens.new(), session_id, self.kinds, -1, replace=True)

    def _load_summaries(self) -> None:
        self._read_summaries(self._summaries.new())

    @work(thread=True, exclusive=True, group="session-summaries")
    def _read_summaries(self, asked: int) -> None:
        store = self.app.store
        summaries, counts = self.app.db_call(lambda: (session_log.summaries(store), paging.counts(store)))
        self.post_message(self.SummariesLoaded(asked, summaries, counts))

    # Not exclusive: a thread worker cancelled before it starts never runs, and a dropped poll
    # is a second of delay. Answers that overlap are harmless: only entries after the last one
    # shown are appended.
    @work(thread=True, group="session-entries")
    def _load_entries(self, opened: int, session_id: str, kinds: tuple[str, ...], after_seq: int, *,
                      replace: bool) -> None:
        new = self.app.db_call(session_log.tail, self.app.store, session_id, after_seq, kinds)
        self.post_message(self.EntriesLoaded(opened, session_id, kinds, replace, new))

    def on_sessions_screen_entries_loaded(self, message: EntriesLoaded) -> None:
        session_id, kinds, replace, new = message.session_id, message.kinds, message.replace, message.activities
        if not replace:
            self._polling = False
        if not self._opens.is_latest(message.opened) or session_id != self.session_id or kinds != self.kinds:
            # For a session or a filter no longer shown, or a whole log read before the latest
            # open (applied late, it would take the log back to the tail and following).
            return
        log = self.query_one(ActivityLog)
        if replace:
            log.replace(session_id, new)
        elif log.session_id == session_id:
            arrived = [a for a in new if a.seq > log.last_seq]
            log.append(arrived)
            if arrived:
                self._load_summaries()  # the counts moved
        self._show_heading()

    def on_sessions_screen_summaries_loaded(self, message: SummariesLoaded) -> None:
        if not self._summaries.is_latest(message.asked):
            return  # read before a newer request: its counts may be from before a write
        summaries, counts = message.summaries, message.counts
        self.query_one(TitleBar).counts = counts
        before, self.summaries = self.summaries, {s.session.id: s for s in summaries}
        table = self.query_one(SessionTable)
        table.border_title = f"Sessions {len(summaries)}"
        if [str(k.value) for k in table.rows] == [s.session.id for s in summaries]:
            for summary in summaries:  # only the sessions that moved: usually the live one
                if summary != before.get(summary.session.id):
                    table.update_row(summary.session.id, self._cells(summary))
        else:
            table.set_rows([(summary.session.id, self._cells(summary)) for summary in summaries])
        if self.session_id is None and summaries:
            self._open(summaries[0].session.id)
        if self.session_id in self.summaries:
            table.move_cursor(row=table.get_row_index(self.session_id), animate=False)
        self._show_heading()

    def _cells(self, summary: SessionSummary) -> dict:
        s = summary.session
        return {
            "live": Text("●", style="green") if summary.live else "",
            "session": short_id(s.id), "hat": one_line(s.hat) or "-",
            "task": Text(one_line(summary.task), no_wrap=True, overflow="ellipsis"),
            "start": stamp(s.started_at, "%m-%d %H:%M"), "dur": duration(summary.duration),
            "✚": _count(summary.created), "↻": _count(summary.reinforced), "mk": _count(summary.markers),
            "✗": Text(str(summary.errors), style="red") if summary.errors else _count(0),
        }

    def _show_heading(self) -> None:
        summary = self.summaries.get(self.session_id or "")
        log = self.query_one(ActivityLog)
        heading = Text()
        if summary is not None:
            s = summary.session
            heading.append(f"{short_id(s.id)} ", style="bold")
            heading.append(f"{one_line(s.hat) or 'no hat'} · {one_line(s.agent) or 'agent?'} · ")
            heading.append(f"\"{one_line(summary.task)}\"" if summary.task else "no task", style="italic")
            heading.append("  live ●" if summary.live else f"  ended {stamp(summary.ended_at, '%m-%d %H:%M')}",
                           style="green" if summary.live else "dim")
        self.query_one("#session-heading", Static).update(heading)
        log.border_title = f"Activity {len(log.activities)}" + (
            f" · only {', '.join(k.replace('_', ' ') for k in self.kinds)}" if self.kinds else "")
        log.border_subtitle = "following" if log.follow else "paused · G follows"

    # -- choosing ------------------------------------------------------------------------------

    @on(DataTable.RowHighlighted, "#sessions")
    def _session_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None:  # an empty table: `G` highlights row -1, which has no key
            return
        session_id = str(event.row_key.value)
        # Only the person's moves open a session; filling the table moves the cursor too.
        if event.data_table.has_focus and session_id != self.session_id:
            self._open(session_id)

    @on(DataTable.RowSelected, "#sessions")
    def _session_selected(self) -> None:
        self.query_one(ActivityLog).focus()

    @on(ActivityLog.Moved)
    def _log_moved(self) -> None:
        self._show_heading()

    @on(ActivityLog.Opened)
    def _open_memory(self, message: ActivityLog.Opened) -> None:
        self.app.go_to(message.activity.memory_id)

    def show_session(self, session_id: str) -> None:
        if session_id != self.session_id:
            self._open(session_id)

    def action_kinds(self) -> None:
        def chosen(kinds: tuple[str, ...] | None) -> None:
            if kinds is not None and kinds != self.kinds:
                self.kinds = kinds
                if self.session_id is not None:
                    self._open(self.session_id)

        self.app.push_screen(KindFilter(self.kinds), chosen)


def _count(value: int) -> Text:
    return Text(str(value), style="" if value else "dim")
