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
from store.engine.errors import Conflict, InvalidInput, NotFound
from store.engine.models import MemoryRow
from store.engine.ids import new_memory_id
from store.engine.limits import (
    MAX_CONTENT_CHARS, check_confidence, check_content, check_field, check_fields, check_project_name, check_time, clamp_time,
    safe_project_name, sane_time,
)
from store.engine.projects import path_text
from store.engine.records import AddResult, Event, Memory, Project
from store.engine.redaction import unify_line_breaks
from store.engine.vocabulary import SOURCES, STATUSES, Vocabulary
from store.engine.sessions import Sessions
from store.engine.trash import Trash
from store.engine.relations import Relations, decided_summary
# Re-exported: callers across the store take the text helpers from here.
from store.engine.text import clean_list, content_hash, derive_title, normalize_text  # noqa: F401
# Re-exported: the row helpers are the store's vocabulary for every module that reads memories.
from store.engine.rows import (  # noqa: F401
    _UNCHANGED, EDITABLE_FIELDS, SHOWN_FIELDS, Change,
    _status_event, changed_fields, id_chunks, memory_from_row,
)

class Store:
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
        self.new_id = new_memory_id  # how a new memory's id is drawn (a replay draws them in order)
        self._project_ids: dict[str, int] = {}
        self.author = author_name(config)
        # Collaborators, each with its part of the store's work (`store.engine.keeper` names what
        # they use of it).
        self.sessions = Sessions(self)
        self.trash = Trash(self)
        self.relations = Relations(self)

    @classmethod
    def open(cls, path: Path | str | None = None, *, project: str | None = None,
             config: Config | None = None, clock: Clock | None = None,
             project_root: Path | None = None) -> "Store":
        from store.engine.projects import detect_project

        path = wired().location(path) if path is not None else default_db_path()
        config_root = project_root
        if project is None or project_root is None:
            detected_name, detected_root = detect_project()
            config_root = project_root or detected_root  # the settings of where memdeck runs
            # The folder it runs in is the project's root only if it is that project: `--project
            # billing` run in another repository checks billing's anchors against billing's
            # recorded root (`store.anchors.anchoring.project_root`), not this repository.
            if project_root is None and (project is None or project == detected_name):
                project_root = detected_root
            project = project or detected_name
        if config is None:
            config = Config.load(config_root)
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
        # Through the back-end's table, not the models: a layer's store (store.layers.layers) is
        # read while the models are bound to the person's own.
        found = self.backend.memory_table.project_id(name)
        if found is None:
            if not create:
                raise NotFound(f"no project named {name!r}")
            check_project_name(name)
            # The root is shown, never opened: bytes that are not UTF-8 (which SQLite refuses)
            # are kept as U+FFFD rather than failing the command run there.
            root = path_text(self.project_root) if name == self.project and self.project_root else None
            with self.db.atomic():
                self.backend.memory_table.add_project(name, root, self.now())
                found = self.backend.memory_table.project_id(name)
        assert found is not None  # added, or added by another writer first
        self._project_ids[name] = found
        return found

    def projects(self) -> list[Project]:
        return [Project(*row) for row in self.backend.memory_table.projects()]

    # -- reading memories -------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        row = self.backend.memory_table.row(memory_id)
        if row is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return memory_from_row(row)

    def found(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """The memories with these ids that exist, by id."""
        return {row[0]: memory_from_row(row)
                for row in self.backend.memory_table.rows(list(dict.fromkeys(memory_ids)))}

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
        return self.backend.memory_table.recent_titles(self.project_id(), limit)

    def events(self, memory_id: str) -> list[Event]:
        """A memory's history in the order memdeck recorded it (a time from outside, such as an
        imported creation date, never moves an event before one recorded earlier)."""
        rows = self.backend.memory_table.events(memory_id)
        return [
            Event(id=r[0], memory_id=r[1], kind=r[2], at=sane_time(r[3]), actor=r[4], session_id=r[5],
                  confidence_before=r[6], confidence_after=r[7], detail=json.loads(r[8]), author=r[9])
            for r in rows
        ]

    # -- writing memories -------------------------------------------------------------------

    def record_event(self, memory_id: str, kind: str, *, before: float | None, after: float | None,
                     actor: str, session_id: str | None = None, at: float | None = None,
                     detail: dict[str, Any] | None = None) -> None:
        # Plain SQL (the back-end's): every write records events, and Peewee's query building
        # costs more than SQLite's insert here.
        self.backend.memory_table.add_event(memory_id, kind, self.now() if at is None else at, actor, session_id,
                                            before, after, detail or {}, self.author)

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
        check_fields({"content": content, "title": title, "tags": tags, "file_refs": file_refs, "scope": scope,
                      "hat": hat, "task": task, "session_id": session_id})
        now = self.now()
        with self.db.atomic():
            project_id = self.project_id(project)
            if supersedes is not None:
                old = self.get(supersedes)  # raises NotFound before anything is written
            # Same statement: reinforced; an update: supersedes; unsure or contradicting: held in
            # the inbox as a proposal (store.engine.sameness, store.engine.relations).
            decision = None if (not reinforce or supersedes) else self.relations.decide(project_id, type, scope, content)
            if decision is not None and decision[1].kind == "same":
                row, verdict = decision
                reinforced = self.relations.reinforce(row, incoming, tags, file_refs, verdict, content, session_id, actor, now)
                self.index_pending()
                return AddResult(reinforced, created=False)
            if decision is not None:
                supersedes, status, meta = self.relations.route(decision, status, meta)
                if supersedes is not None:
                    old = self.get(supersedes)
                    note = note or f"update: {decision[1].explain()}"
            if memory_id is None:
                memory_id = self._unused_memory_id(now)
            elif self.backend.memory_table.exists(memory_id):
                raise InvalidInput(f"a memory with id {memory_id!r} already exists")
            created = now if created_at is None else clamp_time(check_time(created_at, "created_at"), now)
            updated = created if updated_at is None else max(created, clamp_time(check_time(updated_at, "updated_at"), now))
            columns = dict(
                id=memory_id, project_id=project_id, type=type, title=title, content=content,
                confidence=incoming, tags=json.dumps(list(tags), ensure_ascii=False),
                file_refs=json.dumps(list(file_refs), ensure_ascii=False), scope=scope, hat=hat,
                source=source, status=status, protected=0, session_id=session_id, task=task,
                created_at=created, updated_at=updated, status_changed_at=updated, use_count=0,
                supersedes=supersedes, content_hash=content_hash(content),
                meta=json.dumps(meta or {}, ensure_ascii=False), owner=self.author,
            )
            # Plain SQL for the same reason as in `record_event`: this is the hot path of bulk adds.
            self.backend.memory_table.insert(columns)
            kind = "imported" if source == "imported" else "created"
            self.record_event(memory_id, kind, before=None, after=incoming, actor=actor,
                              session_id=session_id, at=created,
                              detail={"source": source, **({"supersedes": supersedes} if supersedes else {})})
            if supersedes is not None:
                self.relations.mark_superseded(old, memory_id, actor, session_id, note)
            elif decision is not None:
                self.relations.record_proposal(memory_id, decision, actor, session_id, created)
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

    # -- editing: compare-and-set writes on a memory's version -------------------------------


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
                if isinstance(value, (str, tuple)):
                    check_field(field_name, value)
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
            # Written at the version read: a compare-and-set on a store whose writers do not all
            # hold one lock (PostgreSQL); SQLite's write lock is held.
            if not self.backend.memory_table.update_at_version(memory_id, expected_version, update):
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

    def append_evidence(self, memory_id: str, evidence: list[dict[str, Any]], *, keep: int) -> bool:
        """Add transcript lines to a memory's `meta.evidence` (a line already there is not added
        again; the latest `keep` are kept), with the version bumped so that an editor holding an
        older read still sees the memory changed. Evidence is ingest's own field: read and written
        here in one transaction, so another process's edit of the memory in between is kept.
        Whether anything was added."""
        with self.db.atomic():
            memory = self.get(memory_id)
            known = list(memory.meta.get("evidence") or [])
            seen = {(e.get("session"), e.get("line")) for e in known}
            added = [e for e in evidence if (e.get("session"), e.get("line")) not in seen]
            if not added:
                return False
            meta = {**memory.meta, "evidence": (known + added)[-keep:]}
            (MemoryRow.update(meta=json.dumps(meta, ensure_ascii=False), version=MemoryRow.version + 1)
             .where(MemoryRow.id == memory_id).execute())
        return True

    def set_meta(self, memory_id: str, meta: dict[str, Any], expected_version: int) -> None:
        """Compare-and-set of a memory's meta (a proposal resolved or undone): written only if the
        memory is still at `expected_version`, else `Conflict`; the version goes up by one."""
        with self.db.atomic():  # a model write in this store's transaction goes to this store
            written = (MemoryRow.update(meta=json.dumps(meta, ensure_ascii=False), version=MemoryRow.version + 1)
                       .where((MemoryRow.id == memory_id) & (MemoryRow.version == expected_version)).execute())
        if written != 1:
            raise Conflict(memory_id, expected_version, self.found([memory_id]).get(memory_id))

    def index_pending(self) -> int:
        """Identifier words and vectors for the memories written since the last indexing,
        whoever wrote them (`store.index.reindex`, wired in by `store.api`); how many there were.
        Nothing (0) on a store where this connection may not write the index (a team store's reader:
        the next writer's client indexes them)."""
        if not self.backend.may_index():
            return 0
        return wired().index_pending(self)

    def _unused_memory_id(self, now: float) -> str:
        """A fresh id. Ids made in the same second share their prefix, and 4 hex digits collide
        when many memories arrive at once, so a taken one is drawn again (after 64 tries, from
        the next second). The write lock is held, so no other process can take it meanwhile."""
        attempt = 0
        while True:
            candidate = self.new_id(now + attempt // 64)
            if not self.backend.memory_table.exists(candidate):
                return candidate
            attempt += 1

    def apply_changes(self, changes: Sequence[Change], kind: str, *, actor: str,
                      session_id: str | None = None) -> None:
        """Write lifecycle `changes` (decay, contradiction) with one event each, in one transaction."""
        # Plain SQL on this store's connection, not the models: feedback on a team memory is
        # written to the team store (a layer read beside the own store, which the models are
        # bound to; store.layers.feedback). Planned under the write lock by the callers.
        now = self.now()
        with self.db.atomic():
            for change in changes:
                update: dict[str, Any] = {"confidence": change.confidence_after}
                if kind == "decayed":
                    update["decayed_at"] = now
                if change.status_after != change.status_before:
                    update["status"] = change.status_after
                    update["status_changed_at"] = now
                self.backend.memory_table.update(change.memory_id, update)
                self.record_event(change.memory_id, kind, before=change.confidence_before,
                                  after=change.confidence_after, actor=actor, session_id=session_id,
                                  at=now, detail=change.detail)

    def record_usage(self, memory_ids: Sequence[str], *, session_id: str | None = None,
                     actor: str = "prime", detail: dict[str, Any] | None = None,
                     boost: bool = True) -> list[Memory]:
        """Seed 000's usage boost: a memory used once more gains a little confidence (never
        above `confidence.usage_max`, never lowered by it). `detail` goes into each `used` event
        (an agent's verdict and note). With `boost` False (a memory only shown: injected into a
        prompt) the use is counted and its confidence stays: being shown is no evidence that a
        memory is wanted (issue 40); being judged helpful, re-taught or opened is.

        One UPDATE a memory on this store's connection (a team memory's use is written to the
        team store: store.layers.feedback): the use count goes up in the statement
        (`use_count + 1`), and the confidence is read and written inside the transaction, under
        the store's write lock (SQLite's, or PostgreSQL's advisory lock every memdeck writer
        takes), so two members recording use at once both count."""
        now = self.now()
        with self.db.atomic():
            memories = self.get_many(memory_ids)
            for memory in memories:
                before = memory.confidence
                after = used_confidence(self.config, before) if boost else before
                self.backend.memory_table.record_use(memory.id, now, after)
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
