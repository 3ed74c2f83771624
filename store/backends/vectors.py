"""The stored embedding vectors, packed by project: a prime reads a project's vectors in a few
large rows, not one row per memory.

A project's vectors (of one model) live in blocks of up to `BLOCK` float16 rows
(`vector_block`: the memory ids of its slots as a JSON list, and the rows as one blob), and
`memory_vector` says which block and slot hold each memory's vector. At 100,000 memories a prime
reads 196 rows instead of 100,000 (each row read costs SQLite and Python about a microsecond,
more than copying its 512 bytes).

Dropping a memory's vector (its text changed, it was deleted or moved: triggers, whoever writes)
deletes its `memory_vector` row, and a trigger marks its slot dead in the block (`dead`). New
vectors are appended to the project's newest block with room. A block at least half dead is
rewritten with its live slots only (`compact`, after every write of vectors), so what a prime
reads is at most twice what it uses.

Every change of a block gives it a new random `version` (random, so a rolled-back write or a
store made anew never repeats one): a long-lived process (the MCP server, the workbench) keeps
the project's vectors as one float32 matrix between primes and reads again only the blocks whose
version changed (`ProjectVectors`), whatever process changed them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from store.backends.spelling import spelling_of
from store.engine.numpy_import import import_numpy

if TYPE_CHECKING:
    import numpy as np

BLOCK = 512  # vectors per block: a 256 KB blob at 256 dimensions, rewritten when one is added


def _new_version() -> int:
    import random

    return random.getrandbits(62)


def put(db, items: Sequence[tuple[str, int, str, bytes]]) -> None:
    """Store vectors, as (memory id, project id, model, float16 bytes); a memory's earlier
    vector, if any, is dropped."""
    p = db.param
    if not items:
        return
    cursor = db.cursor()
    cursor.executemany(f"DELETE FROM memory_vector WHERE memory_id = {p}", [(item[0],) for item in items])
    groups: dict[tuple[int, str], list[tuple[str, bytes]]] = {}
    for memory_id, project_id, model, blob in items:
        groups.setdefault((project_id, model), []).append((memory_id, blob))
    for (project_id, model), group in groups.items():
        done = 0
        while done < len(group):
            row = db.execute_sql(
                f"SELECT id, slots, ids, vectors FROM vector_block WHERE project_id = {p} AND model = {p} "
                f"AND slots < {p} ORDER BY id DESC LIMIT 1", (project_id, model, BLOCK)).fetchone()
            if row is None:
                spelling = spelling_of(db)
                cursor = db.execute_sql(spelling.insert_returning_id(
                    "vector_block", ("project_id", "model", "slots", "version", "ids", "vectors"),
                    f"{p}, {p}, 0, {p}, '[]', {spelling.empty_blob}"), (project_id, model, _new_version()))
                row = (spelling.inserted_id(cursor), 0, "[]", b"")
            block_id, slots, ids_json, blob = row
            taken = group[done:done + BLOCK - slots]
            ids = json.loads(ids_json) + [memory_id for memory_id, _ in taken]
            db.execute_sql(
                f"UPDATE vector_block SET slots = {p}, ids = {p}, vectors = {p}, version = {p} WHERE id = {p}",
                (len(ids), json.dumps(ids), bytes(blob) + b"".join(v for _, v in taken), _new_version(), block_id))
            db.cursor().executemany(
                f"INSERT INTO memory_vector (memory_id, block_id, slot) VALUES ({p}, {p}, {p})",
                [(memory_id, block_id, slots + n) for n, (memory_id, _) in enumerate(taken)])
            done += len(taken)
    compact(db)


def compact(db) -> int:
    """Rewrite every block at least half dead with its live slots only (a block with none is
    deleted); how many blocks were rewritten."""
    p = db.param
    rows = db.execute_sql(
        "SELECT id, slots, dead, ids, vectors FROM vector_block "
        "WHERE dead_slots > 0 AND dead_slots * 2 >= slots").fetchall()
    for block_id, slots, dead, ids_json, blob in rows:
        ids, width, gone = json.loads(ids_json), len(blob) // max(slots, 1), _slots(dead)
        live = [slot for slot in range(slots) if slot not in gone]
        if not live:
            db.execute_sql(f"DELETE FROM vector_block WHERE id = {p}", (block_id,))
            continue
        kept = [ids[slot] for slot in live]
        db.execute_sql(
            f"UPDATE vector_block SET slots = {p}, dead_slots = 0, dead = '', ids = {p}, vectors = {p}, version = {p} "
            f"WHERE id = {p}",
            (len(kept), json.dumps(kept), b"".join(bytes(blob[s * width:(s + 1) * width]) for s in live),
             _new_version(), block_id))
        db.cursor().executemany(f"UPDATE memory_vector SET slot = {p} WHERE memory_id = {p} AND block_id = {p}",
                                [(n, memory_id, block_id) for n, memory_id in enumerate(kept)])
    return len(rows)


def _slots(dead: str) -> frozenset[int]:
    return frozenset(int(s) for s in dead.split())


def drop_other_models(db, model: str | None) -> None:
    """Every vector not made by `model` (all of them when it is None)."""
    p = db.param
    db.execute_sql(f"DELETE FROM vector_block WHERE model != {p}", (model or "",))


def has_vector_sql(model_parameter: str) -> str:
    """SQL true when `memory` has a vector made by the model given as the parameter."""
    return ("EXISTS (SELECT 1 FROM memory_vector JOIN vector_block ON vector_block.id = memory_vector.block_id "
            f"WHERE memory_vector.memory_id = memory.id AND vector_block.model = {model_parameter})")


@dataclass(frozen=True)
class Vectors:
    """A project's vectors as read at one moment: one float32 matrix (one product per prime), the
    memory of each row, and each block's version and rows in it."""

    heads: tuple[tuple[int, int], ...] = ()  # (block id, version), as read
    ids: tuple[str, ...] = ()
    matrix: "np.ndarray | None" = None
    rows: dict[int, tuple[int, int]] = field(default_factory=dict)  # block id -> its rows

    def cosines(self, vector: "np.ndarray") -> "np.ndarray":
        """Each memory's cosine with a unit vector, in the order of `ids`."""
        np = import_numpy()
        if self.matrix is None or not self.ids:
            return np.zeros(0, dtype=np.float32)
        if self.matrix.shape[1] != vector.shape[-1]:  # blocks of another model's size: none is near
            return np.zeros(len(self.ids), dtype=np.float32)
        return self.matrix @ vector


