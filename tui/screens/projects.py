"""The project picker (`p`): every project in the store with its memory count."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from store.api import Project
from tui.text import one_line
from tui.widgets.footer import KeyFooter


class ProjectPicker(ModalScreen[str | None]):
    BINDINGS = [
        Binding("escape", "cancel", "Back"),
        Binding("j", "move(1)", "Down", show=False),
        Binding("k", "move(-1)", "Up", show=False),
    ]

    @dataclass
    class Loaded(Message, bubble=False):
        projects: list[Project]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Switch project", classes="dialog--title")
            yield OptionList(id="projects")
            yield Static("enter switch · escape back", classes="dialog--keys")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="projects")
    def _load(self) -> None:
        self.post_message(self.Loaded(self.app.db_call(self.app.store.projects)))

    def on_project_picker_loaded(self, message: Loaded) -> None:
        projects = message.projects
        options = self.query_one(OptionList)
        width = max((len(p.name) for p in projects), default=10)
        for project in projects:
            label = Text(one_line(project.name).ljust(width + 2))
            label.append(f"{project.memory_count:>6} memories", style="dim")
            if project.name == self.current:
                label.append("  ● current", style="bold")
            options.add_option(Option(label, id=project.name))
        names = [p.name for p in projects]
        if self.current in names:
            options.highlighted = names.index(self.current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_move(self, delta: int) -> None:
        options = self.query_one(OptionList)
        options.action_cursor_down() if delta > 0 else options.action_cursor_up()

    def action_cancel(self) -> None:
        self.dismiss(None)
