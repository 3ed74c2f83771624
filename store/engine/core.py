"""The store: memories, their history of events, projects and sessions, behind one object.

`Store` owns a database connection, the effective config and vocabulary, and a clock. Every write
is one short transaction and records an event, so a memory's history explains every number on
screen. Reads hand out the frozen dataclasses of `records.py`.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from store.engine.clock import Clock
from store.engine.config import Config
from store.engine.confidence import used_confidence
from store.engine.database import bind, default_db_path, unbind
from store.engine.ports import Backend, wired
from store.engine.errors import InvalidInput, NotFound
from store.engine.ids import new_memory_id
from store.engine.limits import (
    MAX_CONTENT_CHARS, check_confidence, check_content, check_fields, check_project_name, check_time, clamp_time,
    safe_project_name, sane_time,
)
from store.engine.projects import path_text
from store.engine.records import AddResult, Event, Memory, Project
from store.engine.redaction import unify_line_breaks
from store.engine.vocabulary import SOURCES, STATUSES, Vocabulary
from store.engine.editing import Editing
from store.engine.sessions import SessionLog
from store.engine.trash import Trash
from store.engine.similarity import Similarity, decided_summary
# Re-exported: callers across the store take the text helpers from here.
from store.engine.text import clean_list, content_hash, derive_title, normalize_text  # noqa: F401
# Re-exported: the row helpers are the store's vocabulary for every module that reads memories.
from store.engine.rows import (  # noqa: F401
    _UNCHANGED, EDITABLE_FIELDS, MEMORY_COLUMNS, MEMORY_COLUMNS_SQL, MEMORY_SELECT, SHOWN_FIELDS, Change,
    _status_event, changed_fields, id_chunks, memory_from_row,
)

class Store(Editing, Trash, SessionLog, Similarity):
    """A memdeck store. Open with `Store.open(path)`. Several may be open in one process: the
    models write through the store whose transaction is open (every model write is in one), and
    read outside a transaction from the newest store still open (`store.engine.models.StoreDatabase`)."""

    def __init__(self, backend: Backend, path: Path | str, config: Config, clock: Clock,
                 project: str, project_root: Path | None = None, backup: Path | None = None) -> None:
        self.backend = backend  # the SQL that differs between SQLite and PostgreSQL, by name
        self.db = backend.db
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

        path = wired().location(path) if path is not None else default_db_path()
        if project is None or project_root is None:
            detected_name, detected_root = detect_project()
            project = project or detected_name
            project_root = project_root or detected_root
        if config is None:
            config = Config.load(project_root)
        backend, backup = wired().open_backend(path)
        bind(backend.db)
        store = cls(backend, path, config, clock or Clock(), project, project_root, backup)
        # A team store on PostgreSQL names the database user (issue 29): its triggers record it anyway.
        store.author = backend.database_user() or store.author
        if backup is not None:
            store.index_pending()  # a migrated store: the memories it held have no words yet
        return store

    def close(self) -> None:
        self.db.close()
        unbind(self.db)

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
        # Plain SQL, not the models: a layer's store (store.layers.layers) is read while the
        # models are bound to the person's own.
        p = self.backend.param
        found = self.db.execute_sql(f"SELECT id FROM project WHERE name = {p}", (name,)).fetchone()
        if found is None:
            if not create:
                raise NotFound(f"no project named {name!r}")
            check_project_name(name)
            # The root is shown, never opened: bytes that are not UTF-8 (which SQLite refuses)
            # are kept as U+FFFD rather than failing the command run there.
            root = path_text(self.project_root) if name == self.project and self.project_root else None
            with self.db.atomic():
                self.db.execute_sql(self.backend.insert_ignore("project", ("name", "root", "created_at")),
                                    (name, root, self.now()))
                found = self.db.execute_sql(f"SELECT id FROM project WHERE name = {p}", (name,)).fetchone()
        self._project_ids[name] = found[0]
        return found[0]

    def projects(self) -> list[Project]:
        cursor = self.db.execute_sql(
            "SELECT project.id, project.name, project.root, project.created_at, "
            "(SELECT COUNT(*) FROM memory WHERE memory.project_id = project.id "
            " AND memory.status != 'deleted') FROM project ORDER BY project.name"
        )
        return [Project(*row) for row in cursor.fetchall()]

    # -- reading memories -------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        p = self.backend.param
        row = self.db.execute_sql(MEMORY_SELECT + f" WHERE memory.id = {p}", (memory_id,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return memory_from_row(row)

    def found(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """The memories with these ids that exist, by id."""
        found: dict[str, Memory] = {}
        for chunk, marks in id_chunks(list(dict.fromkeys(memory_ids)), self.backend.param):
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
        p = self.backend.param
        return self.db.execute_sql(
            f"SELECT memory.id, memory.title FROM memory WHERE memory.project_id = {p} "
            f"AND memory.status != 'deleted' ORDER BY memory.updated_at DESC LIMIT {p}",
            (self.project_id(), limit)).fetchall()

    def events(self, memory_id: str) -> list[Event]:
        """A memory's history in the order memdeck recorded it (a time from outside, such as an
        imported creation date, never moves an event before one recorded earlier)."""
        p = self.backend.param
        rows = self.db.execute_sql(
            "SELECT id, memory_id, kind, at, actor, session_id, confidence_before, confidence_after, detail, "
            f"author FROM event WHERE memory_id = {p} ORDER BY id", (memory_id,)).fetchall()
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
        p = self.backend.param
        self.db.execute_sql(
            "INSERT INTO event (memory_id, kind, at, actor, session_id, confidence_before, "
            f"confidence_after, detail, author) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p})",
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
        p = self.backend.param
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
        check_fields({"content": content, "title": title, "tags": tags, "file_refs": file_refs, "scope": scope,
                      "hat": hat, "task": task, "session_id": session_id})
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
            elif self.db.execute_sql(f"SELECT 1 FROM memory WHERE id = {p}", (memory_id,)).fetchone():
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
            self.db.execute_sql(f"INSERT INTO memory ({', '.join(row)}) VALUES ({', '.join([p] * len(row))})",
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
        whoever wrote them (`store.index.reindex`, wired in by `store.api`); how many there were."""
        return wired().index_pending(self)

    def _unused_memory_id(self, now: float) -> str:
        """A fresh id. Ids made in the same second share their prefix, and 4 hex digits collide
        when many memories arrive at once, so a taken one is drawn again (after 64 tries, from
        the next second). The write lock is held, so no other process can take it meanwhile."""
        p = self.backend.param
        attempt = 0
        while True:
            candidate = new_memory_id(now + attempt // 64)
            if self.db.execute_sql(f"SELECT 1 FROM memory WHERE id = {p}", (candidate,)).fetchone() is None:
                return candidate
            attempt += 1

    def apply_changes(self, changes: Sequence[Change], kind: str, *, actor: str,
                      session_id: str | None = None) -> None:
        """Write lifecycle `changes` (decay, contradiction) with one event each, in one transaction."""
        # Plain SQL on this store's connection, not the models: feedback on a team memory is
        # written to the team store (a layer read beside the own store, which the models are
        # bound to; store.layers.feedback). Planned under the write lock by the callers.
        p = self.backend.param
        now = self.now()
        with self.db.atomic():
            for change in changes:
                update: dict[str, Any] = {"confidence": change.confidence_after}
                if kind == "decayed":
                    update["decayed_at"] = now
                if change.status_after != change.status_before:
                    update["status"] = change.status_after
                    update["status_changed_at"] = now
                sets = ", ".join(f"{column} = {p}" for column in update)
                self.db.execute_sql(f"UPDATE memory SET {sets}, version = version + 1 WHERE id = {p}",
                                    (*update.values(), change.memory_id))
                self.record_event(change.memory_id, kind, before=change.confidence_before,
                                  after=change.confidence_after, actor=actor, session_id=session_id,
                                  at=now, detail=change.detail)

    def record_usage(self, memory_ids: Sequence[str], *, session_id: str | None = None,
                     actor: str = "prime", detail: dict[str, Any] | None = None) -> list[Memory]:
        """Seed 000's usage boost: a memory put into a prompt is used once more, and gains a
        little confidence (never above `confidence.usage_max`, never lowered by it). `detail`
        goes into each `used` event (an agent's verdict and note).

        One UPDATE a memory on this store's connection (a team memory's use is written to the
        team store: store.layers.feedback): the use count goes up in the statement
        (`use_count + 1`), and the confidence is read and written inside the transaction, under
        the store's write lock (SQLite's, or PostgreSQL's advisory lock every memdeck writer
        takes), so two members recording use at once both count."""
        p = self.backend.param
        now = self.now()
        with self.db.atomic():
            memories = self.get_many(memory_ids)
            for memory in memories:
                before = memory.confidence
                after = used_confidence(self.config, before)
                self.db.execute_sql(
                    f"UPDATE memory SET use_count = use_count + 1, last_used_at = {p}, confidence = {p}, "
                    f"decayed_at = NULL, version = version + 1 WHERE id = {p}", (now, after, memory.id))
                self.record_event(memory.id, "used", before=before, after=after, actor=actor,
                                  session_id=session_id, at=now, detail=detail)
        return self.get_many(memory_ids)

    def listen(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        """On PostgreSQL, call `on_change` (from another thread) when any connection commits a
        change, and return the function that stops it; None on SQLite, where a view polls
        `data_version` instead."""
        return self.backend.listen(on_change)

    def data_version(self) -> int:
        """Changes when another connection commits to the store: cheap polling for live views."""
        return self.backend.data_version()




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