@dataclass
class ProjectVectors:
    """A project's vectors of one model, kept by a process between primes. `read` gives them as
    they are now, with one small query when nothing changed, reading again only the blocks whose
    version changed. Each read makes a new `Vectors`: another thread's read never changes the
    ones a prime is using."""

    project_id: int
    model: str
    last: Vectors = field(default_factory=Vectors)

    def read(self, db) -> Vectors:
        p = db.param
        heads = tuple(tuple(row) for row in db.execute_sql(
            f"SELECT id, version FROM vector_block WHERE project_id = {p} AND model = {p} ORDER BY id",
            (self.project_id, self.model)).fetchall())
        last = self.last
        if heads == last.heads and (last.matrix is not None or not heads):
            return last
        np = import_numpy()
        known = dict(last.heads)
        fresh = self._read_blocks(db, [block_id for block_id, version in heads if known.get(block_id) != version], np)
        blocks = []
        for block_id, version in heads:
            if block_id in fresh:
                version, block_ids, matrix = fresh[block_id]
            elif known.get(block_id) == version:
                start, stop = last.rows[block_id]
                block_ids, matrix = last.ids[start:stop], last.matrix[start:stop]
            else:
                continue  # deleted since the heads were read (or refused by `_read_blocks`)
            blocks.append((block_id, version, block_ids, matrix))
        # Every row one width, the one most blocks have: a block of another (written by another
        # program, or a member of a team store) is left out rather than failing every prime.
        widths = [matrix.shape[1] for _, _, _, matrix in blocks if len(matrix)]
        width = max(set(widths), key=widths.count) if widths else 0
        pieces, ids, rows, read = [], [], {}, []
        for block_id, version, block_ids, matrix in blocks:
            if len(matrix) and matrix.shape[1] != width:
                continue
            rows[block_id] = (len(ids), len(ids) + len(block_ids))
            pieces.append(matrix)
            ids.extend(block_ids)
            read.append((block_id, version))
        # One float32 matrix, each block converted straight into its rows (no float16 copy).
        matrix = np.empty((len(ids), width), dtype=np.float32)
        for (start, stop), piece in zip(rows.values(), pieces):
            matrix[start:stop] = piece
        self.last = Vectors(tuple(read), tuple(ids), matrix, rows)
        return self.last

    @staticmethod
    def _read_blocks(db, block_ids: list[int], np) -> dict[int, tuple[int, list[str], "np.ndarray"]]:
        """Block id -> (version, memory ids, float16 rows) of its live slots."""
        p = db.param
        blocks = {}
        for start in range(0, len(block_ids), 500):
            chunk = block_ids[start:start + 500]
            rows = db.execute_sql(
                f"SELECT id, version, slots, dead, ids, vectors FROM vector_block WHERE id IN ({', '.join([p] * len(chunk))})",
                chunk).fetchall()
            for block_id, version, slots, dead, ids_json, blob in rows:
                if not slots:
                    continue  # never left empty: compaction deletes a block with no live slot
                ids = _block_ids(ids_json)
                if ids is None or len(ids) != slots or len(blob) % (2 * slots):
                    continue  # not a block memdeck wrote: refused (`memdeck doctor --fix` drops it)
                matrix = np.frombuffer(blob, dtype=np.float16).reshape(slots, -1)
                if dead:
                    gone = _slots(dead)
                    live = [slot for slot in range(slots) if slot not in gone]
                    ids, matrix = [ids[slot] for slot in live], matrix[live]
                blocks[block_id] = (version, ids, matrix)
        return blocks


