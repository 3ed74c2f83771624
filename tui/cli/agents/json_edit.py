"""Editing another tool's JSON config file without rewriting it: `set_member` replaces the value
of one member (a path of keys from the top object) in the file's text, or adds the member where
it is missing, and leaves every other byte as it was. Reading is `claude_setup.read_json_object`
(a file that is not one plain JSON object is refused, nothing written); the text is parsed again
after the edit and checked to hold what was meant, so a splice that went wrong is never written.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring
from pathlib import Path
from typing import Any

from store.api import InvalidInput

_WS = re.compile(r"[ \t\r\n]*")


def _skip(text: str, at: int) -> int:
    match = _WS.match(text, at)
    return match.end() if match else at


def _members(text: str, start: int) -> tuple[list[tuple[str, int, int, int]], int]:
    """The members of the object whose `{` is at `start`: (key, key start, value start, value end)
    each, and the index of its closing `}`."""
    decoder = json.JSONDecoder()
    at = _skip(text, start + 1)
    found = []
    if text[at] == "}":
        return found, at
    while True:
        key_start = at
        key, at = scanstring(text, at + 1)
        at = _skip(text, at) + 1  # the colon
        at = _skip(text, at)
        value_start = at
        _, at = decoder.raw_decode(text, at)
        found.append((key, key_start, value_start, at))
        at = _skip(text, at)
        if text[at] == "}":
            return found, at
        at = _skip(text, at + 1)  # the comma


def _indent_unit(text: str) -> str:
    match = re.search(r"\n([ \t]+)\"", text)
    return match.group(1) if match else "  "


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    return re.match(r"[ \t]*", text[line_start:]).group(0)


def _dump(value: Any, unit: str, indent: str, newline: str) -> str:
    body = json.dumps(value, indent=unit if isinstance(unit, str) else 2, ensure_ascii=False)
    return body.replace("\n", newline + indent)


def set_member(text: str, path: tuple[str, ...], value: Any) -> str:
    """`text` (one JSON object, or blank) with the member at `path` set to `value`."""
    if not text.strip():
        return json.dumps(_nest(path, value), indent=2, ensure_ascii=False) + "\n"
    newline = "\r\n" if "\r\n" in text else "\n"
    unit = _indent_unit(text)
    at = _skip(text, 0)
    for depth, key in enumerate(path):
        members, close = _members(text, at)
        hit = [m for m in members if m[0] == key]
        if not hit:
            rest = _nest(path[depth + 1:], value)
            return _insert(text, at, members, close, key, rest, unit, newline)
        _, key_start, value_start, value_end = hit[-1]
        if depth == len(path) - 1 or text[value_start] != "{":
            if depth < len(path) - 1:
                value = _nest(path[depth + 1:], value)
            indent = _line_indent(text, key_start)
            return text[:value_start] + _dump(value, unit, indent, newline) + text[value_end:]
        at = value_start
    raise AssertionError("unreachable")


def _nest(path: tuple[str, ...], value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _insert(text: str, open_at: int, members, close: int, key: str, value: Any, unit: str, newline: str) -> str:
    """`key: value` added as the last member of the object from `open_at` to `close`."""
    if members:
        last_key_start, last_end = members[-1][1], members[-1][3]
        indent = _line_indent(text, last_key_start)
        if "\n" in text[open_at:close]:
            addition = f",{newline}{indent}{json.dumps(key)}: {_dump(value, unit, indent, newline)}"
        else:
            addition = f", {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
        return text[:last_end] + addition + text[last_end:]
    outer = _line_indent(text, close)
    indent = outer + unit
    addition = f"{newline}{indent}{json.dumps(key)}: {_dump(value, unit, indent, newline)}{newline}{outer}"
    return text[:open_at + 1] + addition + text[close:]


def edited(path: Path, text: str, keys: tuple[str, ...], value: Any, before: dict[str, Any]) -> str:
    """`set_member`, checked: the result parses, holds `value` at `keys`, and holds everything
    else as `before` did. Anything else is refused, nothing written."""
    try:
        after_text = set_member(text, keys, value)
        after = json.loads(after_text)
    except (ValueError, IndexError) as exc:
        raise InvalidInput(f"{path}: cannot edit it in place ({exc}); nothing was changed") from None
    expected = json.loads(json.dumps(before))
    node = expected
    for key in keys[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[keys[-1]] = value
    if after != expected:
        raise InvalidInput(f"{path}: cannot edit it in place without changing other settings; nothing was changed")
    return after_text
