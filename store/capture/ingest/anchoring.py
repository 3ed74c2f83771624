"""Which code an ingested memory is about: the anchors ingest gives a marker's memory.

Two sources, both checked against the files as they are when ingested (a file since changed
out of recognition gets no anchor, rather than a wrong one):

- the files the session edited just before the memory was written: the successful edits since
  the agent's previous text, at most `anchors.ingest_recent_edits` files. An `Edit` anchors the
  lines it wrote (found in the file now); a `Write` anchors the whole file.
- `path:line` or `path:start-end` cited in the memory's text, for a file that exists.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from store.anchors.anchoring import AnchorSpec, locate, split_lines

# `billing/refund.py:42` or `src/a.ts:10-20`: a path with a file extension, then lines.
CITATION = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]+):(\d+)(?:-(\d+))?\b")


def cited(text: str) -> list[AnchorSpec]:
    """The `path:line` citations in a memory's text, in order."""
    found = []
    for match in CITATION.finditer(text):
        start = int(match.group(2))
        end = int(match.group(3) or start)
        if start >= 1 and end >= start:
            found.append(AnchorSpec(match.group(1), start, end))
    return list(dict.fromkeys(found))


class RecentEdits:
    """The edits of a session since the agent last wrote text, as anchors."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.calls: dict[str, str | None] = {}  # tool_use_id -> the text an Edit wrote (None: whole file)
        self.edits: dict[str, str | None] = {}  # file -> the text last written to it, in order

    def call(self, tool_use_id: str | None, tool: str | None, tool_input: dict[str, Any]) -> None:
        if not tool_use_id or self.limit <= 0:
            return
        if tool == "Edit":
            self.calls[tool_use_id] = str(tool_input.get("new_string") or "")
        elif tool == "MultiEdit":
            edits = tool_input.get("edits") if isinstance(tool_input.get("edits"), list) else []
            last = edits[-1] if edits and isinstance(edits[-1], dict) else {}
            self.calls[tool_use_id] = str(last.get("new_string") or "")
        elif tool == "Write":
            self.calls[tool_use_id] = None

    def result(self, tool_use_id: str | None, edited: str | None, cwd: str | None) -> None:
        """A successful edit of `edited` (as the tracker names it: relative to the cwd)."""
        if not tool_use_id or tool_use_id not in self.calls:
            return
        written = self.calls.pop(tool_use_id)
        if not edited:
            return  # the edit failed
        path = _in_cwd(cwd, edited)
        self.edits.pop(path, None)
        self.edits[path] = written
        while len(self.edits) > self.limit:
            self.edits.pop(next(iter(self.edits)))

    def take(self, root: Path) -> list[AnchorSpec]:
        """The anchors for a memory written now; the next text starts afresh."""
        specs = [spec for path, written in self.edits.items() if (spec := _edit_anchor(root, path, written))]
        self.edits.clear()
        return specs

    def clear(self) -> None:
        self.edits.clear()


@functools.lru_cache(maxsize=256)
def _in_cwd(cwd: str | None, edited: str) -> str:
    """`edited` under the session's cwd, unless absolute. Kept for the files edited lately: a
    session edits the same few files again and again, and pathlib costs more than the rest of
    taking an edit into account."""
    return str(Path(cwd) / edited) if cwd and not Path(edited).is_absolute() else edited


def _edit_anchor(root: Path, path: str, written: str | None) -> AnchorSpec | None:
    full = Path(path) if Path(path).is_absolute() else root / path
    if written is None:
        return AnchorSpec(path) if full.is_file() else None
    lines = written.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not any(line.strip() for line in lines):
        return None  # a deletion: nothing left to point at
    try:
        at = locate(split_lines(full.read_bytes()), lines, 1)
    except OSError:
        return None
    return None if at is None else AnchorSpec(path, at, at + len(lines) - 1)
