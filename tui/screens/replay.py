"""The replay screen (`memdeck replay --open`, or "Replay a history" in the command palette):
a history's sessions along time, one row per lesson memdeck captured (re-taught ones first),
marks for taught / injected / taught again; the row under the cursor opens its memory and the
prompts where it was taught again. docs/replay.md.

From the palette the replay itself (reading the history, a scratch store, every session through
the hooks) runs in a thread worker and posts `Loaded`; the screen draws only the `Replay` it is
handed, which holds the words it shows, so moving the cursor reads no store.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from store.api import Replay
from tui.requests import Requests
from tui.widgets.footer import KeyFooter

# One character per session (or per group of sessions, when they outnumber the columns), the
# strongest mark of the group shown.
MARKS = {"again": "!", "said": "✓", "taught": "T", "injected": "i", "none": "·"}
_STRENGTH = {"!": 4, "✓": 3, "T": 2, "i": 1, "·": 0}
LEGEND = "T taught (captured at its end) · i injected · ! taught again · ✓ taught again after memdeck said it"


def _day(at: float) -> str:
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%d")


@dataclass(frozen=True)
class LessonRow:
    memory_id: str
    title: str
    content: str
    marks: tuple[str, ...]  # one per session
    taught_in: int | None  # the session it was captured in
    again: tuple[tuple[int, int, bool], ...]  # (session, prompt, injected before)


def lesson_rows(replay: Replay) -> list[LessonRow]:
    """A row per memory the replay kept, the re-taught ones first, each in order of capture."""
    if not replay.sessions:
        return []
    kept = replay.after[-1]
    first: dict[str, int] = {}
    for session in replay.sessions:
        for memory_id in session.created:
            first.setdefault(memory_id, session.index)
    again: dict[str, list[tuple[int, int, bool]]] = {}
    for session in replay.sessions:
        for r in session.reteachings:
            again.setdefault(r.memory_id, []).append((r.session, r.prompt, r.injected_before))
    rows = []
    for memory_id, memory in kept.items():
        if memory.status != "active" and memory_id not in again:
            continue
        marks = []
        for session in replay.sessions:
            said = [a for a in again.get(memory_id, ()) if a[0] == session.index]
            if said:
                marks.append(MARKS["said"] if said[0][2] else MARKS["again"])
            elif first.get(memory_id) == session.index:
                marks.append(MARKS["taught"])
            elif memory_id in session.injected_before(len(session.prompts)):
                marks.append(MARKS["injected"])
            else:
                marks.append(MARKS["none"])
        rows.append(LessonRow(memory_id, memory.title, memory.content, tuple(marks), first.get(memory_id),
                              tuple(again.get(memory_id, ()))))
    rows.sort(key=lambda r: (not r.again, r.taught_in if r.taught_in is not None else math.inf, r.title))
    return rows


def squeeze(marks: tuple[str, ...], width: int) -> str:
    """`marks` in at most `width` characters: each character the strongest of its group."""
    if width <= 0:
        return ""
    size = max(1, math.ceil(len(marks) / width))
    return "".join(max(marks[i:i + size], key=_STRENGTH.__getitem__) for i in range(0, len(marks), size))


class ReplayScreen(Screen):
    HELP_TITLE = "Replay"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    @dataclass
    class Loaded(Message, bubble=False):
        asked: int
        replay: Replay | None
        problem: str | None = None

    def __init__(self, replay: Replay | None = None, paths: list[Path] | None = None) -> None:
        super().__init__()
        self.replay = replay
        self.paths = paths or []
        self.rows: list[LessonRow] = []
        self._requests = Requests()

    def compose(self) -> ComposeResult:
        yield Static("", id="replay-head", markup=False)
        yield DataTable(id="replay-rows", cursor_type="row", zebra_stripes=False)
        yield Static("", id="replay-detail", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.styles.height = "1fr"
        self.query_one("#replay-detail", Static).styles.height = "auto"
        self.query_one("#replay-detail", Static).styles.max_height = 8
        if self.replay is not None:
            self.show(self.replay)
        else:
            self.query_one("#replay-head", Static).update(f"replaying {', '.join(map(str, self.paths))} …")
            self._replay(self._requests.new(), list(self.paths))

    @work(thread=True, exclusive=True, group="replay")
    def _replay(self, asked: int, paths: list[Path]) -> None:
        import tempfile

        from store.api import read_histories, MemdeckError, open_scratch, replay

        try:
            histories = read_histories(paths, limit=2000)
            name = paths[0].resolve().name if paths[0].is_dir() else paths[0].resolve().parent.name
            with tempfile.TemporaryDirectory(prefix="memdeck-replay-") as tmp:
                store = open_scratch(Path(tmp), name)
                try:
                    result = replay(store, histories.sessions)
                finally:
                    store.close()
            result.duplicates = histories.duplicates
        except MemdeckError as exc:
            self.post_message(self.Loaded(asked, None, str(exc)))
            return
        self.post_message(self.Loaded(asked, result))

    def on_replay_screen_loaded(self, message: Loaded) -> None:
        if not self._requests.is_latest(message.asked):
            return
        if message.replay is None:
            self.query_one("#replay-head", Static).update(f"cannot replay: {message.problem}")
            return
        self.replay = message.replay
        self.show(message.replay)

    def show(self, replay: Replay) -> None:
        from store.api import figures

        f = figures(replay)
        head = self.query_one("#replay-head", Static)
        head.update(f"{f['project']}: {f['sessions']} sessions {f['first']} → {f['last']}, {f['prompts']} prompts · "
                    f"taught again {f['reteachings']}, memdeck said it first in {f['said_for_you']} · "
                    f"{f['tokens_per_prompt']} tokens/prompt\n{LEGEND}")
        self.rows = lesson_rows(replay)
        table = self.query_one(DataTable)
        table.clear(columns=True)
        title_width = max(16, min(40, self.size.width // 3))
        marks_width = max(8, self.size.width - title_width - 6)
        table.add_column("lesson", width=title_width, key="lesson")
        table.add_column("sessions along time →", width=marks_width, key="marks")
        for row in self.rows:
            title = " ".join(row.title.split())
            table.add_row(title if len(title) <= title_width else title[:title_width - 1] + "…",
                          squeeze(row.marks, marks_width), key=row.memory_id)
        if not self.rows:
            self.query_one("#replay-detail", Static).update("No memory was captured in this history.")
        else:
            table.move_cursor(row=0)
            self.open_row(0)
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.rows):
            self.open_row(event.cursor_row)

    def open_row(self, index: int) -> None:
        """The row's memory and the prompts where it was taught again, in the detail pane."""
        row = self.rows[index]
        replay = self.replay
        assert replay is not None
        lines = [f"{row.title}", " ".join(row.content.split())[:160]]
        if row.taught_in is not None:
            session = replay.sessions[row.taught_in]
            lines.append(f"taught in {session.name} ({_day(session.started_at)})")
        for session_index, prompt, before in row.again:
            session = replay.sessions[session_index]
            said = session.prompts[prompt].text if prompt < len(session.prompts) else ""
            mark = "after memdeck said it" if before else "not said before"
            lines.append(f"again {_day(session.started_at)} prompt {prompt + 1} ({mark}): {' '.join(said.split())[:120]}")
        self.query_one("#replay-detail", Static).update("\n".join(lines))



PALETTE_HELP = "run past sessions through memdeck: the lessons taught twice (docs/replay.md)"


def ask_replay(app) -> None:
    """Ask for a history's folder or file, then replay it in the replay screen (the palette's
    "Replay a history")."""
    from tui.screens.prompt import PromptScreen

    def chosen(answer: str | None) -> None:
        if answer:
            app.push_screen(ReplayScreen(paths=[Path(answer).expanduser()]))

    app.push_screen(PromptScreen("Replay the history in (a folder or file):",
                                 ".specstory/history, ~/.claude/projects/…"), chosen)
