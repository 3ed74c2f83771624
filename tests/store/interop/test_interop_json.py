"""memdeck JSON: the lossless export, seed 000's shape, and how an import treats ids."""

from __future__ import annotations

import json

import pytest

from postgres_server import raw_connect
from store.engine.errors import InvalidInput
from store.interop import memdeck_json
from store.interop.importer import import_document
from store.browse.search import MemoryFilter, list_memories
from store.engine.vocabulary import STATUSES

pytestmark = pytest.mark.both_backends

EVERY_STATUS = MemoryFilter(statuses=STATUSES)
SEED_000 = {
    "version": 1,
    "project": "myproject",
    "exported_at": "2024-01-15T10:30:00Z",
    "memories": [{
        "id": "mem-abc123", "type": "pattern", "title": "Tests use table-driven pattern",
        "content": "Tests use table-driven patterns with t.Run subtests...", "confidence": 0.85,
        "tags": ["testing", "go"], "file_refs": ["internal/session/*_test.go"],
        "created_by_hat": "creator", "source": "automatic", "use_count": 5,
    }],
}


def load(store, data, source="export.json"):
    return import_document(store, memdeck_json.read_document(data, source))


def snapshot(db_path):
    """Every row of every table a failed import must leave alone."""
    with raw_connect(db_path) as db:
        return {table: db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                for table in ("project", "memory", "event", "session", "activity")}


def busy_store(store, clock):
    """A store with history: edits, usage, a superseded memory, the trash, a session log."""
    clock.advance(seconds=0.25)  # times with a fraction of a second must survive too
    a = store.add("Tests use table-driven patterns with t.Run", type="pattern", tags="go,testing",
                  hat="creator", scope="api", file_refs="internal/*_test.go", session_id="s-1").memory
    b = store.add("Chose SQLite for simplicity\n\nPostgres later if needed", type="decision").memory
    c = store.add("Run make lint before commit", type="convention").memory
    clock.advance(days=2, seconds=0.5)
    store.edit(a.id, title="Table-driven tests", confidence=0.9)
    store.record_usage([a.id, b.id], session_id="s-1")
    store.relations.supersede(b.id, "Chose SQLite; Postgres migration path exists")
    store.trash.delete([c.id])
    store.sessions.ensure("s-1", agent="claude", hat="creator", task="tests", meta={"model": "x"})
    store.sessions.append_activity("s-1", "prompt", "write the tests")
    store.sessions.append_activity("s-1", "memory_created", "stored a pattern", memory_id=a.id, detail={"why": "marker"})
    store.sessions.update("s-1", ended_at=store.now() + 60, files_touched=["a.go"])
    return a, b, c


def test_export_then_import_into_an_empty_store_exports_the_same(store, clock, run_cli, tmp_path):
    busy_store(store, clock)
    first = memdeck_json.export_document(store, EVERY_STATUS)
    path = tmp_path / "export.json"
    path.write_text(memdeck_json.dumps(first), encoding="utf-8")
    other = {"MEMDECK_DB": str(tmp_path / "other.db")}
    run_cli("import", str(path), env=other, check=True)
    args = ["export"] + [a for s in STATUSES for a in ("--status", s)]
    second = json.loads(run_cli(*args, env=other, check=True).stdout)
    first.pop("exported_at"), second.pop("exported_at")
    assert second == json.loads(memdeck_json.dumps(first))
    assert len(first["memories"]) == 4 and first["sessions"][0]["activities"][1]["detail"] == {"why": "marker"}
    assert first["memories"][0]["created_at"].endswith(".250000Z")