def _block_ids(text) -> list[str] | None:
    """A block's memory ids (a JSON list of strings), None when it holds anything else."""
    try:
        ids = json.loads(text)
    except (TypeError, ValueError):
        return None
    return ids if isinstance(ids, list) and all(isinstance(i, str) for i in ids) else None


def unsound_blocks(db) -> list[tuple[int, list[str]]]:
    """(block id, the memory ids it names) of each block memdeck could not have written: its ids
    not a list of as many strings as it has slots, its bytes not that many float16 rows, or its
    rows of another width than most blocks of its project and model."""
    rows = db.execute_sql("SELECT id, project_id, model, slots, ids, vectors FROM vector_block").fetchall()
    bad, widths = [], {}
    sound = []
    for block_id, project_id, model, slots, ids_json, blob in rows:
        ids = _block_ids(ids_json)
        if slots <= 0 or ids is None or len(ids) != slots or len(blob) % (2 * slots):
            bad.append((block_id, ids or []))
            continue
        sound.append((block_id, (project_id, model), len(blob) // slots, ids))
        widths.setdefault((project_id, model), []).append(len(blob) // slots)
    for block_id, key, width, ids in sound:
        common = max(set(widths[key]), key=widths[key].count)
        if width != common:
            bad.append((block_id, ids))
    return bad


def convert_rows(db) -> None:
    """Migration 8's data step: the vectors of the one-row-per-memory table (renamed
    `memory_vector_rows` by the migration) packed into blocks, in the order they were written."""
    rows = db.execute_sql("SELECT memory_id, project_id, model, vector FROM memory_vector_rows "
                          "ORDER BY project_id, model, rowid").fetchall()
    for start in range(0, len(rows), 5000):
        put(db, [(r[0], r[1], r[2], bytes(r[3])) for r in rows[start:start + 5000]])
