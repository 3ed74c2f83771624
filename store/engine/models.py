"""Peewee models: the tables of a memdeck store. Only `store/` touches these; everything outside
the store gets the dataclasses in `records.py`."""

from __future__ import annotations

import weakref

from peewee import (
    AutoField,
    BooleanField,
    CharField,
    DatabaseProxy,
    FloatField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)



class StoreDatabase(DatabaseProxy):
    """The database the models read and write: the store opened last that is still open
    (`store.engine.database.bind`). Inside a transaction of another open store on this thread,
    that store's: the transaction holds the write lock, and a write of its store sent through
    another connection (even to the same file) would wait for it, and fail as "database is locked"."""

    __slots__ = ("obj", "_callbacks", "_Model", "_open")  # Proxy sets only the names listed here

    def __init__(self) -> None:
        super().__init__()
        self._open: list[weakref.ref] = []  # the open stores' databases, the newest last

    def bind(self, db) -> None:
        self._open = [ref for ref in self._open if ref() not in (None, db)] + [weakref.ref(db)]
        self.initialize(db)

    def unbind(self, db) -> None:
        """`db` was closed: the models go back to the newest store still open, if any."""
        self._open = [ref for ref in self._open if ref() not in (None, db)]
        if self.obj is db and self._open:
            self.initialize(self._open[-1]())

    def __getattr__(self, attr):
        bound = self.obj
        if bound is not None and len(self._open) > 1 and not bound.in_transaction():
            # The store whose transaction is open on this thread does the writing (one attribute
            # of its database handed on, not a sniff of which back-end it is).
            for ref in reversed(self._open):
                writing = ref()
                if writing is not None and writing.in_transaction():
                    return getattr(writing, attr)
        return super().__getattr__(attr)


database = StoreDatabase()


class BaseRow(Model):
    class Meta:
        database = database
        legacy_table_names = False


class ProjectRow(BaseRow):
    id = AutoField()
    name = CharField(unique=True)
    root = TextField(null=True)
    created_at = FloatField()

    class Meta:
        table_name = "project"


class MemoryRow(BaseRow):
    id = CharField(primary_key=True)
    project = ForeignKeyField(ProjectRow, backref="memories", on_delete="CASCADE")
    type = CharField()
    title = TextField()
    content = TextField()
    confidence = FloatField()
    tags = TextField(default="[]")  # JSON array
    file_refs = TextField(default="[]")  # JSON array of globs
    scope = CharField(null=True)
    hat = CharField(null=True)
    source = CharField()
    status = CharField()
    protected = BooleanField(default=False)
    session_id = CharField(null=True)
    task = TextField(null=True)
    created_at = FloatField()
    updated_at = FloatField()
    last_used_at = FloatField(null=True)
    verified_at = FloatField(null=True)
    decayed_at = FloatField(null=True)  # decay has been applied up to this time
    status_changed_at = FloatField()
    use_count = IntegerField(default=0)
    supersedes = CharField(null=True)
    content_hash = CharField()  # of the normalized text, for exact re-adds
    meta = TextField(default="{}")  # JSON: redactions, the original type word, ...
    version = IntegerField(default=1)  # bumped by every write: compare-and-set
    words = TextField(default="")  # identifier words for the full-text index (store.index.reindex)
    owner = CharField(null=True)  # who wrote it: the author, or the database user in a team store (migration 12)

    class Meta:
        table_name = "memory"


class EventRow(BaseRow):
    id = AutoField()
    memory = ForeignKeyField(MemoryRow, backref="events", on_delete="CASCADE")
    kind = CharField()
    at = FloatField()
    actor = CharField()
    session_id = CharField(null=True)
    confidence_before = FloatField(null=True)
    confidence_after = FloatField(null=True)
    detail = TextField(default="{}")
    author = CharField(null=True)  # who: config team.author, else the OS user (migration 9)

    class Meta:
        table_name = "event"


class SessionRow(BaseRow):
    id = CharField(primary_key=True)
    project = ForeignKeyField(ProjectRow, backref="sessions", on_delete="CASCADE")
    agent = CharField(null=True)
    hat = CharField(null=True)
    task = TextField(null=True)
    started_at = FloatField()
    ended_at = FloatField(null=True)
    source_path = TextField(null=True)
    files_touched = TextField(default="[]")
    meta = TextField(default="{}")

    class Meta:
        table_name = "session"


class ActivityRow(BaseRow):
    id = AutoField()
    session = ForeignKeyField(SessionRow, backref="activities", on_delete="CASCADE")
    seq = IntegerField()  # position in the session's log; (session, seq) is unique
    at = FloatField()
    kind = CharField()
    summary = TextField()
    memory_id = CharField(null=True)
    detail = TextField(default="{}")

    class Meta:
        table_name = "activity"


class AnchorRow(BaseRow):
    id = AutoField()
    memory = ForeignKeyField(MemoryRow, backref="anchors", on_delete="CASCADE")
    path = TextField()  # relative to the project root, with /
    start_line = IntegerField(null=True)  # 1-based, inclusive; None: the whole file
    end_line = IntegerField(null=True)
    line_hash = CharField()
    snapshot = TextField()
    commit_id = CharField(null=True)  # HEAD when anchored (in a git repository)
    blob_id = CharField(null=True)  # the file's git blob id when anchored
    status = CharField(default="fresh")  # fresh | moved | changed | missing: the last check's
    checked_at = FloatField(null=True)
    file_size = IntegerField(null=True)  # the file's size and mtime at the last check
    file_mtime_ns = IntegerField(null=True)
    created_at = FloatField()

    class Meta:
        table_name = "anchor"


ALL_MODELS = (ProjectRow, MemoryRow, EventRow, SessionRow, ActivityRow, AnchorRow)
