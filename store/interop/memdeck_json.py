"""memdeck's own JSON: the lossless format. Every field of every memory, its events, the projects
and the sessions with their activity logs.

It is a superset of seed 000's export (`{"version", "project", "exported_at", "memories"}`), so a
file written by Dex imports too (`created_by_hat` and friends are read as `hat` and friends).
Times are ISO 8601 UTC, to the microsecond when they have a fraction of a second.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields as dataclass_fields
from typing import Any, Iterator

from store.anchors.anchoring import Anchor, anchors_for
from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.engine.escapes import json_safe
from store.interop.document import (
    ImportDocument, Reader, iso_exact, read_memory, read_project, read_session,
)
from store.engine.records import Memory
from store.engine.redaction import _LONE_SURROGATE, redact, whole_characters
from store.backends import search_rows
from store.browse.search import MemoryFilter, selection

FORMAT_NAME = "memdeck"
VERSION = 1
MEMORY_TIMES = ("created_at", "updated_at", "last_used_at", "verified_at")
# Lifecycle bookkeeping that `Memory` does not show but decay needs to resume where it was.
LIFECYCLE_COLUMNS = ("decayed_at", "status_changed_at")
EVENT_FIELDS = ("kind", "at", "actor", "session_id", "confidence_before", "confidence_after", "detail", "author")
ACTIVITY_FIELDS = ("seq", "at", "kind", "summary", "memory_id", "detail")


# Not the version: it counts writes in one store, and an import starts its own count. Not the
# memory's anchor status: it is summed up from its anchors, which the export carries whole.
MEMORY_FIELDS = tuple(f.name for f in dataclass_fields(Memory) if f.name not in ("version", "anchor_status", "layer"))


def memory_json(memory: Memory, lifecycle: dict[str, float | None] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name in MEMORY_FIELDS:
        value = getattr(memory, name)
        if name in MEMORY_TIMES:
            value = iso_exact(value)
        elif isinstance(value, tuple):
            value = list(value)
        data[name] = value
    for name, value in (lifecycle or {}).items():
        data[name] = iso_exact(value)
    return data


def exported_memories(store: Store, flt: MemoryFilter,
                      limit: int | None = None) -> Iterator[tuple[Memory, dict[str, float | None]]]:
    """The memories `flt` selects (the first `limit`), oldest first, each with its lifecycle columns."""
    from store.engine.core import memory_from_row

    for row in search_rows.exported(store.backend, selection(store, flt), limit):
        yield memory_from_row(row[:-2]), dict(zip(LIFECYCLE_COLUMNS, row[-2:]))


def anchor_json(anchor: Anchor) -> dict[str, Any]:
    """An anchor with what a check compares (its lines' hash and snapshot, the commit and blob
    then) and its last check; not the file size and mtime cached for that check, which belong to
    this machine's copy of the file."""
    return {"path": anchor.path, "start": anchor.start, "end": anchor.end, "line_hash": anchor.line_hash,
            # Redacted again: a snapshot taken before memdeck redacted them may hold a key.
            "snapshot": redact(anchor.snapshot)[0], "commit": anchor.commit, "blob": anchor.blob,
            "status": anchor.status, "checked_at": iso_exact(anchor.checked_at),
            "anchored_at": iso_exact(anchor.created_at)}


def events_by_memory(store: Store, flt: MemoryFilter) -> dict[str, list[dict[str, Any]]]:
    rows = search_rows.exported_events(store.backend, selection(store, flt))
    grouped: dict[str, list[dict[str, Any]]] = {}
    for memory_id, kind, at, actor, session_id, before, after, detail, author in rows:
        grouped.setdefault(memory_id, []).append({
            "kind": kind, "at": iso_exact(at), "actor": actor, "session_id": session_id,
            "confidence_before": before, "confidence_after": after, "detail": json.loads(detail),
            "author": author,
        })
    return grouped


