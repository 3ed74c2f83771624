"""The store: memories, their history of events, projects and sessions, behind one object.

`Store` owns a database connection, the effective config and vocabulary, and a clock. Every write
is one short transaction and records an event, so a memory's history explains every number on
screen. Reads hand out the frozen dataclasses of `records.py`.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from peewee import SqliteDatabase

from store.engine.clock import Clock
from store.engine.config import Config
from store.engine.confidence import used_confidence
from store.engine.database import bind, connect, default_db_path
from store.backends.postgres import location
from store.engine.errors import Conflict, InvalidInput, NotFound
from store.engine.ids import new_memory_id
from store.engine.limits import (
    MAX_CONTENT_CHARS, check_confidence, check_content, check_project_name, check_time, clamp_time,
    safe_project_name, sane_confidence, sane_time,
)
from store.engine.projects import path_text
from store.engine.models import EventRow, MemoryRow, ProjectRow
from store.engine.records import AddResult, Event, Memory, Project
from store.capture.redaction import unify_line_breaks
from store.engine.vocabulary import SOURCES, STATUSES, Vocabulary
from store.engine.sessions import SessionLog
from store.engine.similarity import Similarity, decided_summary
# Re-exported: callers across the store take the text helpers from here.
from store.engine.text import clean_list, content_hash, derive_title, normalize_text  # noqa: F401

# The columns read into a `Memory`, in order; reads select exactly these for speed.
MEMORY_COLUMNS = (
    "memory.id", "project.name", "memory.type", "memory.title", "memory.content",
    "memory.confidence", "memory.tags", "memory.file_refs", "memory.scope", "memory.hat",
    "memory.source", "memory.status", "memory.protected", "memory.session_id", "memory.task",
    "memory.created_at", "memory.updated_at", "memory.last_used_at", "memory.verified_at",
    "memory.use_count", "memory.supersedes", "memory.meta", "memory.version",
    # The worst status of its anchors' last check (None without anchors): the stale badge.
    "(SELECT anchor.status FROM anchor WHERE anchor.memory_id = memory.id ORDER BY CASE anchor.status "
    "WHEN 'missing' THEN 3 WHEN 'changed' THEN 2 WHEN 'moved' THEN 1 ELSE 0 END DESC LIMIT 1)",
)
MEMORY_COLUMNS_SQL = ", ".join(MEMORY_COLUMNS)
MEMORY_SELECT = f"SELECT {MEMORY_COLUMNS_SQL} FROM memory JOIN project ON project.id = memory.project_id"

EDITABLE_FIELDS = (
    "title", "content", "type", "tags", "file_refs", "scope", "hat", "confidence",
    "protected", "status", "task", "verified_at",
)

# What a conflict names as changed meanwhile: the editable fields and the counters rules move.
SHOWN_FIELDS = (*EDITABLE_FIELDS, "last_used_at", "use_count", "supersedes")


def memory_from_row(row: Sequence[Any]) -> Memory:
    # Times and confidence pass through the limits: a store written before them (or by another
    # tool) may hold a year 9999 or a 1e300, which must still list, show and export.
    return Memory(
        id=row[0], project=row[1], type=row[2], title=row[3], content=row[4],
        confidence=sane_confidence(row[5]), tags=tuple(json.loads(row[6])), file_refs=tuple(json.loads(row[7])),
        scope=row[8], hat=row[9], source=row[10], status=row[11], protected=bool(row[12]),
        session_id=row[13], task=row[14], created_at=sane_time(row[15]), updated_at=sane_time(row[16]),
        last_used_at=sane_time(row[17]), verified_at=sane_time(row[18]), use_count=row[19], supersedes=row[20],
        meta=json.loads(row[21]) if row[21] else {}, version=row[22], anchor_status=row[23],
    )


@dataclass(frozen=True)
class Change:
    """One memory's confidence or status change computed by a lifecycle rule, before it is applied."""

    memory_id: str
    confidence_before: float
    confidence_after: float
    status_before: str
    status_after: str
    detail: dict[str, Any]


