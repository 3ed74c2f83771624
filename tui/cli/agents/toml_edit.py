"""Writing one table of a TOML file (Codex's `[mcp_servers.memdeck]`) and leaving the rest of the
file byte for byte: Python reads TOML (tomllib) but does not write it, and a whole-file writer
would drop the user's comments and layout. The table's lines (and its own sub-tables) are
replaced, or the table is appended; the result is parsed again and must hold exactly what the
file held, with only that table changed, or nothing is written.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from store.api import InvalidInput

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text and what it holds; ("", {}) when it is missing. A file TOML cannot read
    is refused, in one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", {}
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start}); nothing was changed") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read: {exc.strerror}; nothing was changed") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc}); nothing was changed: mend it, then run this again") from None


def _key_parts(header: str) -> list[str]:
    parts = []
    for part in re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[^.\s]+', header):
        parts.append(json.loads(part) if part.startswith('"') else part.strip("'"))
    return parts


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {type(value).__name__}")


def render_table(keys: tuple[str, ...], values: dict[str, Any]) -> list[str]:
    name = ".".join(k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k) for k in keys)
    return [f"[{name}]", *(f"{key} = {_value(value)}" for key, value in values.items())]


def with_table(text: str, keys: tuple[str, ...], values: dict[str, Any]) -> str:
    """`text` with the table `keys` (and its sub-tables) replaced by `values`, or appended."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    placed = inside = False
    for line in lines:
        header = _HEADER.match(line)
        if header:
            parts = _key_parts(header.group(1))
            inside = parts[:len(keys)] == list(keys)
            if inside and not placed:
                out += [row + newline for row in render_table(keys, values)]
                placed = True
        if not inside:
            out.append(line)
        elif not header and not line.strip():
            out.append(line)  # the blank line before the next table stays
    if not placed:
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += newline
        if out and out[-1].strip():
            out.append(newline)
        out += [row + newline for row in render_table(keys, values)]
    return "".join(out)


def _without(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    data = json.loads(json.dumps(data, default=str))
    node = data
    for key in keys[:-1]:
        node = node.get(key) if isinstance(node.get(key), dict) else {}
    node.pop(keys[-1], None)
    for depth in range(len(keys) - 1, 0, -1):  # a parent memdeck's table alone made goes too
        node = data
        for key in keys[:depth - 1]:
            node = node.get(key, {})
        if node.get(keys[depth - 1]) == {}:
            node.pop(keys[depth - 1])
    return data


def edited(path: Path, text: str, before: dict[str, Any], keys: tuple[str, ...], values: dict[str, Any]) -> str:
    """`with_table`, checked by reading the result back."""
    after_text = with_table(text, keys, values)
    try:
        after = tomllib.loads(after_text)
    except tomllib.TOMLDecodeError:
        after = None
    node = after
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    if after is None or node != values or _without(after, keys) != _without(before, keys):
        raise InvalidInput(f"{path}: {'.'.join(keys)} is written in a form memdeck does not edit (inline or "
                           "dotted keys); nothing was changed: move it to its own table, or delete it, and run this again")
    return after_text
