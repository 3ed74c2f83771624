"""Telling an import file's format from its name and its first bytes."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from store.engine.errors import InvalidInput

IMPORT_FORMATS = ("json", "ralph", "nova", "yaml")
_BY_SUFFIX = {".md": "ralph", ".markdown": "ralph", ".yml": "yaml", ".yaml": "yaml"}
_RALPH_HINT = re.compile(r"^(# Memories\s*$|### mem-\d+-)", re.MULTILINE)
_YAML_HINT = re.compile(r"^(---\s*$|format:\s*memdeck\s*$|memories:\s*$)", re.MULTILINE)


def looks_like_json(text: str) -> bool:
    return text.lstrip("\ufeff \t\r\n").startswith(("{", "["))


def detect_format(text: str, name: str) -> str:
    """`json` (memdeck or Nova, told apart once parsed), `ralph` or `yaml`."""
    suffix = PurePath(name).suffix.lower() if name != "-" else ""
    if suffix == ".json" or looks_like_json(text):
        return "json"
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    head = text[:65536]
    if _RALPH_HINT.search(head):
        return "ralph"
    if _YAML_HINT.search(head):
        return "yaml"
    raise InvalidInput(f"{name}: cannot tell the format; give --format json, ralph, nova or yaml")


def json_kind(data: Any) -> str:
    """`nova` for a Nova26 session-memory file, else `json` (memdeck or seed 000)."""
    if isinstance(data, dict) and "entries" in data and "memories" not in data:
        return "nova"
    return "json"
