"""Vectors packed in blocks per project (`store.backends.vectors`): every memory's vector stays its own
through appends, drops, compaction, moves and migration 8, and a process's cached vectors follow
what other processes write."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from store import Config, Store
from store.index import embedding
from store.backends import postgres
from store.backends import vectors
from store.backends.opening import connect
from store.retrieval.injection import InjectionContext, prime
from store.backends.migrations import SCHEMA_VERSION
from store.retrieval.semantic import _vectors, similar

pytestmark = [pytest.mark.skipif(not embedding.available(), reason="needs memdeck[semantic]"),
              pytest.mark.both_backends]

TEXTS = [
    "Webhook deliveries retry three times with exponential backoff.",
    "Invoices are numbered per tenant and per year.",
    "The release checklist lives in docs/release.md.",
    "Flaky tests in the payment suite come from a shared clock fixture.",
    "Never log a customer's card number, even masked.",
    "The search index is rebuilt nightly by a cron job.",
]


def stored(store: Store, project: str | None = None) -> dict[str, np.ndarray]:
    """Memory id -> its stored vector, as a prime reads them."""
    project_vectors = vectors.ProjectVectors(store.project_id(project), embedding.MODEL_ID).read(store.db)
    rows = project_vectors.matrix
    assert len(project_vectors.ids) == len(set(project_vectors.ids)) == len(rows)
    return dict(zip(project_vectors.ids, rows))


def expected(store: Store, memory_id: str) -> np.ndarray:
    memory = store.get(memory_id)
    import json

    text = embedding.memory_text(memory.title, memory.content, json.dumps(memory.tags))
    return embedding.from_blobs([embedding.to_blob(embedding.embedder().embed([text])[0])])[0]


def assert_each_memory_has_its_own_vector(store: Store, project: str | None = None) -> None:
    found = stored(store, project)
    active = [r[0] for r in store.db.execute_sql(f"SELECT id FROM memory WHERE project_id = {store.backend.param}",
                                                  (store.project_id(project),))]
    assert sorted(found) == sorted(active)
    for memory_id in active:
        assert np.array_equal(found[memory_id], expected(store, memory_id)), memory_id


def insert(store: Store, texts: list[str]) -> None:
    """Memories written by SQL (as another program would), then indexed in one go."""
    with store.transaction():
        for n, text in enumerate(texts):
            store.db.execute_sql(
                "INSERT INTO memory (id, project_id, type, title, content, confidence, source, status, "
                "created_at, updated_at, status_changed_at, content_hash) "
                f"VALUES ({store.backend.marks(2)}, 'context', {store.backend.marks(2)}, 0.7, 'explicit', 'active', "
                "1.0, 1.0, 1.0, 'x')", (f"mem-1700000000-{n:04x}", store.project_id(), text, text))
    store.index_pending()


def test_blocks_fill_up_and_every_memory_keeps_its_own_vector(store, monkeypatch):
    monkeypatch.setattr(vectors, "BLOCK", 4)
    insert(store, [f"{text} ({n})" for n in range(3) for text in TEXTS])
    blocks = store.db.execute_sql("SELECT slots FROM vector_block ORDER BY id").fetchall()
    assert [b[0] for b in blocks] == [4, 4, 4, 4, 2]  # 18 vectors, 4 to a block
    assert_each_memory_has_its_own_vector(store)
    store.add("A memory added later goes in the open block.", type="context")
    assert store.db.execute_sql("SELECT slots FROM vector_block ORDER BY id DESC").fetchone() == (3,)
    assert_each_memory_has_its_own_vector(store)


def test_edits_and_deletes_mark_slots_dead_and_half_dead_blocks_are_compacted(store, monkeypatch):
    monkeypatch.setattr(vectors, "BLOCK", 4)
    ids = [store.add(text, type="context").memory.id for text in TEXTS]
    store.edit(ids[0], content="Webhook deliveries retry five times, then alert the on-call.")
    # The edited memory's old slot is dead; its new vector is in the open block.
    assert store.db.execute_sql("SELECT dead FROM vector_block ORDER BY id").fetchall()[0] == ("0 ",)
    assert_each_memory_has_its_own_vector(store)
    store.trash.delete_rows([ids[1]])  # a second dead slot of four: the block is rewritten
    dead = store.db.execute_sql("SELECT slots, dead_slots FROM vector_block ORDER BY id").fetchall()
    store.add("One more memory, so the store writes and compacts.", type="context")
    after = store.db.execute_sql("SELECT slots, dead_slots FROM vector_block ORDER BY id").fetchall()
    assert dead[0] == (4, 2) and after[0] == (2, 0)
    assert_each_memory_has_its_own_vector(store)
    # A block whose every slot is dead is deleted.
    store.trash.delete_rows([ids[2], ids[3]])
    store.add("And another.", type="context")
    assert all(slots > 0 for slots, in store.db.execute_sql("SELECT slots FROM vector_block"))
    assert_each_memory_has_its_own_vector(store)


def test_a_memory_moved_to_another_project_is_embedded_there(store):
    moving = store.add(TEXTS[0], type="context").memory.id
    store.add(TEXTS[1], type="context")
    other = store.project_id("other")
    with store.transaction():
        store.db.execute_sql(store.backend.fmt("UPDATE memory SET project_id = {p} WHERE id = {p}"), (other, moving))
    store.index_pending()
    assert_each_memory_has_its_own_vector(store)
    assert_each_memory_has_its_own_vector(store, "other")
    assert list(stored(store, "other")) == [moving]


def test_a_process_keeps_its_vectors_until_another_process_changes_a_block(store, db_path, run_cli_process,
                                                                          monkeypatch):
    monkeypatch.setattr(vectors, "BLOCK", 4)
    insert(store, TEXTS)  # two blocks: 4 and 2 vectors
    project_id = store.project_id()
    read_again: list[list[int]] = []
    real_read = vectors.ProjectVectors._read_blocks

    def counting(db, block_ids, np):
        read_again.append(list(block_ids))
        return real_read(db, block_ids, np)

    monkeypatch.setattr(vectors.ProjectVectors, "_read_blocks", staticmethod(counting))
    matrix = _vectors(store, project_id, embedding.MODEL_ID).matrix
    assert read_again == [[1, 2]]
    # Nothing changed: nothing is read again, and the matrix is the one read.
    assert _vectors(store, project_id, embedding.MODEL_ID).matrix is matrix
    # Usage written by a prime does not touch the vectors.
    prime(store, InjectionContext(task="webhook retries"), record=True)
    assert _vectors(store, project_id, embedding.MODEL_ID).matrix is matrix and len(read_again) == 1
    # Another process adds a memory: the next prime of this process reads the open block again
    # (only it) and finds the new memory by meaning.
    run_cli_process("--project", "demo", "add", "--type", "pitfall",
            "Duplicate charges happen when the payment provider calls us back twice.", check=True)
    found = similar(store, project_id, "customers billed two times for one order", 3)
    added = store.db.execute_sql("SELECT id FROM memory WHERE content LIKE 'Duplicate charges%'").fetchone()[0]
    assert added in found.cosines and found.vectors == len(TEXTS) + 1
    assert read_again[1:] == [[2]]
    # Another process edits a memory's text: its old vector is never compared again.
    edit = "UPDATE memory SET content = 'The search index is rebuilt every hour.' WHERE content LIKE 'The search index%'"
    if postgres.is_url(db_path):
        import psycopg

        with psycopg.connect(db_path) as other:
            other.execute(edit)
    else:
        other = sqlite3.connect(db_path)
        with other:
            other.execute(edit)
        other.close()
    changed = store.db.execute_sql("SELECT id FROM memory WHERE content LIKE 'The search index%'").fetchone()[0]
    assert changed not in _vectors(store, project_id, embedding.MODEL_ID).ids
    store.index_pending()
    assert changed in _vectors(store, project_id, embedding.MODEL_ID).ids
    assert_each_memory_has_its_own_vector(store)


def test_reindex_after_a_model_change_drops_the_old_models_blocks(store, run_cli):
    for text in TEXTS:
        store.add(text, type="context")
    with store.transaction():
        store.db.execute_sql("UPDATE vector_block SET model = 'an-older-model'")
    assert similar(store, store.project_id(), "webhook retries", 3).vectors == 0
    assert f"{len(TEXTS)} vectors from" in run_cli("reindex", check=True).stderr
    models = {r[0] for r in store.db.execute_sql("SELECT model FROM vector_block")}
    assert models == {embedding.MODEL_ID}
    assert_each_memory_has_its_own_vector(store)


def test_migration_8_packs_an_existing_stores_vectors_into_blocks(db_path, backend, request, clock):
    """A store as migration 7 left it, one vector row per memory (two projects, one vector of an
    older model), opened by this memdeck: every vector is in a block, unchanged."""
    if backend == "postgres":  # a database not yet migrated (the test's own is at the newest)
        db_path = request.getfixturevalue("postgres_server").empty_database()
    db, _ = connect(db_path, target_version=7)
    p = db.param
    embedder = embedding.embedder()
    rows = []
    for project_id, name in ((1, "demo"), (2, "other")):
        db.execute_sql(f"INSERT INTO project (id, name, created_at) VALUES ({p}, {p}, 1.0)", (project_id, name))
    for n, text in enumerate(TEXTS):
        memory_id, project_id = f"mem-1700000000-{n:04x}", 1 + n % 2
        db.execute_sql(
            "INSERT INTO memory (id, project_id, type, title, content, confidence, source, status, "
            "created_at, updated_at, status_changed_at, content_hash) "
            f"VALUES ({p}, {p}, 'context', {p}, {p}, 0.7, 'explicit', 'active', 1.0, 1.0, 1.0, 'x')",
            (memory_id, project_id, text, text))
        model = "an-older-model" if n == 5 else embedding.MODEL_ID
        blob = embedding.to_blob(embedder.embed([embedding.memory_text(text, text, "[]")])[0])
        rows.append((memory_id, project_id, model, blob))
    db.execute_sql("DELETE FROM memory_pending")
    db.cursor().executemany(f"INSERT INTO memory_vector (memory_id, project_id, model, vector) VALUES ({p}, {p}, {p}, {p})",
                            rows)
    db.close()
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        if backend == "postgres":
            assert store.db.execute_sql("SELECT max(version) FROM schema_migration").fetchone()[0] == SCHEMA_VERSION
            tables = {r[0] for r in store.db.execute_sql("SELECT tablename FROM pg_tables")}
        else:
            assert store.backup is not None
            assert store.db.execute_sql("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            tables = {r[0] for r in store.db.execute_sql("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "memory_vector_rows" not in tables
        for project in ("demo", "other"):
            found = stored(store, project)
            for memory_id, project_id, model, blob in rows:
                if model == embedding.MODEL_ID and project_id == store.project_id(project):
                    assert found.pop(memory_id).tobytes() == embedding.from_blobs([blob])[0].tobytes()
            assert found == {}
        older = store.db.execute_sql(f"SELECT model, slots FROM vector_block WHERE model != {store.backend.param}",
                                     (embedding.MODEL_ID,)).fetchall()
        assert older == [("an-older-model", 1)]
        # The migrated store ranks by meaning, and keeps its vectors in step from then on.
        found = similar(store, 1, "webhook delivery retries", 1)
        assert list(found.cosines) == ["mem-1700000000-0000"]
        store.edit("mem-1700000000-0000", content="Webhook deliveries retry five times.")
        assert_each_memory_has_its_own_vector(store)
