"""Nova26's `.nova/memory/session-memory.json` (seed 003): `{version, projectName, entries,
lastUpdated}`, each entry a key/value with a category, agent, confidence and access counts.

An entry's key is a memdeck title and its value the content; the category maps to a type and back
(its word is kept in meta when memdeck's type would name it differently). The agent is kept in
meta. Nova has no tags, hats, scopes, file refs, statuses or history: those are not carried.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Iterable

from store.engine.errors import InvalidInput
from store.engine.escapes import json_safe
from store.interop.document import ImportDocument, IncomingMemory, Reader, memory_id
from store.engine.records import Memory

NOVA_VERSION = "1.0.0"
# Nova's eight categories and the memdeck type each is; the reverse is used on export.
CATEGORY_TYPES: dict[str, str] = {
    "user_preference": "preference",
    "architecture": "architecture",
    "pattern": "pattern",
    "error_solution": "fix",
    "project_fact": "context",
    "style": "convention",
    "constraint": "constraint",
    "decision": "decision",
}
# memdeck types Nova has no category for, under the nearest one.
NEAREST_CATEGORY: dict[str, str] = {
    "dependency": "architecture", "pitfall": "error_solution", "remediation": "error_solution",
    "behavior": "pattern", "timing": "project_fact", "maintenance": "project_fact",
}
CATEGORY_META = "nova_category"
AGENT_META = "agent"


def nova_time(ts: float | None) -> str | None:
    """A time as JavaScript's `toISOString()` writes it: milliseconds, `Z`."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def category_of(memory: Memory) -> str:
    written = memory.meta.get(CATEGORY_META)
    if written and CATEGORY_TYPES.get(written, memory.type) == memory.type:
        return written
    for category, type in CATEGORY_TYPES.items():
        if type == memory.type:
            return category
    return NEAREST_CATEGORY.get(memory.type, "project_fact")


def read_document(data: Any, source: str) -> ImportDocument:
    top = Reader(data, "")
    if not top.has("entries"):
        raise InvalidInput("not a Nova26 memory file: there is no \"entries\" list")
    version = top.data.get("version")
    if version is not None and (not isinstance(version, str) or not version.startswith("1.")):
        raise InvalidInput(f"unsupported Nova26 memory version {version!r}; this memdeck reads 1.x")
    memories = [_entry(item, f"entries[{i}]") for i, item in enumerate(top.items("entries"))]
    return ImportDocument(format="nova", source=source, memories=memories)


def _entry(item: Any, where: str) -> IncomingMemory:
    r = Reader(item, where)
    value = r.text("value", required=True)
    if not value.strip():
        raise InvalidInput(f"{r.at('value')}: an entry needs a value")
    category = r.text("category", required=True)
    meta: dict[str, Any] = {}
    if category not in CATEGORY_TYPES:
        meta[CATEGORY_META] = category
    agent = r.text("agent")
    if agent is not None:
        meta[AGENT_META] = agent
    fields: dict[str, Any] = {"type": CATEGORY_TYPES.get(category, category), "content": value,
                              "title": r.text("key", required=True), "source": "imported"}
    entry_id = memory_id(r)
    if entry_id is not None:
        fields["id"] = entry_id
    for name, key in (("created_at", "createdAt"), ("updated_at", "updatedAt"), ("last_used_at", "lastAccessedAt")):
        if r.data.get(key) is not None:
            fields[name] = r.time(key)
    if r.data.get("confidence") is not None:
        fields["confidence"] = r.number("confidence", low=0.0, high=1.0)
    if r.data.get("accessCount") is not None:
        fields["use_count"] = r.integer("accessCount")
    if meta:
        fields["meta"] = meta
    same = frozenset(t for t, nearest in NEAREST_CATEGORY.items() if nearest == category)
    return IncomingMemory(fields, where, same_types=same | {fields["type"]})


def loads(text: str, source: str) -> ImportDocument:
    from store.interop.memdeck_json import parse_json

    return read_document(parse_json(text), source)


def _number(value: float) -> int | float:
    """JavaScript writes 1.0 as `1`."""
    return int(value) if float(value).is_integer() else value


def dumps(memories: Iterable[Memory], project: str, now: float) -> str:
    """A Nova26 memory file, laid out as Nova's `JSON.stringify(store, null, 2)` writes it."""
    entries = []
    for m in sorted(memories, key=lambda m: (m.created_at, m.id)):
        entry: dict[str, Any] = {"id": m.id, "category": category_of(m), "key": m.title, "value": m.content}
        if m.meta.get(AGENT_META) is not None:
            entry["agent"] = m.meta[AGENT_META]
        entry.update({"confidence": _number(m.confidence), "createdAt": nova_time(m.created_at),
                      "updatedAt": nova_time(m.updated_at), "accessCount": m.use_count})
        if m.last_used_at is not None:
            entry["lastAccessedAt"] = nova_time(m.last_used_at)
        entries.append(entry)
    store = {"version": NOVA_VERSION, "projectName": project, "entries": entries, "lastUpdated": nova_time(now)}
    return json_safe(json.dumps(store, ensure_ascii=False, indent=2))