def test_every_field_and_event_is_reproduced(store, clock, run_cli, tmp_path):
    a, _, _ = busy_store(store, clock)
    original, events = store.get(a.id), store.events(a.id)
    path = tmp_path / "export.json"
    path.write_text(memdeck_json.dumps(memdeck_json.export_document(store, EVERY_STATUS)), encoding="utf-8")
    store.close()
    fresh = tmp_path / "fresh.db"
    run_cli("import", str(path), env={"MEMDECK_DB": str(fresh)}, check=True)
    from store import Config, Store

    with Store.open(fresh, project="demo", clock=clock, config=Config.defaults()) as restored:
        assert restored.get(a.id) == original
        assert restored.get(a.id).meta == original.meta
        assert [(e.kind, e.at, e.actor, e.session_id, e.confidence_before, e.confidence_after, e.detail)
                for e in restored.events(a.id)] == [
            (e.kind, e.at, e.actor, e.session_id, e.confidence_before, e.confidence_after, e.detail)
            for e in events]
        assert restored.sessions.get("s-1").meta == {"model": "x"}
        assert [x.summary for x in restored.sessions.activities("s-1")] == ["write the tests", "stored a pattern"]


def test_a_seed_000_export_imports(store):
    summary = load(store, SEED_000, "dex.json")
    assert summary.added == [("mem-abc123", "myproject")]
    memory = store.get("mem-abc123")
    assert (memory.project, memory.type, memory.hat, memory.source, memory.use_count) == (
        "myproject", "pattern", "creator", "automatic", 5)
    assert memory.tags == ("testing", "go") and memory.file_refs == ("internal/session/*_test.go",)
    assert memory.confidence == 0.85
    event, = store.events("mem-abc123")
    assert (event.kind, event.actor, event.detail["source"]) == ("imported", "import", "dex.json")


def test_importing_an_export_again_changes_nothing(store, clock):
    busy_store(store, clock)
    document = json.loads(memdeck_json.dumps(memdeck_json.export_document(store, EVERY_STATUS)))
    before = {m.id: (m, store.events(m.id)) for m in list_memories(store, EVERY_STATUS, limit=None)}
    summary = load(store, document)
    assert (summary.added, summary.updated) == ([], [])
    assert {why for _, why in summary.skipped} == {"already in the store, unchanged"}
    assert {m.id: (m, store.events(m.id)) for m in list_memories(store, EVERY_STATUS, limit=None)} == before


def test_a_newer_copy_updates_and_an_older_one_is_skipped(store, clock):
    memory = store.add("Use ruff for lint", type="convention", memory_id="mem-1767225600-aaaa").memory
    clock.advance(seconds=20)  # the copy changed after the store's, and before now
    newer = {"memories": [{"id": memory.id, "type": "convention", "content": "Use ruff for lint and format",
                           "updated_at": clock.now() - 10}]}
    assert load(store, newer).updated == [(memory.id, "changed: content, updated_at")]
    assert store.get(memory.id).content == "Use ruff for lint and format"
    older = {"memories": [{"id": memory.id, "type": "convention", "content": "Use flake8",
                           "updated_at": clock.now() - 30}]}
    assert load(store, older).skipped == [(memory.id, "the store's copy changed after this one")]
    assert store.get(memory.id).content == "Use ruff for lint and format"


def test_memories_without_ids_go_through_reinforcement(store):
    store.add("Always run the migrations before the tests", type="pattern")
    document = {"memories": [
        {"type": "pattern", "content": "Always run the migrations before the tests"},
        {"type": "pitfall", "content": "The cache is not cleared between test runs"},
    ]}
    summary = load(store, document)
    assert len(summary.added) == 1 and len(summary.updated) == 1
    assert "reinforced" in summary.updated[0][1]
    assert len(list_memories(store, limit=None)) == 2
    reinforced = store.get(summary.updated[0][0])
    assert [e.kind for e in store.events(reinforced.id)] == ["created", "reinforced", "imported"]


def test_an_unknown_type_is_kept_under_the_fallback_with_its_word_as_tag(store):
    summary = load(store, {"memories": [{"id": "mem-1767225600-bbbb", "type": "Lore", "content": "x y z"}]})
    memory = store.get("mem-1767225600-bbbb")
    assert (memory.type, memory.tags) == ("context", ("lore",))
    assert "unknown type 'Lore'" in summary.notes[0]


