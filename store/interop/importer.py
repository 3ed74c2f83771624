"""Putting an `ImportDocument` into the store: all of it in one transaction, or none of it.

A memory that carries its own id stays its own memory: a new id is inserted with exactly the
fields the file gives (bulk, for speed), a known id is updated with the fields that differ
(unless the store's copy changed later), and an identical one is skipped. A memory without an id
goes through `Store.add`, so it reinforces a similar memory instead of repeating it. Every memory
imported gets an `imported` event, except one restored from a memdeck export with its own
history: that history is reproduced as it was, so an export re-imported exports the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from store.backends import import_rows
from store.index import embedding
from store.interop.import_writes import CHUNK, DEFER_VECTORS_FROM, MEMORY_INSERT_COLUMNS, writing_in_bulk, insert_memories
from store.engine.core import Store, clean_list, content_hash, derive_title
from store.engine.errors import InvalidInput
from store.engine.limits import check_project_name, clamp_time
from store.interop.document import ImportDocument, IncomingMemory
from store.engine.models import ProjectRow
from store.engine.records import Memory
from store.engine.redaction import unify_line_breaks
from store.engine.vocabulary import normalize_word

ACTOR = "import"
# Fields that say where and when a memory began; an import never rewrites them on a known id.
NOT_UPDATED = {"id", "project", "source", "created_at", "decayed_at", "status_changed_at"}
LIST_FIELDS = {"tags", "file_refs"}
TIME_FIELDS = {"updated_at", "last_used_at", "verified_at"}
# Files keep times to the millisecond (Nova) or microsecond (memdeck): closer is the same time.
TIME_PRECISION = 0.001


@dataclass
class ImportSummary:
    format: str
    source: str
    dry_run: bool
    added: list[tuple[str, str]] = field(default_factory=list)  # (id, project)
    updated: list[tuple[str, str]] = field(default_factory=list)  # (id, what changed)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (id or place in file, why)
    notes: list[str] = field(default_factory=list)  # unknown types kept under the fallback, ...
    problems: list[str] = field(default_factory=list)  # parts of the file that were not read
    sessions_added: int = 0
    activities_added: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format, "source": self.source, "dry_run": self.dry_run,
            "added": [{"id": i, "project": p} for i, p in self.added],
            "updated": [{"id": i, "why": w} for i, w in self.updated],
            "skipped": [{"what": i, "why": w} for i, w in self.skipped],
            "notes": self.notes, "problems": self.problems,
            "sessions_added": self.sessions_added, "activities_added": self.activities_added,
        }


def _same_time(a: float | None, b: float | None) -> bool:
    return a == b or (a is not None and b is not None and abs(a - b) < TIME_PRECISION)


def _json_list(values) -> str:
    """A tags or file refs column: cleaned, as JSON (most memories have none, or few)."""
    cleaned = clean_list(values) if values else ()
    return json.dumps(list(cleaned), ensure_ascii=False) if cleaned else "[]"


class _DryRun(Exception):
    """Raised inside the import's transaction to roll back everything a dry run did."""


def import_document(store: Store, document: ImportDocument, *, dry_run: bool = False) -> ImportSummary:
    summary = ImportSummary(document.format, document.source, dry_run, problems=list(document.problems))
    memories = _resolve_types(store, document.memories, summary)
    try:
        with store.db.atomic():
            _Import(store, document, summary).run(memories)
            if dry_run:
                raise _DryRun
            store.index_pending()
    except _DryRun:
        pass
    return summary


def _resolve_types(store: Store, memories: Sequence[IncomingMemory], summary: ImportSummary) -> list[IncomingMemory]:
    """Each memory's type word as a memdeck type (an unknown word is kept as a tag, as markers
    do), and its text's line breaks unified as `Store.add` does."""
    resolved = []
    resolutions: dict[str, Any] = {}  # a file uses a handful of type words, each resolved once
    for incoming in memories:
        fields = incoming.fields
        if (resolution := resolutions.get(fields["type"])) is None:
            resolution = resolutions[fields["type"]] = store.vocabulary.resolve_type(fields["type"])
        if (resolution.known and resolution.type == fields["type"]
                and "\r" not in _text_of(fields, "content") and "\r" not in _text_of(fields, "title")):
            resolved.append(incoming)  # nothing to change (most memories of a file)
            continue
        fields = dict(fields)
        for name in ("content", "title"):
            if isinstance(fields.get(name), str):
                fields[name] = unify_line_breaks(fields[name])
        fields["type"] = resolution.type
        if not resolution.known:
            word = normalize_word(resolution.original) or resolution.original
            fields["tags"] = (*fields.get("tags", ()), word)
            summary.notes.append(f"{incoming.where}: unknown type {resolution.original!r} kept as "
                                 f"{resolution.type} with the tag {word!r}")
        resolved.append(replace(incoming, fields=fields))
    return resolved


