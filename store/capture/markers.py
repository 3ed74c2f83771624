"""Memory markers in an agent's text: one parser for both grammars.

- Dex (seed 000): `MEMORY:type:content`, anywhere in a line.
- Claude Ops (seed 001): `[MEMORY:category]` or `[MEMORY:category:scope]` followed by the text.

Real agents dress markers up: in list items, in backticks or bold, mid-line, and followed by a
block of lines (`Context:` / `Solution:` / `Prevention:`, in any language) that belongs to the
memory. A marker's text runs from after the marker to the end of its block: the next blank line,
heading or marker, or (for a marker in a list item) the next item of the same list.

Nothing is dropped silently: a marker with no text or one the parser cannot read comes back as a
`RejectedMarker` with its line. Markers inside fenced code blocks are quoted examples, not
learnings, and come back as `quoted` lines. This module only reads text; what a type word means
is the vocabulary's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# `[MEMORY:word]` or `[MEMORY:word:scope]`; the word and scope are checked after matching so that
# a malformed one is reported rather than missed.
_BRACKET = re.compile(r"\[MEMORY:([^\]\n]*)\]")
_BRACKET_UNCLOSED = re.compile(r"\[MEMORY:(?![^\]\n]*\])")
# `MEMORY:type:content` not preceded by `[` or a word character (so `[MEMORY:` and `XMEMORY:` are not it).
_DEX = re.compile(r"(?<![\[\w])MEMORY:([A-Za-z][\w-]*)(?::(.*))?$")
_WORD = re.compile(r"^[^\s:\[\]`*]+$")
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Decoration between a marker and its text: closing backticks or bold, a colon or dash.
_LEAD = re.compile(r"^[\s`*_]*(?:[:\-–—][\s`*_]*)?")


@dataclass(frozen=True)
class Marker:
    """One marker as written: the type word (not yet resolved), its scope, and its full text."""

    word: str
    scope: str | None
    text: str
    line: int  # 1-based line of the marker in the text scanned (offset by `first_line`)
    source_line: str  # the marker's line as written
    grammar: str  # "bracket" (Claude Ops) or "dex"


@dataclass(frozen=True)
class RejectedMarker:
    line: int
    source_line: str
    reason: str


@dataclass
class MarkerScan:
    markers: list[Marker] = field(default_factory=list)
    rejected: list[RejectedMarker] = field(default_factory=list)
    quoted: list[int] = field(default_factory=list)  # lines of markers inside code fences

    def __bool__(self) -> bool:
        return bool(self.markers or self.rejected or self.quoted)


def has_marker(text: str) -> bool:
    """Cheap test before a full scan: most text has no marker at all."""
    return "MEMORY:" in text


def scan(text: str, first_line: int = 1) -> MarkerScan:
    """Every marker in `text`, rejected marker and quoted marker, in order."""
    result = MarkerScan()
    if not has_marker(text):
        return result
    lines = text.split("\n")
    in_fence = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if _FENCE.match(line):
            in_fence = not in_fence
            index += 1
            continue
        if "MEMORY:" not in line:
            index += 1
            continue
        number = first_line + index
        if in_fence:
            result.quoted.append(number)
            index += 1
            continue
        head = _marker_in_line(line)
        if head is None:
            index += 1
            continue
        if isinstance(head, str):
            result.rejected.append(RejectedMarker(number, line.strip(), head))
            index += 1
            continue
        word, scope, rest, grammar = head
        block, used = _block_after(lines, index)
        text_lines = [rest] if rest else []
        text_lines += block
        body = _dedent(text_lines).strip()
        index += 1 + used
        if not body:
            result.rejected.append(RejectedMarker(number, line.strip(), "no text after the marker"))
            continue
        result.markers.append(Marker(word, scope, body, number, line.strip(), grammar))
    return result


def _marker_in_line(line: str):
    """(word, scope, text on the line, grammar), or a reason string if the marker is unreadable,
    or None when `MEMORY:` is only a word in prose (no marker shape at all)."""
    bracket = _BRACKET.search(line)
    if bracket is not None:
        parts = bracket.group(1).split(":")
        word = parts[0].strip()
        scope = ":".join(parts[1:]).strip() or None
        if not word:
            return "no type in the marker"
        if not _WORD.match(word) or (scope is not None and not _WORD.match(scope)):
            return f"unreadable marker [MEMORY:{bracket.group(1)}]"
        rest = _LEAD.sub("", line[bracket.end():], count=1).rstrip()
        return word, scope, rest, "bracket"
    if _BRACKET_UNCLOSED.search(line):
        return "marker without its closing ]"
    dex = _DEX.search(line)
    if dex is not None:
        if dex.group(2) is None:
            return "no ':' and text after the type"
        return dex.group(1), None, dex.group(2).strip().rstrip("`*").rstrip(), "dex"
    return None


def _block_after(lines: list[str], index: int) -> tuple[list[str], int]:
    """The lines after the marker's line that belong to its text, and how many there are."""
    marker_item = _LIST_ITEM.match(lines[index])
    item_indent = len(marker_item.group(1)) if marker_item else None
    block: list[str] = []
    for line in lines[index + 1:]:
        if not line.strip() or _HEADING.match(line) or _FENCE.match(line) or "MEMORY:" in line:
            break
        if item_indent is not None:
            item = _LIST_ITEM.match(line)
            indent = len(line) - len(line.lstrip())
            if (item and len(item.group(1)) <= item_indent) or indent <= item_indent:
                break
        block.append(line.rstrip())
    return block, len(block)


def _dedent(lines: list[str]) -> str:
    if len(lines) <= 1:
        return "\n".join(line.strip() for line in lines)
    rest = [line for line in lines[1:] if line.strip()]
    margin = min((len(line) - len(line.lstrip()) for line in rest), default=0)
    return "\n".join([lines[0].strip(), *(line[margin:] for line in lines[1:])])