def id_chunks(ids: Sequence[str], size: int = 500) -> Iterator[tuple[list[str], str]]:
    """`ids` in slices within SQLite's limit on query parameters, each with its `?,?,…`."""
    for start in range(0, len(ids), size):
        chunk = list(ids[start:start + size])
        yield chunk, ",".join("?" * len(chunk))

class Store(SessionLog, Similarity):
    """A memdeck store. Open with `Store.open(path)`; one open store per process at a time."""

    def __init__(self, db: SqliteDatabase, path: Path, config: Config, clock: Clock,
                 project: str, project_root: Path | None = None, backup: Path | None = None) -> None:
        self.db = db
        self.path = path
        self.config = config
        self.clock = clock
        self.vocabulary = Vocabulary.from_config(config)
        self.project = project
        self.project_root = project_root
        self.backup = backup  # the copy made before migrating this store, if any
        self._project_ids: dict[str, int] = {}
        self.author = author_name(config)

    @classmethod
    def open(cls, path: Path | str | None = None, *, project: str | None = None,
             config: Config | None = None, clock: Clock | None = None,
             project_root: Path | None = None) -> "Store":
        from store.engine.projects import detect_project

        path = location(path) if path is not None else default_db_path()
        if project is None or project_root is None:
            detected_name, detected_root = detect_project()
            project = project or detected_name
            project_root = project_root or detected_root
        if config is None:
            config = Config.load(project_root)
        db, backup = connect(path)
        bind(db)
        store = cls(db, path, config, clock or Clock(), project, project_root, backup)
        if isinstance(path, str):  # a team store on PostgreSQL names the database user (issue 29)
            from store.backends.postgres_roles import team_user

            store.author = team_user(db) or store.author
        if backup is not None:
            store.index_pending()  # a migrated store: the memories it held have no words yet
        return store

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.db.atomic():
            yield

    def now(self) -> float:
        return self.clock.now()

    # -- projects ---------------------------------------------------------------------------

    def project_id(self, name: str | None = None, *, create: bool = True) -> int:
        name = name or self.project
        if name in self._project_ids:
            return self._project_ids[name]
        row = ProjectRow.get_or_none(ProjectRow.name == name)
        if row is None:
            if not create:
                raise NotFound(f"no project named {name!r}")
            check_project_name(name)
            # The root is shown, never opened: bytes that are not UTF-8 (which SQLite refuses)
            # are kept as U+FFFD rather than failing the command run there.
            root = path_text(self.project_root) if name == self.project and self.project_root else None
            with self.db.atomic():
                row = ProjectRow.get_or_none(ProjectRow.name == name) or ProjectRow.create(
                    name=name, root=root, created_at=self.now()
                )
        self._project_ids[name] = row.id
        return row.id

    def projects(self) -> list[Project]:
        cursor = self.db.execute_sql(
            "SELECT project.id, project.name, project.root, project.created_at, "
            "(SELECT COUNT(*) FROM memory WHERE memory.project_id = project.id "
            " AND memory.status != 'deleted') FROM project ORDER BY project.name"
        )
        return [Project(*row) for row in cursor.fetchall()]

    # -- reading memories -------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        row = self.db.execute_sql(MEMORY_SELECT + " WHERE memory.id = ?", (memory_id,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return memory_from_row(row)

    def found(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """The memories with these ids that exist, by id."""
        found: dict[str, Memory] = {}
        for chunk, marks in id_chunks(list(dict.fromkeys(memory_ids))):
            for row in self.db.execute_sql(MEMORY_SELECT + f" WHERE memory.id IN ({marks})", chunk):
                found[row[0]] = memory_from_row(row)
        return found

    def get_many(self, memory_ids: Sequence[str]) -> list[Memory]:
        """The memories with these ids, in the order given; unknown ids raise `NotFound`."""
        ids = list(dict.fromkeys(memory_ids))
        found = self.found(ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(f"no memory with id {', '.join(repr(m) for m in missing)}")
        return [found[i] for i in ids]

    def recent_titles(self, limit: int = 20_000) -> list[tuple[str, str]]:
        """(id, title) of the project's memories outside the trash, most recently changed first:
        what the palette's "go to memory" matches against."""
        return self.db.execute_sql(
            "SELECT memory.id, memory.title FROM memory WHERE memory.project_id = ? "
            "AND memory.status != 'deleted' ORDER BY memory.updated_at DESC LIMIT ?",
            (self.project_id(), limit)).fetchall()

    def events(self, memory_id: str) -> list[Event]:
        """A memory's history in the order memdeck recorded it (a time from outside, such as an
        imported creation date, never moves an event before one recorded earlier)."""
        rows = (EventRow.select().where(EventRow.memory == memory_id)
                .order_by(EventRow.id).tuples())
        return [
            Event(id=r[0], memory_id=r[1], kind=r[2], at=sane_time(r[3]), actor=r[4], session_id=r[5],
                  confidence_before=r[6], confidence_after=r[7], detail=json.loads(r[8]), author=r[9])
            for r in rows
        ]

    # -- writing memories -------------------------------------------------------------------

    def record_event(self, memory_id: str, kind: str, *, before: float | None, after: float | None,
                     actor: str, session_id: str | None = None, at: float | None = None,
                     detail: dict[str, Any] | None = None) -> None:
        # Plain SQL: every write records events, and Peewee's query building costs more than
        # SQLite's insert here.
        self.db.execute_sql(
            "INSERT INTO event (memory_id, kind, at, actor, session_id, confidence_before, "
            "confidence_after, detail, author) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (memory_id, kind, self.now() if at is None else at, actor, session_id, before, after,
             json.dumps(detail or {}, ensure_ascii=False), self.author),
        )

    def _check_confidence(self, value: float) -> float:
        return round(check_confidence(value), 6)

    def check_content(self, text: str, where: str = "a memory") -> str:
        """The same length limit as imports, so whatever is stored exports and imports again."""
        return check_content(text, int(self.config.interop.max_memory_chars or MAX_CONTENT_CHARS), where)

    def check_type(self, word: str) -> str:
        resolution = self.vocabulary.resolve_type(word)
        if not resolution.known:
            raise InvalidInput(
                f"unknown type {word!r}; known types: {', '.join(self.vocabulary.types)}"
            )
        return resolution.type


    def add(self, content: str, *, type: str, title: str | None = None,
            tags: Iterable[str] | str | None = None, hat: str | None = None, scope: str | None = None,
            file_refs: Iterable[str] | str | None = None, confidence: float | None = None,
            source: str = "explicit", status: str = "active", session_id: str | None = None,
            task: str | None = None, project: str | None = None, actor: str = "cli",
            memory_id: str | None = None, created_at: float | None = None,
            meta: dict[str, Any] | None = None, reinforce: bool = True,
            supersedes: str | None = None, note: str | None = None,
            updated_at: float | None = None) -> AddResult:
        """Store a memory, or reinforce the active one it repeats (seeds 001, 003, 004).

        `created_at` and `updated_at` (for a memory from outside) are checked against the limits
        and never later than now; `updated_at` defaults to the creation time.

        Reinforcing never lowers confidence: the result is the higher of the two, plus the boost,
        capped at `confidence.max`. Tags and file refs of both are united. With `supersedes`,
        `note` (why the old memory is replaced) goes into the old memory's `superseded` event.
        """
        content = unify_line_breaks(content.strip()) if content else ""
        if not content:
            raise InvalidInput("a memory needs some content")
        self.check_content(content)
        type = self.check_type(type)
        if source not in SOURCES:
            raise InvalidInput(f"unknown source {source!r}; one of {', '.join(SOURCES)}")
        if status not in STATUSES or status == "deleted":
            raise InvalidInput(f"a new memory's status is pending, active or inactive, not {status!r}")
        incoming = self._check_confidence(
            self.config.initial_confidence(source) if confidence is None else confidence
        )
        tags, file_refs = clean_list(tags), clean_list(file_refs)
        scope = scope.strip() if scope and scope.strip() else None
        hat = hat.strip() if hat and hat.strip() else None
        title = unify_line_breaks((title or "").strip()) or derive_title(content)
        now = self.now()
        with self.db.atomic():
            project_id = self.project_id(project)
            if supersedes is not None:
                old = self.get(supersedes)  # raises NotFound before anything is written
            # Same statement: reinforced; an update: supersedes; unsure or contradicting: held in
            # the inbox as a proposal (store.engine.sameness, store.engine.similarity).
            decision = None if (not reinforce or supersedes) else self.decide(project_id, type, scope, content)
            if decision is not None and decision[1].kind == "same":
                row, verdict = decision
                reinforced = self._reinforce(row, incoming, tags, file_refs, verdict, content, session_id, actor, now)
                self.index_pending()
                return AddResult(reinforced, created=False)
            if decision is not None:
                supersedes, status, meta = self._route(decision, status, meta)
                if supersedes is not None:
                    old = self.get(supersedes)
                    note = note or f"update: {decision[1].explain()}"
            if memory_id is None:
                memory_id = self._unused_memory_id(now)
            elif MemoryRow.select().where(MemoryRow.id == memory_id).exists():
                raise InvalidInput(f"a memory with id {memory_id!r} already exists")
            created = now if created_at is None else clamp_time(check_time(created_at, "created_at"), now)
            updated = created if updated_at is None else max(created, clamp_time(check_time(updated_at, "updated_at"), now))
            row = dict(
                id=memory_id, project_id=project_id, type=type, title=title, content=content,
                confidence=incoming, tags=json.dumps(list(tags), ensure_ascii=False),
                file_refs=json.dumps(list(file_refs), ensure_ascii=False), scope=scope, hat=hat,
                source=source, status=status, protected=0, session_id=session_id, task=task,
                created_at=created, updated_at=updated, status_changed_at=updated, use_count=0,
                supersedes=supersedes, content_hash=content_hash(content),
                meta=json.dumps(meta or {}, ensure_ascii=False), owner=self.author,
            )
            # Plain SQL for the same reason as in `record_event`: this is the hot path of bulk adds.
            self.db.execute_sql(f"INSERT INTO memory ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                tuple(row.values()))
            kind = "imported" if source == "imported" else "created"
            self.record_event(memory_id, kind, before=None, after=incoming, actor=actor,
                              session_id=session_id, at=created,
                              detail={"source": source, **({"supersedes": supersedes} if supersedes else {})})
            if supersedes is not None:
                self._mark_superseded(old, memory_id, actor, session_id, note)
            elif decision is not None:
                self._record_proposal(memory_id, decision, actor, session_id, created)
            self.index_pending()
        return AddResult(self.get(memory_id), created=True,
                         decided=decided_summary(decision, supersedes is not None))

    def add_many(self, items: Iterable[dict[str, Any]], *, reinforce: bool = False) -> list[AddResult]:
        """The bulk path: `add` each of `items` (keyword arguments of `add`) in one transaction.

        Without `reinforce`, no memory is compared with the store: for filling a store with
        memories known to be distinct (benchmarks, a first import), where the lookup per memory
        would dominate. All are stored or, on the first bad one, none.
        """
        with self.db.atomic():
            return [self.add(**{"reinforce": reinforce, **item}) for item in items]

    def index_pending(self) -> int:
        """Identifier words and vectors for the memories written since the last indexing,
        whoever wrote them (`store.retrieval.reindex`); how many there were."""
        from store.retrieval.reindex import index_pending

        return index_pending(self)

    def _unused_memory_id(self, now: float) -> str:
        """A fresh id. Ids made in the same second share their prefix, and 4 hex digits collide
        when many memories arrive at once, so a taken one is drawn again (after 64 tries, from
        the next second). The write lock is held, so no other process can take it meanwhile."""
        attempt = 0
        while True:
            candidate = new_memory_id(now + attempt // 64)
            if self.db.execute_sql("SELECT 1 FROM memory WHERE id = ?", (candidate,)).fetchone() is None:
                return candidate
            attempt += 1


    def update(self, memory_id: str, expected: int | Memory, *, actor: str = "cli",
               session_id: str | None = None, **changes: Any) -> Memory:
        """Compare-and-set: write `changes` (fields of `EDITABLE_FIELDS`) only if the memory is
        still at the version the caller read, and return it as it is after the write.

        `expected` is the version read, or the `Memory` read (then a conflict names each field
        that changed meanwhile). Only fields whose value differs are written; the version goes
        up by one. On a conflict nothing is written and `Conflict` is raised, holding the memory
        as it is now. Records an `edited` event naming each field changed, and a status event
        when the status moves.
        """
        unknown = set(changes) - set(EDITABLE_FIELDS)
        if unknown:
            raise InvalidInput(f"cannot edit {', '.join(sorted(unknown))}")
        read = expected if isinstance(expected, Memory) else None
        expected_version = read.version if read is not None else int(expected)
        with self.db.atomic():
            old = self._current(memory_id, expected_version, read)
            update: dict[str, Any] = {}
            diff: dict[str, list[Any]] = {}
            for field_name, value in changes.items():
                value = self._checked_field(field_name, value)
                if value is _UNCHANGED:
                    continue
                current = getattr(old, field_name)
                if value == current:
                    continue
                diff[field_name] = [list(current) if isinstance(current, tuple) else current,
                                    list(value) if isinstance(value, tuple) else value]
                update[field_name] = json.dumps(list(value), ensure_ascii=False) if isinstance(value, tuple) else value
            if not update:
                return old
            now = self.now()
            update["updated_at"] = now
            if "content" in update:
                update["content_hash"] = content_hash(update["content"])
            status_change = diff.pop("status", None)
            if status_change:
                update["status_changed_at"] = now
                if status_change[1] == "deleted":
                    update["meta"] = json.dumps({**old.meta, "status_before_delete": old.status}, ensure_ascii=False)
            assignments = ", ".join(f"{name} = ?" for name in update)
            # The version in the WHERE clause is what makes this a compare-and-set on a store
            # whose writers do not all hold one lock (PostgreSQL); SQLite's write lock is held.
            cursor = self.db.execute_sql(
                f"UPDATE memory SET {assignments}, version = version + 1 WHERE id = ? AND version = ?",
                (*update.values(), memory_id, expected_version))
            if cursor.rowcount != 1:
                self._current(memory_id, expected_version, read)  # raises the conflict
                raise Conflict(memory_id, expected_version, self.get(memory_id))
            confidence_after = update.get("confidence", old.confidence)
            if diff:
                self.record_event(memory_id, "edited", before=old.confidence, after=confidence_after,
                                  actor=actor, session_id=session_id, at=now, detail={"changes": diff})
            if status_change:
                self.record_event(memory_id, _status_event(status_change[0], status_change[1]),
                                  before=confidence_after, after=confidence_after, actor=actor,
                                  session_id=session_id, at=now,
                                  detail={"from": status_change[0], "to": status_change[1]})
            self.index_pending()
        return self.get(memory_id)

    def _current(self, memory_id: str, expected_version: int, read: Memory | None) -> Memory:
        """The memory as stored, if it is still at `expected_version`; else the conflict."""
        try:
            current = self.get(memory_id)
        except NotFound:
            if read is None:
                raise
            raise Conflict(memory_id, expected_version, None) from None
        if current.version != expected_version:
            raise Conflict(memory_id, expected_version, current,
                           changed_fields(read, current) if read is not None else None)
        return current

    def _checked_field(self, field_name: str, value: Any) -> Any:
        """`value` as the store keeps `field_name`, or `_UNCHANGED` for a None that means "leave it"."""
        if value is None and field_name not in ("scope", "hat", "task", "verified_at"):
            return _UNCHANGED
        if field_name == "type":
            return self.check_type(value)
        if field_name == "confidence":
            return self._check_confidence(value)
        if field_name in ("tags", "file_refs"):
            return clean_list(value)
        if field_name == "content":
            value = unify_line_breaks(value.strip())
            if not value:
                raise InvalidInput("a memory needs some content")
            self.check_content(value)
        elif field_name == "title":
            value = unify_line_breaks(value.strip())
            if not value:
                raise InvalidInput("a memory needs a title")
        elif field_name == "status":
            if value not in STATUSES:
                raise InvalidInput(f"unknown status {value!r}; one of {', '.join(STATUSES)}")
        elif field_name == "protected":
            return bool(value)
        elif field_name in ("scope", "hat", "task") and isinstance(value, str):
            return value.strip() or None
        elif field_name == "verified_at":
            return clamp_time(check_time(value, "verified_at"), self.now())
        return value

    def edit(self, memory_id: str, *, actor: str = "cli", session_id: str | None = None,
             **changes: Any) -> Memory:
        """Change a memory's fields as it is now: read and written under one write lock, so only
        the fields given change and nothing written meanwhile is lost. For a change a person made
        to what they saw earlier, use `update` with the version they saw."""
        with self.db.atomic():
            current = self.get(memory_id)
            return self.update(memory_id, current.version, actor=actor, session_id=session_id, **changes)

    def modify(self, memory_id: str, change: Callable[[Memory], dict[str, Any]], *, actor: str = "cli",
               session_id: str | None = None) -> Memory:
        """Read the memory under the write lock, compute the changes from it with `change`, and
        write them: for edits relative to the current value (add a tag, raise confidence)."""
        with self.db.atomic():
            current = self.get(memory_id)
            return self.update(memory_id, current, actor=actor, session_id=session_id, **change(current))

    def set_status(self, memory_ids: Sequence[str], status: str, *, actor: str = "cli",
                   session_id: str | None = None) -> list[Memory]:
        """Move memories to `status` in one transaction, each with its event."""
        if status not in STATUSES:
            raise InvalidInput(f"unknown status {status!r}; one of {', '.join(STATUSES)}")
        with self.db.atomic():
            self.get_many(memory_ids)  # every id must exist before anything changes
            return [self.edit(i, status=status, actor=actor, session_id=session_id) for i in memory_ids]

    def delete(self, memory_ids: Sequence[str], *, actor: str = "cli") -> list[Memory]:
        """Move memories to the trash. They stay restorable until the trash is purged."""
        return self.set_status(memory_ids, "deleted", actor=actor)

    def restore(self, memory_ids: Sequence[str], *, actor: str = "cli") -> list[Memory]:
        """Take memories out of the trash, back to the status they had before."""
        with self.db.atomic():
            memories = self.get_many(memory_ids)
            not_deleted = [m.id for m in memories if m.status != "deleted"]
            if not_deleted:
                raise InvalidInput(f"not in the trash: {', '.join(not_deleted)}")
            return [self.edit(m.id, status=m.meta.get("status_before_delete", "active"), actor=actor)
                    for m in memories]

    def trash(self, project: str | None = None) -> list[Memory]:
        rows = self.db.execute_sql(
            MEMORY_SELECT + " WHERE memory.project_id = ? AND memory.status = 'deleted' "
            "ORDER BY memory.status_changed_at DESC",
            (self.project_id(project),),
        )
        return [memory_from_row(r) for r in rows]

    def purge(self, memory_ids: Sequence[str] | None = None, *, dry_run: bool = False,
              project: str | None = None) -> list[Memory]:
        """Delete memories from the trash for good (all of the project's trash if no ids)."""
        with self.db.atomic():
            if memory_ids is None:
                victims = self.trash(project)
            else:
                victims = self.get_many(memory_ids)
                not_deleted = [m.id for m in victims if m.status != "deleted"]
                if not_deleted:
                    raise InvalidInput(f"only memories in the trash can be purged: {', '.join(not_deleted)}")
            if not dry_run:
                self.delete_rows([m.id for m in victims])
        return victims

    def delete_rows(self, memory_ids: Sequence[str]) -> None:
        """Remove memories and their events for good. Callers check the rules first."""
        for chunk, _ in id_chunks(memory_ids):
            EventRow.delete().where(EventRow.memory.in_(chunk)).execute()
            MemoryRow.delete().where(MemoryRow.id.in_(chunk)).execute()

    def apply_changes(self, changes: Sequence[Change], kind: str, *, actor: str,
                      session_id: str | None = None) -> None:
        """Write lifecycle `changes` (decay, contradiction) with one event each, in one transaction."""
        now = self.now()
        with self.db.atomic():
            for change in changes:
                update: dict[str, Any] = {"confidence": change.confidence_after}
                if kind == "decayed":
                    update["decayed_at"] = now
                if change.status_after != change.status_before:
                    update["status"] = change.status_after
                    update["status_changed_at"] = now
                MemoryRow.update(**update, version=MemoryRow.version + 1).where(
                    MemoryRow.id == change.memory_id).execute()
                self.record_event(change.memory_id, kind, before=change.confidence_before,
                                  after=change.confidence_after, actor=actor, session_id=session_id,
                                  at=now, detail=change.detail)

    def record_usage(self, memory_ids: Sequence[str], *, session_id: str | None = None,
                     actor: str = "prime", detail: dict[str, Any] | None = None) -> list[Memory]:
        """Seed 000's usage boost: a memory put into a prompt is used once more, and gains a
        little confidence (never above `confidence.usage_max`, never lowered by it). `detail`
        goes into each `used` event (an agent's verdict and note)."""
        now = self.now()
        with self.db.atomic():
            memories = self.get_many(memory_ids)
            for memory in memories:
                before = memory.confidence
                after = used_confidence(self.config, before)
                (MemoryRow.update(use_count=MemoryRow.use_count + 1, last_used_at=now,
                                  confidence=after, decayed_at=None, version=MemoryRow.version + 1)
                 .where(MemoryRow.id == memory.id).execute())
                self.record_event(memory.id, "used", before=before, after=after, actor=actor,
                                  session_id=session_id, at=now, detail=detail)
        return self.get_many(memory_ids)


    def listen(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        """On PostgreSQL, call `on_change` (from another thread) when any connection commits a
        change, and return the function that stops it; None on SQLite, where a view polls
        `data_version` instead."""
        from store.backends import postgres

        return postgres.listen(str(self.path), on_change) if postgres.is_url(self.path) else None

    def data_version(self) -> int:
        """Changes when another connection commits to the store: cheap polling for live views."""
        return self.db.execute_sql("PRAGMA data_version").fetchone()[0]


_UNCHANGED = object()


def author_name(config: Config) -> str:
    """Who this process's changes are recorded as made by: config `team.author`, else the OS user."""
    import getpass

    # A name printed in history and stored in a bounded column: controls and invisible
    # characters become `_`, and it is cut to a name's length (as a folder's project name is).
    configured = safe_project_name(str(config.team.author or ""), "")
    if configured:
        return configured
    try:
        return safe_project_name(getpass.getuser(), "unknown")
    except Exception:  # no user name in the environment nor the password database
        return "unknown"


def changed_fields(read: Memory, current: Memory) -> dict[str, tuple[Any, Any]]:
    """Each field a person would recognise that differs between two reads of one memory:
    {name: (as read, as now)}."""
    return {name: (getattr(read, name), getattr(current, name)) for name in SHOWN_FIELDS
            if getattr(read, name) != getattr(current, name)}


def _status_event(before: str, after: str) -> str:
    if after == "deleted":
        return "deleted"
    if before == "deleted":
        return "restored"
    return "status_changed"


