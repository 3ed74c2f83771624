"""`memdeck copy`: a whole store from SQLite to PostgreSQL and back, every row as it was, and
copying again changes nothing."""

from __future__ import annotations

import json
import os

import pytest

from tests.cli_support import run_in_process
from store import Config, Store
from store.index import embedding
from store.anchors.anchoring import anchor_memory
from store.interop.copying import TABLES, copy_store
from store.backends.opening import connect
from store.engine.errors import InvalidInput
from store.browse.search import full_text


def _fill(path, root):
    (root / "billing.py").write_text("def invoice(order):\n    return order.total\n")
    with Store.open(path, project="demo", config=Config.defaults(), project_root=root) as store:
        first = store.add("Invoices are rounded to cents with banker's rounding", type="convention",
                          tags="billing,money").memory
        second = store.add("The websocket reconnect needs exponential backoff", type="pattern").memory
        third = store.add("Exports run nightly at two", type="context", project="ops").memory
        store.edit(first.id, title="Invoices round half to even")
        store.trash.delete([third.id])
        store.sessions.ensure("s1", agent="claude", task="billing fixes")
        store.sessions.append_activity("s1", "note", "looked at invoices", memory_id=first.id)
        store.sessions.append_activity("s1", "note", "and at exports")
        anchor_memory(store, second.id, ["billing.py:1-2"])
        store.record_usage([first.id, second.id], session_id="s1")


def _rows(location) -> dict[str, list]:
    """Every copied table's rows, as the store holds them (its derived columns aside)."""
    db, _ = connect(location)
    try:
        dump = {}
        for table, key in TABLES:
            columns = [d[0] for d in db.execute_sql(f"SELECT * FROM {table} LIMIT 0").description
                       if d[0] not in ("fts", "doclen", "rowid")]
            rows = db.execute_sql(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(key)}").fetchall()
            dump[table] = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in rows]
        return dump
    finally:
        db.close()


def test_a_store_goes_to_postgres_and_back_unchanged(postgres_server, tmp_path):
    _fill(tmp_path / "a.db", tmp_path)
    url = postgres_server.empty_database()
    env = {**os.environ}
    there = run_in_process(["copy", "--from", str(tmp_path / "a.db"), "--to", url, "--json"], env=env, cwd=tmp_path)
    assert there.returncode == 0, there.stderr
    counts = json.loads(there.stdout)
    assert counts["memory"] == 3 and counts["session"] == 1 and counts["activity"] == 2 and counts["anchor"] == 1
    original = _rows(tmp_path / "a.db")
    assert all(original[table] for table in ("project", "memory", "event", "session", "activity", "anchor"))
    if embedding.model_id():  # with the semantic extra, the vectors travel too: their blocks, bytes for bytes
        assert len(original["memory_vector"]) == 3
        assert sum(len(row[-1]) for row in original["vector_block"]) >= 3 * embedding.DIMENSIONS * 2
    assert _rows(url) == original
    copy_store(url, tmp_path / "b.db")
    assert _rows(tmp_path / "b.db") == original
    for where in (url, tmp_path / "b.db"):  # each back-end's own full-text index holds the copies
        with Store.open(where, project="demo", config=Config.defaults()) as store:
            assert [h.memory.title for h in full_text(store, "websocket")] == [
                "The websocket reconnect needs exponential backoff"]
            assert store.index_pending() == 0  # words and vectors came along


def test_copying_again_changes_nothing(postgres_server, tmp_path):
    _fill(tmp_path / "a.db", tmp_path)
    url = postgres_server.empty_database()
    copy_store(tmp_path / "a.db", url)
    once = _rows(url)
    result = copy_store(tmp_path / "a.db", url, overwrite=True)
    assert result.rows["memory"] == 3
    assert _rows(url) == once
    copy_store(url, tmp_path / "b.db")
    copy_store(url, tmp_path / "b.db", overwrite=True)
    assert _rows(tmp_path / "b.db") == once


def test_a_copy_over_rows_with_the_same_ids_is_refused_without_overwrite(postgres_server, tmp_path):
    _fill(tmp_path / "a.db", tmp_path)
    url = postgres_server.empty_database()
    copy_store(tmp_path / "a.db", url)
    with Store.open(url, project="demo", config=Config.defaults()) as store:
        store.add("Written on the server after the copy", type="fix")
    before = _rows(url)
    with pytest.raises(InvalidInput, match=r"already holds rows with the ids of the source's \(.*3 memory.*\).*--overwrite"):
        copy_store(tmp_path / "a.db", url)
    assert _rows(url) == before


def test_copying_another_store_whose_numbering_overlaps_is_refused_on_the_command_line(tmp_path):
    """Two stores made apart both number their events from 1: a copy would overwrite the target's."""
    (tmp_path / "one").mkdir()
    _fill(tmp_path / "a.db", tmp_path / "one")
    with Store.open(tmp_path / "b.db", project="other", config=Config.defaults()) as other:
        kept = other.add("The target's own memory", type="fix").memory
    done = run_in_process(["copy", "--from", str(tmp_path / "a.db"), "--to", str(tmp_path / "b.db")], cwd=tmp_path)
    assert done.returncode == 2 and "nothing was copied" in done.stderr and "event" in done.stderr
    with Store.open(tmp_path / "b.db", project="other", config=Config.defaults()) as other:
        assert [e.kind for e in other.events(kept.id)] == ["created"]
        assert other.db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0] == 1


def test_a_copy_needs_two_different_stores_and_an_existing_source(tmp_path):
    with pytest.raises(InvalidInput, match="same store"):
        copy_store(tmp_path / "a.db", tmp_path / "a.db")
    with pytest.raises(InvalidInput, match="no such store"):
        copy_store(tmp_path / "missing.db", tmp_path / "b.db")
    assert not (tmp_path / "b.db").exists()


def test_the_summary_counts_rows_in_words(tmp_path):
    import re

    from tui.cli.copy import counted

    _fill(tmp_path / "a.db", tmp_path)
    done = run_in_process(["copy", "--from", str(tmp_path / "a.db"),
                           "--to", str(tmp_path / "b.db")], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = done.stderr.strip()
    assert re.fullmatch(r"copied 2 projects, 3 memories, 8 events, 1 session, 2 activities, 1 anchor, "
                        r"2 vector blocks, 3 memory vectors, 0 verdicts on team memories from \S+a\.db to \S+b\.db", summary), summary
    assert "_" not in summary.split(" from ")[0]  # no table names
    assert [counted(n, "memory") for n in (0, 1, 2, 12345)] == ["0 memories", "1 memory", "2 memories",
                                                                 "12,345 memories"]
    assert counted(1, "vector_block") == "1 vector block" and counted(3, "activity") == "3 activities"
