"""The injection preview (`i`): pick a hat, type a task, optionally paths and a budget, and see
the block `memdeck prime` would print for them (the same `prime` function, as a dry run, so
nothing is recorded), a token meter, and every candidate with its score by signal and why it
is in or out. It updates as you type: a short pause after the last key, then a worker.

The block is shown with control characters spelled out; copying (`ctrl+y`) and saving
(`ctrl+s`) take the block exactly as prime prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Input, Label, Select, Static

from store.api import paging, MemdeckError, InjectionContext, PrimeResult, prime, write_output, Counts
from tui.screens.base import TYPING_KEYS
from tui.screens.insight import InsightScreen
from tui.text import visible
from tui.widgets.footer import KeyFooter
from tui.widgets.score_table import ScoreTable
from tui.widgets.title_bar import TitleBar

DEBOUNCE_SECONDS = 0.25
METER_WIDTH = 24


def meter(tokens: int, budget: int, width: int = METER_WIDTH) -> Text:
    """`~1,230 / 2,000 tokens ██████░░░░` in the block pane's title."""
    filled = round(min(1.0, tokens / budget) * width) if budget else 0
    text = Text(f"~{tokens:,} / {budget:,} tokens ")
    text.append("█" * filled, style="green" if tokens <= budget else "red")
    text.append("░" * (width - filled), style="dim")
    return text