# The order `_Import.insert` builds a row in; `store.interop.import_writes` takes `MEMORY_INSERT_COLUMNS`.
_ROW_COLUMNS = (
    "id", "project_id", "type", "title", "content", "confidence", "tags", "file_refs", "scope", "hat", "source",
    "status", "protected", "session_id", "task", "created_at", "updated_at", "last_used_at", "verified_at",
    "decayed_at", "status_changed_at", "use_count", "supersedes", "content_hash", "meta", "owner",
)
_TO_INSERT_ORDER = (None if _ROW_COLUMNS == MEMORY_INSERT_COLUMNS
                    else tuple(_ROW_COLUMNS.index(name) for name in MEMORY_INSERT_COLUMNS))


def _text_of(fields: dict[str, Any], name: str) -> str:
    value = fields.get(name)
    return value if isinstance(value, str) else ""


class _Import:
    def __init__(self, store: Store, document: ImportDocument, summary: ImportSummary) -> None:
        self.store = store
        self.document = document
        self.summary = summary
        self.now = store.now()
        self.project_ids: dict[str, int] = {}
        self.new_rows: list[tuple] = []
        self.new_events: list[tuple] = []
        self.vectors = True
        self.json_lists: dict[Any, str] = {}
        self.origin_head: str | None = None

    def run(self, memories: list[IncomingMemory]) -> None:
        for project in self.document.projects:
            self.project_id(project["name"], project["root"], project["created_at"])
        with_id = [m for m in memories if m.fields.get("id")]
        existing = self.existing([m.fields["id"] for m in with_id])
        if len(with_id) - len(existing) >= DEFER_VECTORS_FROM and embedding.available():
            self.vectors = False
            self.summary.notes.append(f"{len(with_id) - len(existing)} new memories: their vectors for the semantic "
                                      "signal are left for `memdeck reindex` (full-text search finds them now)")
        first_seen: dict[str, str] = {}
        with writing_in_bulk(self.store, len(with_id) - len(existing)):
            for incoming in with_id:
                memory_id = incoming.fields["id"]
                if memory_id in first_seen:
                    self.summary.skipped.append((memory_id,
                                                 f"{incoming.where} repeats the id of {first_seen[memory_id]}"))
                    continue
                first_seen[memory_id] = incoming.where
                if memory_id in existing:
                    self.update(existing[memory_id], incoming)
                else:
                    self.insert(incoming)
                    if len(self.new_rows) >= CHUNK:
                        self.flush()
            self.flush()
        for incoming in with_id:
            if first_seen[incoming.fields["id"]] == incoming.where:
                self.import_anchors(incoming.fields["id"], incoming)
        # Memories without an id are compared with the store's (full text): after the index has
        # every memory the block above inserted.
        for incoming in memories:
            if not incoming.fields.get("id"):
                self.add(incoming)
        self.import_sessions()

    # -- projects -------------------------------------------------------------------------

    def project_name(self, incoming_project: str | None) -> str:
        return incoming_project or self.document.project or self.store.project

    def project_id(self, name: str, root: str | None = None, created_at: float | None = None) -> int:
        """The project's row id; created (with the file's root and date) when the store lacks it.
        Not `Store.project_id`: its cache would outlive a rolled-back import."""
        if name not in self.project_ids:
            row = ProjectRow.get_or_none(ProjectRow.name == name)
            if row is None:
                check_project_name(name, f"{self.document.source}: project")
                row = ProjectRow.create(name=name, root=root, created_at=created_at or self.now)
            self.project_ids[name] = row.id
        return self.project_ids[name]

    # -- memories with ids ----------------------------------------------------------------

    def existing(self, ids: list[str]) -> dict[str, Memory]:
        return self.store.found(ids)

    def insert(self, incoming: IncomingMemory) -> None:
        f = incoming.fields
        now = self.now
        source = f.get("source") or "imported"
        confidence = f["confidence"] if f.get("confidence") is not None else \
            self.store.config.initial_confidence(source)
        # Times from outside are never later than now. A file that does not say when memdeck last
        # changed the memory (Ralph, Nova without updatedAt, YAML by hand) starts its decay
        # clock now: the grace period counts from when memdeck had reason to trust it, not from
        # when another tool wrote it.
        created_at = clamp_time(f.get("created_at"), now) or now
        updated_at = max(created_at, clamp_time(f.get("updated_at"), now) or now)
        project = self.project_name(f.get("project"))
        content = f["content"]
        memory_id = f["id"]
        meta = f.get("meta")
        row = (
            memory_id, self.project_id(project), f["type"],
            (f.get("title") or "").strip() or derive_title(content), content, confidence,
            self.json_list(f.get("tags")), self.json_list(f.get("file_refs")),
            f.get("scope"), f.get("hat"), source, f.get("status") or "active", bool(f.get("protected")),
            f.get("session_id"), f.get("task"), created_at, updated_at,
            clamp_time(f.get("last_used_at"), now), clamp_time(f.get("verified_at"), now),
            clamp_time(f.get("decayed_at"), now), clamp_time(f.get("status_changed_at"), now) or updated_at,
            f.get("use_count") or 0, f.get("supersedes"), content_hash(content),
            json.dumps(meta, ensure_ascii=False) if meta else "{}",
            self.store.author,  # the person importing writes it (a personal memory is theirs)
        )
        self.new_rows.append(row if _TO_INSERT_ORDER is None else tuple(map(row.__getitem__, _TO_INSERT_ORDER)))
        if incoming.events is not None:
            for event in incoming.events:
                self.new_events.append((memory_id, event["kind"], min(event["at"], now), event["actor"],
                                        event["session_id"],
                                        event["confidence_before"], event["confidence_after"],
                                        json.dumps(event["detail"], ensure_ascii=False),
                                        event.get("author")))
        else:
            self.new_events.append((memory_id, "imported", now, ACTOR, None, None, confidence,
                                    self.origin_json(incoming.where), self.store.author))
        self.summary.added.append((memory_id, project))

    def json_list(self, values) -> str:
        """`_json_list`, once per distinct list: a file repeats the same few tags."""
        if not values:
            return "[]"
        try:
            key = values if isinstance(values, (tuple, str)) else tuple(values)
            text = self.json_lists.get(key)
        except TypeError:  # not a list of text: `_json_list` says what is wrong
            return _json_list(values)
        if text is None:
            text = self.json_lists[key] = _json_list(values)
        return text

    def origin_json(self, where: str) -> str:
        """`json.dumps(self.origin(...))` of a memory at `where`, from the document's part once."""
        if self.origin_head is None:
            whole = json.dumps(self.origin(IncomingMemory({}, "")), ensure_ascii=False)
            self.origin_head = whole[:-len('""}')]
        return f"{self.origin_head}{json.dumps(where, ensure_ascii=False)}}}"

    def flush(self) -> None:
        """Write the new memories so far and their events (`store.interop.import_writes`: words computed up front,
        one prepared statement for many rows)."""
        insert_memories(self.store, self.new_rows, self.new_events, vectors=self.vectors)
        self.new_rows, self.new_events = [], []

    def update(self, current: Memory, incoming: IncomingMemory) -> None:
        f = incoming.fields
        incoming_updated = f.get("updated_at")
        changes: dict[str, list[Any]] = {}
        for name, value in f.items():
            if name in NOT_UPDATED:
                continue
            if name in LIST_FIELDS:
                value = clean_list(value)
            elif name == "meta":
                value = {**current.meta, **(value or {})}
            elif name == "title":
                value = (value or "").strip() or current.title
            elif name in TIME_FIELDS:
                value = clamp_time(value, self.now)
            old = getattr(current, name)
            if name == "type" and old in incoming.same_types:
                continue
            if name in TIME_FIELDS and _same_time(value, old):
                continue
            if value != old:
                changes[name] = [list(old) if isinstance(old, tuple) else old,
                                 list(value) if isinstance(value, tuple) else value]
        if not changes:
            self.summary.skipped.append((current.id, "already in the store, unchanged"))
            return
        if incoming_updated is not None and current.updated_at > incoming_updated + TIME_PRECISION:
            self.summary.skipped.append((current.id, "the store's copy changed after this one"))
            return
        update: dict[str, Any] = {}
        for name, (_, new) in changes.items():
            update[name] = json.dumps(new, ensure_ascii=False) if name in LIST_FIELDS | {"meta"} else new
        update.setdefault("updated_at", self.now)
        if "content" in update:
            update["content_hash"] = content_hash(update["content"])
        if "status" in update:
            update["status_changed_at"] = f.get("status_changed_at") or self.now
        self.store.backend.memory_table.update(current.id, update)
        after = update.get("confidence", current.confidence)
        self.store.record_event(current.id, "imported", before=current.confidence, after=after, actor=ACTOR,
                                at=self.now, detail={**self.origin(incoming), "changes": changes})
        self.summary.updated.append((current.id, "changed: " + ", ".join(sorted(changes))))

    # -- memories without ids -------------------------------------------------------------

    def add(self, incoming: IncomingMemory) -> None:
        f = incoming.fields
        if f.get("status") == "deleted":
            self.summary.skipped.append((incoming.where, "has no id and is in the trash"))
            return
        try:
            result = self.store.add(
                f["content"], type=f["type"], title=f.get("title"), tags=f.get("tags"), hat=f.get("hat"),
                scope=f.get("scope"), file_refs=f.get("file_refs"), confidence=f.get("confidence"),
                source=f.get("source") or "imported", status=f.get("status") or "active",
                session_id=f.get("session_id"), task=f.get("task"),
                project=self.project_name(f.get("project")), actor=ACTOR, created_at=f.get("created_at"),
                updated_at=f.get("updated_at") or self.now, meta=f.get("meta"),
            )
        except InvalidInput as exc:
            raise InvalidInput(f"{self.document.source}: {incoming.where}: {exc}") from None
        memory = result.memory
        self.import_anchors(memory.id, incoming)
        self.store.record_event(memory.id, "imported", before=memory.confidence, after=memory.confidence,
                                actor=ACTOR, at=self.now, detail={**self.origin(incoming), "action": result.action})
        if result.created:
            self.summary.added.append((memory.id, memory.project))
        else:
            self.summary.updated.append((memory.id, f"reinforced by {incoming.where} (similar text, no id)"))

    # -- anchors ------------------------------------------------------------------------------

    def import_anchors(self, memory_id: str, incoming: IncomingMemory) -> None:
        """The file's anchors of a memory, as exported (lines, hash, snapshot, commit, last check),
        except those it already has (the same path and lines): an export imported twice, or into
        the store it came from, adds none. Nothing is captured from files here: `memdeck verify`
        checks them against this checkout's code."""
        if not incoming.anchors:
            return
        backend = self.store.backend
        have = set(import_rows.anchor_places(backend, memory_id))
        for a in incoming.anchors:
            if (a["path"], a["start"], a["end"]) in have:
                continue
            have.add((a["path"], a["start"], a["end"]))
            import_rows.add_anchor(backend, (
                memory_id, a["path"], a["start"], a["end"], a["line_hash"], a["snapshot"], a["commit"],
                a["blob"], a["status"], clamp_time(a["checked_at"], self.now),
                clamp_time(a["anchored_at"], self.now) or self.now))

    def origin(self, incoming: IncomingMemory) -> dict[str, str]:
        return {"format": self.document.format, "source": self.document.source, "where": incoming.where}

    # -- sessions -------------------------------------------------------------------------

    def import_sessions(self) -> None:
        backend = self.store.backend
        for session in self.document.sessions:
            if not import_rows.has_session(backend, session["id"]):
                project_id = self.project_id(self.project_name(session["project"]))
                import_rows.add_session(backend, (
                    session["id"], project_id, session["agent"], session["hat"], session["task"],
                    session["started_at"], session["ended_at"], session["source_path"],
                    json.dumps(list(session["files_touched"]), ensure_ascii=False),
                    json.dumps(session["meta"], ensure_ascii=False)))
                self.summary.sessions_added += 1
            activities = [(session["id"], a["seq"], a["at"], a["kind"], a["summary"], a["memory_id"],
                           json.dumps(a["detail"], ensure_ascii=False)) for a in session["activities"]]
            before = import_rows.activity_count(backend, session["id"])
            import_rows.add_activities(backend, activities)
            self.summary.activities_added += import_rows.activity_count(backend, session["id"]) - before