def sessions_json(store: Store, project_names: list[str]) -> list[dict[str, Any]]:
    """The projects' sessions, oldest first, each with its whole activity log."""
    result = []
    for name in project_names:
        for session in reversed(store.sessions.recent(name, limit=1_000_000)):
            data = session.to_json()
            data["started_at"], data["ended_at"] = iso_exact(session.started_at), iso_exact(session.ended_at)
            data["activities"] = [
                {"seq": a.seq, "at": iso_exact(a.at), "kind": a.kind, "summary": a.summary,
                 "memory_id": a.memory_id, "detail": a.detail}
                for a in store.sessions.activities(session.id, limit=10_000_000)
            ]
            result.append(data)
    return result


def export_document(store: Store, flt: MemoryFilter, *, with_history: bool = True,
                    limit: int | None = None) -> dict[str, Any]:
    """The memdeck document for the memories `flt` selects. With `with_history`, each memory's
    events and the exported projects' sessions come too (JSON); without, memories only (YAML)."""
    events = events_by_memory(store, flt) if with_history else {}
    exported = list(exported_memories(store, flt, limit))
    anchors = anchors_for(store, [memory.id for memory, _ in exported]) if with_history else {}
    memories = []
    for memory, lifecycle in exported:
        data = memory_json(memory, lifecycle)
        if with_history:
            data["events"] = events.get(memory.id, [])
            data["anchors"] = [anchor_json(a) for a in anchors.get(memory.id, [])]
        memories.append(data)
    names = sorted({m["project"] for m in memories} | ({store.project} if not flt.all_projects else set()))
    projects = {p.name: p for p in store.projects()}
    document: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": VERSION,
        "project": store.project,
        "exported_at": iso_exact(store.now()),
        "projects": [{"name": n, "root": projects[n].root, "created_at": iso_exact(projects[n].created_at)}
                     for n in names if n in projects],
        "memories": memories,
    }
    if with_history:
        document["sessions"] = sessions_json(store, [n for n in names if n in projects])
    return document


def dumps(document: dict[str, Any]) -> str:
    """The document with one memory (or session) per line: a change to a memory is a one-line
    diff, and each line goes through json's C encoder (`indent=` would use the slow Python one)."""
    parts = []
    for key, value in document.items():
        if isinstance(value, list) and value:
            items = ",\n".join("    " + json.dumps(item, ensure_ascii=False) for item in value)
            parts.append(f"  {json.dumps(key)}: [\n{items}\n  ]")
        else:
            parts.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return json_safe("{\n" + ",\n".join(parts) + "\n}\n")


def read_document(data: Any, source: str, format: str = "json") -> ImportDocument:
    """Check a parsed memdeck (or seed 000) document and turn it into what the importer takes. A
    bare list is a list of memories (what `memdeck list --json` prints)."""
    if isinstance(data, list):
        data = {"memories": data}
    if not isinstance(data, dict):
        raise InvalidInput("not a memdeck export: it holds no object with a \"memories\" list")
    top = Reader(data, "")
    if not top.has("memories"):
        raise InvalidInput("not a memdeck export: there is no \"memories\" list")
    version = top.data.get("version", VERSION)
    if isinstance(version, bool) or version != VERSION:
        raise InvalidInput(f"unsupported export version {version!r}; this memdeck reads version {VERSION}")
    if top.data.get("format", FORMAT_NAME) != FORMAT_NAME:
        raise InvalidInput(f"not a memdeck export: format is {top.data.get('format')!r}")
    return ImportDocument(
        format=format,
        source=source,
        project=top.text("project"),
        memories=[read_memory(m, f"memories[{i}]") for i, m in enumerate(top.items("memories"))],
        projects=[read_project(p, f"projects[{i}]") for i, p in enumerate(top.items("projects"))],
        sessions=[read_session(s, f"sessions[{i}]") for i, s in enumerate(top.items("sessions"))],
    )


def loads(text: str, source: str) -> ImportDocument:
    return read_document(parse_json(text), source)


# A `\\uD800`-`\\uDFFF` escape: the only way parsed JSON holds half a character when its text does not.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def parse_json(text: str) -> Any:
    try:
        data = json.loads(text)
        # Walking every string of a large file costs a third of its parse: only when it may need it.
        if _SURROGATE_ESCAPE.search(text) or _LONE_SURROGATE.search(text):
            data = whole_characters(data)
        return data
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InvalidInput("JSON nested too deeply to be a memory export") from None