class PreviewScreen(InsightScreen):
    """What the next agent would be told, for a hat and a task, before it is told."""

    HELP_TITLE = "Injection preview"

    # The "why" table needs 98 columns whole: the block stacks above it below 140, not 120.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-normal"), (200, "-wide")]

    BINDINGS = [
        Binding("ctrl+y", "copy", "Copy block", tooltip="Copy the block to the clipboard"),
        Binding("ctrl+s", "save", "Save block…", tooltip="Save the block to a file"),
        Binding("ctrl+o", "open_memory", "Open memory", tooltip="Open the candidate under the cursor"),
        Binding("escape", "app.pop_screen", "Back"),
        TYPING_KEYS,
    ]

    DEFAULT_CSS = """
    PreviewScreen #preview-form { height: 3; }
    PreviewScreen #preview-form Label { padding: 1 1 0 1; color: $text-muted; }
    PreviewScreen #hat { width: 20; }
    PreviewScreen #budget { width: 12; }  /* six digits and the cursor: a focused 2000 does not scroll */
    PreviewScreen #paths { width: 1fr; }
    PreviewScreen #task { margin: 0 1 0 0; }
    PreviewScreen #preview-panes { height: 1fr; }
    PreviewScreen #block-pane, PreviewScreen #why {
        border: round $border-blurred; border-title-color: $text-muted; border-subtitle-color: $text-muted;
    }
    PreviewScreen #block-pane { width: 1fr; padding: 0 1; }
    PreviewScreen #block-pane:focus-within, PreviewScreen #why:focus { border: round $border; border-title-color: $text; }
    PreviewScreen #why-side { width: 98; height: 1fr; }
    PreviewScreen #why { height: 1fr; }
    /* The highlighted candidate's whole reason and verdict, wrapped: the column may cut them. */
    PreviewScreen #why-reading { height: auto; max-height: 8; padding: 0 1; color: $text-muted; }
    PreviewScreen.-wide #why-side { width: 50%; }
    PreviewScreen.-narrow #preview-panes { layout: vertical; }
    PreviewScreen.-narrow #block-pane { width: 1fr; height: 45%; }
    PreviewScreen.-narrow #why-side { width: 1fr; }
    PreviewScreen.-short #preview-form { height: 1; }
    PreviewScreen.-short #preview-form Label { padding: 0 1; }
    PreviewScreen.-short Input, PreviewScreen.-short Input:focus, PreviewScreen.-short SelectCurrent {
        border: none; height: 1;
    }
    """

    @dataclass
    class Previewed(Message, bubble=False):
        """What prime would inject for the form's `asked`-th context, and why."""

        asked: int
        result: PrimeResult
        weights: dict[str, float]
        counts: Counts

    @dataclass
    class Refused(Message, bubble=False):
        asked: int
        problem: str

    def __init__(self, *, hat: str | None = None, task: str = "", paths: str = "", budget: int | None = None) -> None:
        super().__init__()
        self.initial = (hat, task, paths, budget)
        self.result: PrimeResult | None = None
        self._timer: Timer | None = None
        self._asked = 0  # numbers the previews asked for; only the latest answer is shown

    def compose(self) -> ComposeResult:
        hat, task, paths, budget = self.initial
        hats = self.app.store.vocabulary.hats
        yield TitleBar()
        with Horizontal(id="preview-form"):
            yield Label("hat")
            yield Select([(h, h) for h in hats], value=hat if hat in hats else Select.NULL,
                         prompt="any hat", id="hat")
            yield Label("budget")
            yield Input(str(budget or self.app.store.config.injection.budget), type="integer",
                        id="budget")
            yield Label("paths")
            yield Input(paths, placeholder="files in play, space-separated: src/feed/socket.ts", id="paths")
        yield Input(task, placeholder="task: what the next agent will work on", id="task", select_on_focus=False)
        with Horizontal(id="preview-panes"):
            with VerticalScroll(id="block-pane"):
                yield Static(id="block")
            with Vertical(id="why-side"):
                yield ScoreTable(id="why")
                yield Static(id="why-reading")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(TitleBar).now = self.app.now()
        self.query_one("#why", ScoreTable).border_title = "Why — every candidate, its score by signal"
        self.query_one("#task", Input).focus()
        self.reload()

    def on_key(self, event: events.Key) -> None:
        """A letter typed while the hat, the block or the table has focus goes to the task: the
        person is describing a task, and the app's one-key commands are off here. Keys the
        focused pane binds (`j`, `k` in the table) keep their meaning."""
        focused = self.focused
        if isinstance(focused, Input) or not event.is_printable or event.character is None:
            return
        if focused is not None and event.key in focused._bindings.key_to_bindings:
            return
        task = self.query_one("#task", Input)
        task.focus()
        task.insert_text_at_cursor(event.character)
        event.stop()
        event.prevent_default()

    def action_typed(self) -> None:
        """The app's one-key commands are off while a task is typed (see `on_key`)."""

    # -- the context from the form ----------------------------------------------------------------

    def context(self) -> InjectionContext | str:
        """The injection context the form describes, or what is wrong with it."""
        hat = self.query_one("#hat", Select).value
        budget_text = self.query_one("#budget", Input).value.strip()
        try:
            budget = int(budget_text) if budget_text else None
        except ValueError:
            return f"the budget must be a whole number of tokens, not {budget_text!r}"
        if budget is not None and budget <= 0:
            return "the budget must be a positive number of tokens"
        return InjectionContext(
            hat=None if hat is Select.NULL else str(hat), task=self.query_one("#task", Input).value,
            paths=tuple(self.query_one("#paths", Input).value.split()), budget=budget)

    @on(Input.Changed)
    def _typed(self) -> None:
        """Typing waits for a pause; each key would otherwise start a ranking."""
        self._stop_timer()
        self._timer = self.set_timer(DEBOUNCE_SECONDS, self.reload)

    @on(Select.Changed)
    def _hat_chosen(self) -> None:
        self._stop_timer()
        self.reload()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    # -- previewing ------------------------------------------------------------------------------

    def reload(self) -> None:
        context = self.context()
        self._asked += 1
        if isinstance(context, str):
            self._problem(context)
            return
        self._preview(context, self._asked)

    @work(thread=True, exclusive=True, group="preview")
    def _preview(self, context: InjectionContext, asked: int) -> None:
        store = self.app.store

        def read():
            self.app.layer.open()  # prime reads every layer, as the hooks do (docs/team.md)
            result = prime(store, context, record=False, layers=self.app.layer.layers)
            return result, result.weights, paging.counts(store)

        try:
            result, weights, counts = self.app.db_call(read)
        except MemdeckError as exc:
            self.post_message(self.Refused(asked, str(exc)))
            return
        self.post_message(self.Previewed(asked, result, weights, counts))

    def on_preview_screen_refused(self, message: Refused) -> None:
        if message.asked == self._asked:  # else the form changed while this one was computed
            self._problem(message.problem)

    def on_preview_screen_previewed(self, message: Previewed) -> None:
        if message.asked != self._asked:
            return  # the form changed while this one was computed
        result, weights, counts = message.result, message.weights, message.counts
        self.query_one(TitleBar).counts = counts
        self.result = result
        pane = self.query_one("#block-pane")
        shown = len(result.included)
        pane.border_title = (f"Block — {shown} of {result.relevant} memories: {result.relevant - result.filler} "
                             f"relevant, {result.filler} filler" if result.filler else
                             f"Block — {shown} of {result.relevant} relevant memories")
        pane.border_subtitle = meter(result.tokens, result.budget)
        block = visible(result.block) if result.block else ""
        self.query_one("#block", Static).update(
            Text(block) if block else Text("Nothing to inject: no memory is relevant enough to this task.\n"
                                           "Type the task the agent will work on; paths and a hat refine it.",
                                           style="dim"))
        self.query_one(ScoreTable).show(result, weights)
        self._show_reading()
        out = len(result.excluded)
        gate = result.gate  # the gate's task-level verdict: its confidence, chance, the cosine's margin
        verdict = "" if gate is None else (
            f"gate {gate['confidence']:.2f} {'sure' if gate['sure'] else 'on topic' if gate['on_topic'] else 'off topic'}"
            f" · chance {gate['expected_by_chance']:.2f} · margin {gate['cosine_margin']:+.2f}"
            f" · spend {gate['spend']:.0%} · ")
        self.query_one(ScoreTable).border_subtitle = f"{verdict}{shown} in · {out} out"

    def _problem(self, message: str) -> None:
        self.result = None
        self.query_one("#block-pane").border_subtitle = ""
        self.query_one("#block", Static).update(Text(message, style="red"))
        self.query_one("#why-reading", Static).update("")

    # -- using the block ---------------------------------------------------------------------------

    def _block(self) -> str | None:
        if self.result is None or not self.result.block:
            self.notify("There is no block to use: nothing is injected for this task", severity="warning")
            return None
        return self.result.block

    def action_copy(self) -> None:
        block = self._block()
        if block is not None:
            self.app.copy_to_clipboard(block)
            self.notify(f"Copied the block (~{self.result.tokens:,} tokens)")

    def action_save(self) -> None:
        from tui.screens.confirm import ConfirmScreen
        from tui.screens.prompt import PromptScreen

        block = self._block()
        if block is None:
            return

        def write(path: Path) -> None:
            try:
                # Whole or not at all, with the mode any new file gets; replacing was confirmed.
                write_output(path, block, force=True)
            except MemdeckError as exc:
                self.notify(f"Could not save: {exc}", title="Not saved", severity="error", markup=False)
                return
            self.notify(f"Saved the block to {path}", markup=False)  # a path is text, never markup

        def chosen(answer: str | None) -> None:
            if not answer:
                return
            path = Path(answer).expanduser()
            if path.is_dir():
                self.notify(f"{path} is a folder: give a file name", title="Not saved", severity="error",
                            markup=False)
            elif path.exists():
                self.app.push_screen(ConfirmScreen(f"Replace {path}?", "It exists; its content would be lost."),
                                     lambda yes: yes and write(path))
            else:
                write(path)

        self.app.push_screen(PromptScreen("Save the block to which file?", "memory-block.md"), chosen)

    @on(DataTable.RowHighlighted, "#why")
    def _show_reading(self) -> None:
        """The highlighted candidate's whole reason and verdict, under the table."""
        reading = self.query_one("#why-reading", Static)
        memory_id = self.query_one(ScoreTable).cursor_memory_id()
        if self.result is None or memory_id is None:
            reading.update("")
            return
        chosen = {r.memory.id for r in self.result.included}
        item = next((r for r in [*self.result.included, *self.result.excluded] if r.memory.id == memory_id), None)
        reading.update(ScoreTable.reading(item, item.memory.id in chosen) if item is not None else "")

    @on(DataTable.RowSelected, "#why")
    def _row_selected(self) -> None:
        self.action_open_memory()

    def action_open_memory(self) -> None:
        memory_id = self.query_one(ScoreTable).cursor_memory_id()
        if memory_id is not None:
            self.app.go_to(memory_id)
