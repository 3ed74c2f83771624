"""The confidence timeline (`t`): the chosen memory's confidence over time from its events, the
event under the cursor named with its session and time, and the project view beside it
(confidence spread, memories gaining and losing). With a selection, a list picks which
memory is drawn."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from store.api import (
    paging, NotFound, Memory, ProjectConfidence, Timeline, TimelinePoint, memory_timeline, project_confidence,
)
from tui.requests import Requests
from tui.screens.insight import InsightScreen, short_id
from tui.text import one_line, stamp
from tui.widgets.confidence_chart import ConfidenceChart, legend
from tui.widgets.confidence_spread import ConfidenceSpread
from tui.widgets.footer import KeyFooter
from tui.widgets.title_bar import TitleBar


class TimelineScreen(InsightScreen):
    """Timelines of `memory_ids` (the main list's selection, or its cursor's memory)."""

    HELP_TITLE = "Timeline"

    BINDINGS = [
        Binding("enter", "open_session", "Session", tooltip="Open the session of the event under the cursor"),
        Binding("tab", "app.focus_next", "Next pane", show=False),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    DEFAULT_CSS = """
    TimelineScreen #timeline-chart { border: round $border; border-title-color: $text; }
    TimelineScreen #timeline-point { height: 1; padding: 0 1; }
    TimelineScreen #timeline-legend { height: auto; max-height: 4; padding: 0 1; color: $text-muted; }
    TimelineScreen #timeline-lower { height: 15; }
    TimelineScreen #timeline-memories, TimelineScreen ConfidenceSpread {
        width: 1fr; border: round $border-blurred; border-title-color: $text-muted;
    }
    TimelineScreen #timeline-memories:focus { border: round $border; }
    TimelineScreen.-short #timeline-lower { height: 8; }
    TimelineScreen.-short ConfidenceSpread { overflow-y: auto; }
    """

    @dataclass
    class Loaded(Message, bubble=False):
        """The chosen memory's timeline (None: none chosen, or purged), the project's spread,
        the selection's memories (on the first load only) and the counts."""

        asked: int
        timeline: Timeline | None
        spread: ProjectConfidence
        titles: list[Memory]
        counts: paging.Counts

    def __init__(self, memory_ids: list[str]) -> None:
        super().__init__()
        self.memory_ids = memory_ids
        self.current = memory_ids[0] if memory_ids else None
        self._loads = Requests()
        self.point: TimelinePoint | None = None
        self.timeline: Timeline | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="screen-heading", classes="screen--heading")
        yield ConfidenceChart(threshold=float(self.app.store.config.confidence.inactive_below),
                              id="timeline-chart")
        yield Static(id="timeline-point")
        yield Static("", id="timeline-legend", markup=False)
        with Horizontal(id="timeline-lower"):
            yield OptionList(id="timeline-memories")
            yield ConfidenceSpread(id="timeline-spread")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(TitleBar).now = self.app.now()
        self.query_one("#timeline-chart", ConfidenceChart).border_title = "Confidence"
        memories = self.query_one("#timeline-memories", OptionList)
        memories.display = len(self.memory_ids) > 1
        memories.border_title = f"Selection {len(self.memory_ids)}"
        self.query_one(ConfidenceChart).focus()
        self.reload()

    # -- loading ---------------------------------------------------------------------------------

    def reload(self) -> None:
        self._load(self._loads.new(), self.current,
                   first=not self.query_one("#timeline-memories", OptionList).option_count)

    @work(thread=True, exclusive=True, group="timeline")
    def _load(self, asked: int, memory_id: str | None, first: bool = False) -> None:
        store = self.app.store

        def read():
            timeline = None
            if memory_id is not None:
                try:
                    timeline = memory_timeline(store, memory_id)
                except NotFound:  # purged since the screen opened
                    timeline = None
            titles = store.get_many(self.memory_ids) if first and len(self.memory_ids) > 1 else []
            return timeline, project_confidence(store), titles, paging.counts(store)

        timeline, spread, titles, counts = self.app.db_call(read)
        self.post_message(self.Loaded(asked, timeline, spread, titles, counts))

    def on_timeline_screen_loaded(self, message: Loaded) -> None:
        if not self._loads.is_latest(message.asked):
            return  # another memory was chosen, or the store changed, since it was asked
        timeline, spread, titles, counts = message.timeline, message.spread, message.titles, message.counts
        self.timeline = timeline
        self.query_one(TitleBar).counts = counts
        self.query_one(ConfidenceSpread).show(spread)
        if titles:
            self.query_one("#timeline-memories", OptionList).add_options(
                Option(Text.assemble((f"{m.confidence:.2f} ", "dim"), one_line(m.title)), id=m.id)
                for m in titles)
        heading = Text("Timeline ─ ", style="bold")
        if timeline is None:
            heading.append("no memory chosen: put the cursor on one in the list, or select several",
                           style="dim")
        else:
            heading.append(f"{timeline.memory.id} ")
            heading.append(one_line(timeline.memory.title))
            heading.append(f"  {timeline.memory.status} · now {timeline.memory.confidence:.2f}", style="dim")
        self.query_one("#screen-heading", Static).update(heading)
        self.query_one(ConfidenceChart).show(timeline, self.app.now())
        # The marks drawn, all of them: in lines of the legend's width (its padding left out).
        self._kinds = [p.kind for p in timeline.points] if timeline else []
        self._show_legend()

    def _show_legend(self) -> None:
        width = max(20, (self.size.width or self.app.size.width) - 4)
        kinds = getattr(self, "_kinds", [])
        self.query_one("#timeline-legend", Static).update(legend(kinds, width) if kinds else "")

    def on_resize(self) -> None:
        self._show_legend()

    # -- the event under the cursor --------------------------------------------------------------

    @on(ConfidenceChart.PointHighlighted)
    def _point(self, message: ConfidenceChart.PointHighlighted) -> None:
        self.point = message.point
        self.query_one("#timeline-point", Static).update(self._describe(message.point))

    def _describe(self, point: TimelinePoint | None) -> Text:
        if point is None:
            return Text("")
        parts: list[tuple[str, str]] = [("▸", ""), (stamp(point.at), "bold")]
        if point.author:  # who made the change, early: the line is cut at the screen's edge
            parts.append((one_line(point.author), "italic"))
        parts.append((point.kind.replace("_", " "), "bold"))
        if abs(point.change) >= 0.005:
            parts.append((f"{point.change:+.2f}", "green" if point.change > 0 else "red"))
        parts.append((f"→ {point.confidence:.2f}", ""))
        session = self.timeline.sessions.get(point.session_id) if self.timeline and point.session_id else None
        if session is not None:
            parts.append((f"  session {short_id(session.id)} ({one_line(session.hat) or 'no hat'}, "
                          f"\"{one_line(session.task)}\")", "dim"))
        elif point.session_id:
            parts.append((f"  session {one_line(point.session_id)}", "dim"))
        parts.append((f"  by {one_line(point.actor)}", "dim"))
        return Text(" ").join(Text(part, style=style) for part, style in parts)

    @on(OptionList.OptionHighlighted, "#timeline-memories")
    def _memory_chosen(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and event.option.id != self.current:
            self.current = event.option.id
            self._load(self._loads.new(), self.current)

    def action_open_session(self) -> None:
        point = self.point
        session_id = point.session_id if point else None
        if session_id is None and self.timeline is not None:
            session_id = self.timeline.memory.session_id
        if not session_id:
            self.notify("This event belongs to no session", severity="warning")
            return
        self.app.open_sessions(session_id)
