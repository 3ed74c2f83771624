"""`memdeck copy`: a whole store from one back-end to another (SQLite file or PostgreSQL URL, either
way), row for row: projects, memories, events, sessions, activities, anchors, embedding vectors and
what is still to be indexed.

Every row keeps its id. A target that already holds rows with the ids of the source's (an
earlier copy, or another store whose numbering overlaps) is refused, naming how many, unless
`overwrite`: then those rows are replaced by the source's (copying again updates the rows copied
before instead of adding them twice). The target is written in one transaction: a failed or
refused copy leaves it as it was. The full-text index is the target's own (triggers keep it), and a
memory's vector arrives with it, so nothing is computed again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from store.backends import choice, copy_rows
from store.backends.opening import open_backend
from store.engine.errors import InvalidInput
from store.engine.limits import nul_in

# In the order foreign keys need; the key each row is matched on in the target.
TABLES = (
    ("project", ("id",)),
    ("memory", ("id",)),
    ("event", ("id",)),
    ("session", ("id",)),
    ("activity", ("id",)),
    ("anchor", ("id",)),
    ("vector_block", ("id",)),  # embedding vectors packed per project, as blobs (`store.backends.vectors`)
    ("memory_vector", ("memory_id",)),
    ("layer_judgment", ("id",)),  # your verdicts on the team layer's memories (`store.layers.judgments`)
)
# Derived in the target by its own triggers, never copied.
DERIVED = {"memory": {"fts", "doclen"}}
BATCH = 500


@dataclass
class CopyResult:
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows copied


def copy_store(source, target, *, overwrite: bool = False) -> CopyResult:
    """Copy every row of the store at `source` into the store at `target` (made if new). Rows of
    the target with a source row's id are replaced only with `overwrite`."""
    if choice.same_store(source, target):
        raise InvalidInput("--from and --to name the same store")
    if not choice.exists(source):
        raise InvalidInput(f"{source}: no such store")
    src, _ = open_backend(source)
    try:
        dst, _ = open_backend(target)
        try:
            if not overwrite and (clashes := _clashes(src, dst)):
                shown = ", ".join(f"{count:,} {table}" for table, count in clashes.items())
                raise InvalidInput(f"the target already holds rows with the ids of the source's ({shown} rows); "
                                   "nothing was copied. Copying again, or replacing them on purpose? "
                                   "Add --overwrite")
            return _copy(src, dst)
        finally:
            dst.close()
    finally:
        src.close()


def _clashes(src, dst) -> dict[str, int]:
    """Per table, how many of the target's rows have the key of a source row."""
    found: dict[str, int] = {}
    for table, key in TABLES:
        if not copy_rows.has_rows(dst, table):
            continue
        have = copy_rows.keys(dst, table, key)
        count = 0
        for rows in copy_rows.key_batches(src, table, key, BATCH):
            count += sum(1 for row in rows if tuple(row) in have)
        if count:
            found[table] = count
    return found


def _copy(source, target) -> CopyResult:
    result = CopyResult()
    with target.db.atomic():
        copied: list[str] = []
        for table, key in TABLES:
            wanted = [c for c in copy_rows.columns(target, table) if c not in DERIVED.get(table, ())]
            have = set(copy_rows.columns(source, table))
            # A column the source lacks (an older schema) keeps the target's default.
            columns = [c for c in wanted if c in have]
            if table == "memory":
                columns.append("rowid")  # insertion order: a broad search lists the newest first
            count = 0
            for rows in copy_rows.row_batches(source, table, columns, key, BATCH):
                rows = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in rows]
                if bad := next((row for row in rows if nul_in(row)), None):
                    # memdeck refuses a NUL on every path and PostgreSQL cannot store one; an SQLite store
                    # written before memdeck refused them (or by another program) can hold it.
                    raise InvalidInput(f"{table} {bad[0]} holds a NUL character (\\x00), which memdeck does not "
                                       "store; nothing was copied: edit it out in the source store first")
                # A row already there is updated, then the rest inserted: two statements, not an
                # upsert, because an upsert's conflict policy overrides the `INSERT OR IGNORE` of
                # SQLite's triggers (a memory whose text and project both change is queued for
                # indexing by two triggers, and the second would fail).
                copy_rows.overwrite(target, table, columns, key, rows)
                copy_rows.insert_new(target, table, columns, key, rows)
                if table == "memory":
                    copied.extend(row[0] for row in rows)
                count += len(rows)
            result.rows[table] = count
            if table == "memory":
                # The target's triggers queued every copied memory for indexing; its words (and,
                # next, its vector) came along, so only what the source had pending stays so.
                copy_rows.not_pending(target, copied, BATCH)
                copy_rows.copy_pending(source, target)
        # Rows came with their ids: each id generator continues after the highest.
        target.rows_copied((("project", "id"), ("event", "id"), ("activity", "id"), ("anchor", "id"),
                            ("vector_block", "id"), ("memory", "rowid"), ("layer_judgment", "id")))
    return result
