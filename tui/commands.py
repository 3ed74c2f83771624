"""The command palette (`ctrl+p`): every action bound to a key on the current screen, sorting,
switching project, and "go to memory" by a fuzzy match on titles.

Actions come from the bindings themselves, so a screen that declares a `Binding` with a
description appears here with no further work.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from store.api import SORTS
from tui.text import one_line

if TYPE_CHECKING:
    from store.api import Project


class PaletteApp(Protocol):
    """What the palette's commands need of the app (`tui.app.MemdeckApp` is it; the app imports
    this module, so it is named by what it does)."""

    projects: Sequence["Project"]

    def switch_project(self, name: str) -> None: ...
    def call_later(self, callback: Any, *args: Any, **kwargs: Any) -> bool: ...
    def run_action(self, action: Any, default_namespace: Any = None) -> Any: ...

# Palette commands are these actions; `command_palette` itself would only reopen the palette.
SKIPPED_ACTIONS = {"command_palette"}


def binding_commands(app: PaletteApp, screen: Screen) -> Iterable[SystemCommand]:
    from tui.screens.main import MainScreen

    seen: set[str] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.description or binding.action in SKIPPED_ACTIONS or binding.action in seen:
            continue
        seen.add(binding.action)
        help_text = f"{binding.key_display or key} · {binding.tooltip or binding.description}"
        yield SystemCommand(binding.description, help_text,
                            partial(app.call_later, app.run_action, binding.action, active.node))
    if isinstance(screen, MainScreen):
        for sort in SORTS:
            yield SystemCommand(f"Sort by {sort}", "o cycles the sort", partial(screen.sort_by, sort))
    for project in app.projects:  # read by the app in a worker: this runs at every key
        noun = "memory" if project.memory_count == 1 else "memories"
        yield SystemCommand(f"Project: {project.name}", f"{project.memory_count} {noun}",
                            partial(app.switch_project, project.name))


class GoToMemory(Provider):
    """"Go to memory": titles of the current project's memories, matched fuzzily."""

    async def startup(self) -> None:
        app = self.app
        rows = await asyncio.to_thread(app.db_call, app.store.recent_titles)
        self._titles = [(memory_id, one_line(title)) for memory_id, title in rows]

    async def discover(self) -> Hits:
        for memory_id, title in self._titles[:10]:
            yield DiscoveryHit(f"Go to: {title}", partial(self.app.go_to, memory_id), help=memory_id)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for memory_id, title in self._titles:
            text = f"Go to: {title}"
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(self.app.go_to, memory_id),
                          text=text, help=memory_id)
