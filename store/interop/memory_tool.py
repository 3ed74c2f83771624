"""memdeck as the Claude API's memory tool, for agents built with the Anthropic SDK
(`pip install 'memdeck[anthropic]'`): `MemdeckMemoryTool(store)` is the SDK's own
`BetaAbstractMemoryTool` (anthropic.lib.tools), so `client.beta.messages.tool_runner(tools=[tool])`
(or `run_tools`) hands it the model's memory commands. What each command does is
`store.interop.memory_files`; its errors reach the model as the SDK's `ToolError`.

    from anthropic import Anthropic
    from store import Store
    from store.interop.memory_tool import MemdeckMemoryTool

    with Store.open(project="payments-api") as store:
        tool = MemdeckMemoryTool(store)
        runner = Anthropic().beta.messages.tool_runner(model=..., max_tokens=2048, tools=[tool],
                                                        messages=[...])
"""

from __future__ import annotations

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand, BetaMemoryTool20250818DeleteCommand, BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand, BetaMemoryTool20250818StrReplaceCommand, BetaMemoryTool20250818ViewCommand,
)

from store.engine.core import Store
from store.interop.memory_files import MemoryFiles, MemoryToolError


class MemdeckMemoryTool(BetaAbstractMemoryTool):
    """The memory tool (`memory_20250818`) over a memdeck store."""

    def __init__(self, store: Store, **options) -> None:
        super().__init__(**options)
        self.files = MemoryFiles(store)

    def _run(self, command, *args):
        try:
            return command(*args)
        except MemoryToolError as exc:
            raise ToolError(str(exc)) from None

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._run(self.files.view, command.path, command.view_range)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._run(self.files.create, command.path, command.file_text)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._run(self.files.str_replace, command.path, command.old_str, command.new_str)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._run(self.files.insert, command.path, command.insert_line, command.insert_text)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._run(self.files.delete, command.path)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._run(self.files.rename, command.old_path, command.new_path)
