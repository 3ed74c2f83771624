"""The anchors view (`v`): one memory's anchors checked against the code now, and for each what
changed in the anchored lines since the memory's commit (a `git diff` of that region, or the
snapshot outside git), with the commits that changed the file. From here the memory is
re-anchored (it still holds), edited, or marked wrong (set inactive; `u` on the list undoes)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from store.api import paging, AnchorDiff, Memory
from tui.requests import Requests
from tui.screens.insight import InsightScreen
from tui.text import one_line, visible
from tui.widgets.detail import ANCHOR_MARKS
from tui.widgets.footer import KeyFooter
from tui.widgets.title_bar import TitleBar

LINE_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def render_diff(diff: AnchorDiff) -> Group:
    """One anchor: its status line, the commits since, and the diff lines (text, never markup)."""
    check = diff.check
    sign, colour = ANCHOR_MARKS.get(check.status, ("?", ""))
    head = Text()
    head.append(f"{sign} {check.status:<8}", style=f"bold {colour}")
    head.append(one_line(check.anchor.spec), style="bold")
    if check.status == "moved":
        head.append(f"  now at {one_line(check.spec_now)}", style="dim")
    head.append(f"  since {check.anchor.since()}", style="dim")
    parts: list = [head]
    for commit in diff.commits:
        parts.append(Text("  changed by " + one_line(commit), style="dim"))
    if check.status == "missing":
        parts.append(Text("The file is gone and git knows no new name for it: edit the memory's anchors, "
                          "or mark it wrong.", style="yellow"))
    elif check.status == "fresh":
        parts.append(Text("The anchored lines are as they were.", style="dim"))
    elif not diff.lines:
        parts.append(Text("The lines are the same, elsewhere in the file: the anchor now points there.",
                          style="dim"))
    else:
        if diff.source == "snapshot":
            parts.append(Text("compared with the lines as they were when anchored", style="dim"))
        body = Text(overflow="fold")  # a long line wraps: nothing of the diff is hidden past the edge
        for line in diff.lines:
            body.append(visible(line) + "\n", style=LINE_STYLES.get(line[:1], ""))
        body.rstrip()
        parts.append(body)
    parts.append(Text(""))
    return Group(*parts)


class AnchorScreen(InsightScreen):
    """The anchors of `memory`, checked (and the check saved) when the screen opens, and checked
    again (not saved) whenever the store changes while it is shown."""

    BINDINGS = [
        Binding("r", "reanchor", "Re-anchor", tooltip="The memory still holds: anchor it to the lines as they are now"),
        Binding("e", "edit", "Edit", tooltip="Edit the memory (and its anchors)"),
        Binding("w", "wrong", "Wrong", tooltip="The code proves it wrong: set it inactive (u on the list undoes)"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    DEFAULT_CSS = """
    AnchorScreen #anchor-diffs { border: round $border; border-title-color: $text; padding: 0 1; }
    """

    @dataclass
    class Loaded(Message, bubble=False):
        asked: int
        memory: Memory
        diffs: list[AnchorDiff]
        counts: paging.Counts

    def __init__(self, memory: Memory) -> None:
        super().__init__()
        self.memory = memory
        self.specs: tuple[str, ...] = ()
        self._loads = Requests()

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(Text(f"Anchors of {self.memory.id}: {one_line(self.memory.title)}"),
                     id="screen-heading", classes="screen--heading")
        with VerticalScroll(id="anchor-diffs"):
            yield Static(Text("Checking the code…", style="dim"), id="anchor-body")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(TitleBar).now = self.app.now()
        self.query_one("#anchor-diffs").border_title = "What changed since the memory was anchored"
        self._load(self._loads.new(), save=True)

    def reload(self) -> None:
        """The store changed: check again, without saving. A saved check is itself a change of
        the store, which brought the view back here: it checked and wrote in a loop while open
        (a core busy and the memory growing, on a live store)."""
        self._load(self._loads.new(), save=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Re-anchor and wrong judge the memory by its anchors: not offered until the check
        found some (a memory without anchors has nothing to re-anchor or be proved wrong by)."""
        if action in ("reanchor", "wrong") and not self.specs:
            return False
        return True

    @work(thread=True, exclusive=True, group="anchors")
    def _load(self, asked: int, save: bool) -> None:
        from store.api import memory_diffs, verify

        store = self.app.store

        def read():
            results = verify(store, [self.memory.id], actor="ui", save=save)
            memory = store.get(self.memory.id)  # after the check, which raises its version
            return memory, (memory_diffs(store, results[0]) if results else []), paging.counts(store)

        self.post_message(self.Loaded(asked, *self.app.db_call(read)))

    def on_anchor_screen_loaded(self, message: Loaded) -> None:
        if not self._loads.is_latest(message.asked):
            return  # checked before the store changed again: the newer check's answer follows
        memory, diffs, counts = message.memory, message.diffs, message.counts
        self.memory = memory
        self.query_one(TitleBar).counts = counts
        self.specs = tuple(d.check.spec_now for d in diffs)
        self.refresh_bindings()
        body = self.query_one("#anchor-body", Static)
        if not diffs:
            body.update(Text("This memory has no anchors. Add some in the edit form (e): "
                             "PATH or PATH:START-END.", style="dim"))
            return
        body.update(Group(*(render_diff(d) for d in diffs)))

    def action_reanchor(self) -> None:
        from store.api import reanchor

        memory_id, seen = self.memory.id, self.memory
        self.app.write(lambda: reanchor(self.app.store, memory_id, expected=seen),
                       lambda result: self.notify(f"Re-anchored {memory_id}: "
                                                  + ", ".join(a.spec for a in result.anchors), markup=False))

    def action_edit(self) -> None:
        self.app.edit_memory(self.memory, anchors=self.specs)

    def action_wrong(self) -> None:
        self.app.bulk("set_status", [self.memory.id], "inactive")
