"""The agents memdeck connects to, one module each: where each keeps its config files, what
memdeck writes there (`memdeck connect`), and how each one's hook payloads are read and answered
(`memdeck hook ... --agent NAME`)."""

from __future__ import annotations

import importlib
from types import ModuleType

AGENTS = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini", "cursor": "cursor"}


def agent_module(name: str) -> ModuleType:
    return importlib.import_module(f"tui.cli.agents.{AGENTS[name]}")
