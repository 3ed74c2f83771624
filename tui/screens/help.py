"""The help screen (`?`): every key of the screen it was opened over, read from the bindings
of that screen, its widgets and the app, so it can never disagree with them."""

from __future__ import annotations

import re

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

from tui.widgets.footer import KeyFooter


def help_title(node: object) -> str:
    """What a person calls a screen or a pane: its `HELP_TITLE`, else its class name in words."""
    title = getattr(node, "HELP_TITLE", None)
    if title:
        return title
    return re.sub(r"(?<!^)([A-Z])", lambda m: " " + m.group(1).lower(), type(node).__name__)


def own_bindings(node: object) -> list[Binding]:
    """The bindings memdeck's classes declare for `node`: what Textual's own classes bind (tab,
    copy, an Input's editing keys) is everyday behaviour, not memdeck's keys."""
    found: list[Binding] = []
    for cls in type(node).__mro__:
        if not cls.__module__.startswith("textual."):
            found += Binding.make_bindings(cls.__dict__.get("BINDINGS", []))
    return found


def binding_table(screen: Screen) -> Table:
    """Keys grouped by where they work: the app, the screen, then each focusable widget."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    table.add_column(style="dim")
    groups: list[tuple[str, object]] = [("Everywhere", screen.app), (help_title(screen), screen)]
    groups += [(help_title(w), w) for w in screen.query("*") if isinstance(w, Widget) and w.BINDINGS
               and w.can_focus]
    seen_groups: set[str] = set()
    for title, node in groups:
        if title in seen_groups:
            continue
        seen_groups.add(title)
        by_action: dict[str, list[str]] = {}
        infos: dict[str, Binding] = {}
        bindings = own_bindings(node) if node is not screen.app else [b for _, b in node._bindings]
        for binding in bindings:
            if not binding.description or binding.system:
                continue
            by_action.setdefault(binding.action, []).append(node.app.get_key_display(binding))
            infos.setdefault(binding.action, binding)
        if not by_action:
            continue
        table.add_row(Text(title, style="underline"), "", "")
        for action, keys in by_action.items():
            binding = infos[action]
            tooltip = binding.tooltip if binding.tooltip != binding.description else ""
            table.add_row(" ".join(dict.fromkeys(keys)), binding.description, tooltip)
        table.add_row("", "", "")
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, over: Screen) -> None:
        super().__init__()
        self.over = over

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help"):
            yield Static("Keys", classes="dialog--title")
            yield Static(binding_table(self.over))
            yield Static("ctrl+p opens the command palette: every action, sorts, projects and "
                         "“go to memory” by title.", classes="dialog--keys")
        yield KeyFooter()
