"""What the MCP server sends, kept small: every tool schema is read by the agent's model on every
turn, so the schemas the SDK derives lose what tells a model nothing (titles repeating the
names, `anyOf` with null for an optional argument, null defaults); answers are compact JSON."""

from __future__ import annotations

import json
from typing import Any


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (a tool's input schema) without titles, and with each optional argument as its
    plain type: leaving it out is how a client says "none"."""
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        variants = prop.pop("anyOf", None)
        if variants is not None:
            kept = [v for v in variants if v.get("type") != "null"]
            prop = {**(kept[0] if len(kept) == 1 else {"anyOf": kept}), **prop}
        if prop.get("default", 0) is None:
            del prop["default"]
        if isinstance(prop.get("items"), dict):
            prop["items"] = {k: v for k, v in prop["items"].items() if k != "title"}
        properties[name] = prop
    compact = {"type": "object", "properties": properties}
    if schema.get("required"):
        compact["required"] = schema["required"]
    return compact


def result_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
