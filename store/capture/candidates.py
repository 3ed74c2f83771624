"""What the capture heuristics propose and how they are set: a candidate (a memory waiting in
the inbox, with the transcript lines it comes from), the evidence line, a tool error told by its
first named line, and the rules' thresholds from config."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from store.capture import wording
from store.engine.config import Config

_NUMBERS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
TOOL_ERROR_TAGS = re.compile(r"</?tool_use_error>")
# The line that names an error best: an exception or compiler error, before any line that only
# mentions "error" ("> Build error occurred").
NAMED_ERROR = re.compile(r"\b(?:[A-Z]\w*(?:Error|Exception)\b:?|error(?:\[\w+\]| TS\d+)?:|E\d{3,}\b|FAILED\b)")
SAYS_ERROR = re.compile(r"error|fail|exit code", re.I)
ANY_LINE = re.compile(r"\S")
TEST_FAILED = re.compile(r"^\s*(?:[✕×]|FAIL\b|FAILED\b|--- FAIL\b)")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# A test runner's lines for tests that passed ("✓ should …", "PASS src/…", "ok 3 - …"): never the error.
PASSING = re.compile(r"^[ \t]*(?:[✓✔√]|PASS\b|ok\b).*$", re.M)
EVIDENCE_CHARS = 300
SHELL_TOOLS = {"Bash"}


@dataclass(frozen=True)
class Candidate:
    key: str  # stable within a session: the rule and what it is about
    type: str
    title: str
    content: str
    tags: tuple[str, ...]
    file_refs: tuple[str, ...] = ()
    confidence: float = wording.CONFIDENCE["start.fix"]  # every rule sets its own
    # The transcript lines it comes from: {"line", "at", "kind", "text"}.
    evidence: tuple[dict[str, Any], ...] = ()
    repeats: str | None = None  # the key of an earlier candidate of the session it repeats

    @property
    def rule(self) -> str:
        return self.key.split(":")[0]


def error_key(text: str) -> str:
    """Errors that differ only in numbers or spacing are the same error."""
    first = TOOL_ERROR_TAGS.sub("", text).strip().splitlines()
    line = first[0] if first else ""
    return _SPACE.sub(" ", _NUMBERS.sub("N", line)).strip()[:160]


def first_error_line(text: str, width: int = 200) -> str:
    """The most telling line of an error output: an exception or compiler error, else the first
    that says error or failed, else the first line. (One search over the whole text each, not
    one per line: tool errors are many in a long session.)"""
    text = PASSING.sub("", ANSI.sub("", TOOL_ERROR_TAGS.sub("", text)))
    found = NAMED_ERROR.search(text) or SAYS_ERROR.search(text) or ANY_LINE.search(text)
    if found is None:
        return "(no output)"
    start = text.rfind("\n", 0, found.start()) + 1
    end = text.find("\n", found.end())
    return text[start:end if end >= 0 else len(text)].strip()[:width]


def relative_path(path: str, cwd: str | None) -> str:
    """`path` relative to the session's working directory when it is inside it."""
    if cwd:
        base = cwd.rstrip("/") + "/"
        if path.startswith(base):
            return path[len(base):]
    return path


def evidence(line: int | None, at: float | None, kind: str, text: str) -> dict[str, Any]:
    shown = wording.one_line(text)
    if len(shown) > EVIDENCE_CHARS:
        shown = shown[:EVIDENCE_CHARS - 1] + "…"
    return {"line": line, "at": at, "kind": kind, "text": shown}


@dataclass(frozen=True)
class Settings:
    """The thresholds of the rules: config `ingest.repeated_error` and `capture.*`."""

    repeated_error: int
    min_confidence: float
    max_per_session: int
    similarity: int
    follow_files: int
    check_commands: tuple[str, ...]
    scores: Mapping[str, float] = field(default_factory=lambda: wording.CONFIDENCE)  # `capture.confidence`

    @classmethod
    def from_config(cls, config: Config | None = None) -> "Settings":
        config = config or Config.defaults()
        return cls(repeated_error=int(config.ingest.repeated_error),
                   min_confidence=float(config.capture.min_confidence),
                   max_per_session=int(config.capture.max_per_session),
                   similarity=int(config.capture.similarity),
                   follow_files=int(config.capture.follow_files),
                   check_commands=tuple(config.capture.check_commands),
                   scores=config.capture.confidence.table())


def first_line(output: str) -> str:
    """The first line of a tool's output with something on it, for context."""
    text = ANSI.sub("", TOOL_ERROR_TAGS.sub("", output[:2000]))
    found = ANY_LINE.search(text)
    if found is None:
        return ""
    end = text.find("\n", found.start())
    return text[found.start():end if end >= 0 else len(text)].strip()[:160]


_WARNING = re.compile(r"^[ \t]*(?:\(!\)|⚠|warn(?:ing)?\b|\[warn(?:ing)?\]|deprecat\w*\b)[^\n]*", re.I | re.M)


def warning_line(output: str) -> str:
    """The first warning line of a tool's output ("(!) templ version check: …", "WARNING: …")."""
    found = _WARNING.search(ANSI.sub("", output[:4000]))
    return found.group(0).strip()[:200] if found else ""


def shown_call(tool: str | None, target: str | None, cwd: str | None) -> str:
    if not tool:
        return ""
    if not target:
        return tool
    target = relative_path(target, cwd) if tool not in SHELL_TOOLS else target
    return f"{tool}: {wording.title_of(target, 120)}"


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]
