"""Candidate memories derived from what a session's tools did, for the review inbox.

Two rules, from seed 000's "quality gate passed after failure" and seed 003's learnFromFailure:

- fail, edit, pass: a shell command that failed and later passed, with files edited in between,
  becomes a `fix` candidate naming those files;
- a repeated tool error: the same error `ingest.repeated_error` times in one session becomes a
  `pitfall` candidate.

The rules keep their state in a plain dict (`Tracker.state`) that the ingest pipeline saves on
the session, so a transcript ingested in pieces (a live session) finds a failure in one piece and
its fix in the next, and each candidate is proposed once per session.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

# Tools that change files, and the input field naming the file (Claude Code's tool names).
EDIT_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path",
              "NotebookEdit": "notebook_path"}
SHELL_TOOLS = {"Bash"}
_TOOL_ERROR_TAGS = re.compile(r"</?tool_use_error>")
_NUMBERS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Candidate:
    key: str  # stable within a session: the rule and what it is about
    type: str
    title: str
    content: str
    tags: tuple[str, ...]
    file_refs: tuple[str, ...] = ()


def error_key(text: str) -> str:
    """Errors that differ only in numbers or spacing are the same error."""
    first = _TOOL_ERROR_TAGS.sub("", text).strip().splitlines()
    line = first[0] if first else ""
    return _SPACE.sub(" ", _NUMBERS.sub("N", line)).strip()[:160]


def first_error_line(text: str, width: int = 200) -> str:
    """The most telling line of an error output: the first that says error or failed, else the first."""
    lines = [line.strip() for line in _TOOL_ERROR_TAGS.sub("", text).splitlines() if line.strip()]
    for line in lines:
        lowered = line.lower()
        if "error" in lowered or "fail" in lowered or "exit code" in lowered:
            return line[:width]
    return lines[0][:width] if lines else "(no output)"


def relative_path(path: str, cwd: str | None) -> str:
    """`path` relative to the session's working directory when it is inside it."""
    if cwd:
        base = cwd.rstrip("/") + "/"
        if path.startswith(base):
            return path[len(base):]
    return path


@dataclass
class Tracker:
    """Watches one session's tool calls and results, in order, and proposes candidates."""

    repeated_error: int = 3
    state: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state.setdefault("calls", {})  # tool_use_id -> [tool, command or file]
        self.state.setdefault("failing", {})  # command -> {"error": line, "edits": [files]}
        self.state.setdefault("errors", {})  # error key -> {"count": n, "tool": name, "example": line}
        self.state.setdefault("proposed", [])  # candidate keys already proposed in this session

    def tool_call(self, tool_use_id: str | None, tool: str, tool_input: dict[str, Any]) -> str | None:
        """Remember a call until its result comes; returns the file it edits, if any."""
        target = None
        if tool in SHELL_TOOLS:
            target = str(tool_input.get("command") or "").strip()
        elif tool in EDIT_TOOLS:
            target = str(tool_input.get(EDIT_TOOLS[tool]) or "").strip()
        if tool_use_id:
            self.state["calls"][tool_use_id] = [tool, target]
        return target if tool in EDIT_TOOLS else None

    def tool_result(self, tool_use_id: str | None, is_error: bool, output: str,
                    cwd: str | None = None) -> tuple[str | None, list[Candidate]]:
        """Take a result into account. Returns (the file it edited if it was a successful edit,
        the candidates it completes)."""
        tool, target = self.state["calls"].pop(tool_use_id, [None, None]) if tool_use_id else [None, None]
        candidates: list[Candidate] = []
        edited = None
        if is_error:
            candidates += self._error(tool or "tool", output)
            if tool in SHELL_TOOLS and target:
                self.state["failing"].setdefault(target, {"error": first_error_line(output), "edits": []})
        elif tool in EDIT_TOOLS and target:
            edited = relative_path(target, cwd)
            for failure in self.state["failing"].values():
                if edited not in failure["edits"]:
                    failure["edits"].append(edited)
        elif tool in SHELL_TOOLS and target in self.state["failing"]:
            failure = self.state["failing"].pop(target)
            if failure["edits"]:
                candidates += self._propose(self._fix(target, failure))
        return edited, candidates

    def _error(self, tool: str, output: str) -> list[Candidate]:
        key = error_key(first_error_line(output))
        if not key:
            return []
        seen = self.state["errors"].setdefault(key, {"count": 0, "tool": tool, "example": first_error_line(output)})
        seen["count"] += 1
        if seen["count"] < self.repeated_error:
            return []
        return self._propose(Candidate(
            key=f"pitfall:{_digest(key)}", type="pitfall",
            title=f"{tool} keeps failing: {seen['example'][:80]}",
            content=(f"{tool} failed {seen['count']} times in one session with the same error: "
                     f"{seen['example']}"),
            tags=("heuristic", "repeated-error", tool.lower()),
        ))

    @staticmethod
    def _fix(command: str, failure: dict[str, Any]) -> Candidate:
        files = tuple(failure["edits"])
        shown = command if len(command) <= 120 else command[:119] + "…"
        return Candidate(
            key=f"fix:{_digest(command)}:{_digest(failure['error'])}", type="fix",
            title=f"Fix for `{shown.splitlines()[0]}` failing",
            content=(f"`{shown}` failed with: {failure['error']}\n"
                     f"It passed after changes to: {', '.join(files)}."),
            tags=("heuristic", "fail-then-pass"), file_refs=files,
        )

    def _propose(self, candidate: Candidate) -> list[Candidate]:
        if candidate.key in self.state["proposed"]:
            return []
        self.state["proposed"].append(candidate.key)
        return [candidate]


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]