def test_dry_run_reports_but_writes_nothing(store, db_path):
    before = snapshot(db_path)
    summary = import_document(store, memdeck_json.read_document(SEED_000, "dex.json"), dry_run=True)
    assert summary.added == [("mem-abc123", "myproject")] and summary.dry_run
    assert snapshot(db_path) == before


@pytest.mark.sqlite_only
def test_a_failure_half_way_leaves_the_store_as_it_was(store, db_path):
    store.add("Existing memory stays as it is", type="context")
    # A real database refusal in the middle of the import, after the bulk insert of memories with ids.
    store.db.execute_sql("CREATE TRIGGER refuse BEFORE INSERT ON memory WHEN NEW.content = 'boom' "
                         "BEGIN SELECT RAISE(ABORT, 'refused'); END")
    before = snapshot(db_path)
    document = {"memories": [
        {"id": "mem-1767225600-cccc", "type": "pattern", "content": "first, with an id"},
        {"type": "pattern", "content": "boom"},
    ], "sessions": [{"id": "s-9", "started_at": "2026-03-01T00:00:00Z"}]}
    with pytest.raises(Exception, match="refused"):
        load(store, document)
    assert snapshot(db_path) == before


@pytest.mark.parametrize("document, message", [
    ({"version": 2, "memories": []}, "unsupported export version 2"),
    ({"version": "1", "memories": []}, "unsupported export version '1'"),
    ({"memory": []}, "no \"memories\" list"),
    ([1, 2], "memories[0]: expected an object, got the number 1"),  # a bare list is its memories
    ("memories", "not a memdeck export: it holds no object"),
    ({"memories": {"id": "x"}}, "memories: expected a list, got an object"),
    ({"memories": ["text"]}, "memories[0]: expected an object"),
    ({"memories": [{"type": "pattern"}]}, "memories[0].content: expected text, got nothing"),
    ({"memories": [{"type": "pattern", "content": 5}]}, "memories[0].content: expected text, got the number 5"),
    ({"memories": [{"type": "pattern", "content": "x", "confidence": "high"}]}, "memories[0].confidence: expected a number"),
    ({"memories": [{"type": "pattern", "content": "x", "confidence": 7}]}, "memories[0].confidence: 7 is not between"),
    ({"memories": [{"type": "pattern", "content": "x", "tags": "a,b"}]}, "memories[0].tags: expected a list of text"),
    ({"memories": [{"type": "pattern", "content": "x", "created_at": "last week"}]}, "memories[0].created_at: cannot read"),
    ({"memories": [{"type": "pattern", "content": "x", "status": "gone"}]}, "memories[0].status: 'gone' is not one of"),
    ({"memories": [{"type": "pattern", "content": "x", "id": "has space"}]}, "memories[0].id: 'has space' is not a usable"),
    ({"memories": [{"type": "pattern", "content": "x", "events": [{"kind": "teleported", "at": 1}]}]},
     "memories[0].events[0].kind"),
])
def test_wrong_shapes_are_refused_with_where_they_are(document, message):
    with pytest.raises(InvalidInput, match=None) as caught:
        memdeck_json.read_document(document, "bad.json")
    assert message in str(caught.value)


def test_what_list_json_prints_imports_into_another_store(run_cli, tmp_path):
    """A bare list of memories, as `memdeck list --json` prints it, is a document of memories:
    they come over with their ids, and importing it again changes nothing."""
    source, target, listed = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "listed.json"
    run_cli("--db", str(source), "add", "Never squash the release commits", "--type", "convention", check=True)
    run_cli("--db", str(source), "add", "The ledger service owns every payment", "--type", "context", check=True)
    listed.write_text(run_cli("--db", str(source), "list", "--json", check=True).stdout, encoding="utf-8")
    first = run_cli("--db", str(target), "import", str(listed), check=True)
    again = run_cli("--db", str(target), "import", str(listed), check=True)
    assert "2 added" in first.stdout and "0 added, 0 updated, 2 skipped" in again.stdout
    ids = {m["id"] for m in json.loads(listed.read_text())}
    assert {m["id"] for m in json.loads(run_cli("--db", str(target), "list", "--json", check=True).stdout)} == ids
