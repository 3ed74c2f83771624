"""Text from outside has bounds: every field a length limit, no NUL character on any path (add,
edit, import, copy, the MCP server), counts that fit a column, and an identifier split that
stays linear on a long run of letters."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from store import Config, Store
from store.engine.errors import InvalidInput
from store.engine.limits import FIELD_LIMITS, MAX_LIST_ITEMS
from store.interop.transfer import import_file
from store.index import identifiers
from tests.cli_support import run_in_process

pytestmark = pytest.mark.both_backends


def count(store) -> int:
    return store.db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0]


# -- the identifier split --------------------------------------------------------------------------

def test_an_identifier_match_starts_only_where_a_run_of_word_characters_starts():
    """Tried from inside a run too, the scan was quadratic in the run's length."""
    assert identifiers._MAY_SPLIT.search("aaaaB", 1) is None
    assert identifiers._MAY_SPLIT.findall("see useSearchParams and x.y, plain words") == ["useSearchParams", "x.y"]
    assert identifiers.index_words("parseJSONBody", "a v2Api in restaurant.router.ts", '["kebab-case"]') == \
        "parse json body api restaurant router ts kebab case"


def test_a_memory_of_200000_letters_in_one_run_is_stored_and_found(store):
    run = "a" * 199_000
    memory = store.add(f"{run} then camelCase", type="fix").memory
    assert store.get(memory.id).content.startswith("aaaa")
    assert identifiers.identifier_parts(f"{run} then camelCase") == ["camel", "case"]


# -- length limits ---------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["title", "scope", "hat", "task", "session_id"])
def test_a_field_over_its_limit_is_refused_on_add_and_edit(store, field):
    too_long = "x" * (FIELD_LIMITS[field] + 1)
    with pytest.raises(InvalidInput, match=f"{field} is {len(too_long)} characters long, over the limit"):
        store.add("Retry the websocket with backoff", type="fix", **{field: too_long})
    assert store.add("Retry the websocket with backoff", type="fix", **{field: "x" * FIELD_LIMITS[field]}).created
    if field != "session_id":
        memory = store.add("Cap the backoff at 30 s", type="fix").memory
        with pytest.raises(InvalidInput, match="over the limit"):
            store.edit(memory.id, **{field: too_long})


@pytest.mark.parametrize("field", ["tags", "file_refs"])
def test_a_tag_or_file_ref_over_its_limit_or_too_many_are_refused(store, field):
    with pytest.raises(InvalidInput, match="over the limit"):
        store.add("Retry the websocket with backoff", type="fix", **{field: ["x" * (FIELD_LIMITS[field] + 1)]})
    with pytest.raises(InvalidInput, match=f"over the limit of {MAX_LIST_ITEMS}"):
        store.add("Retry the websocket with backoff", type="fix",
                  **{field: [f"t{i}" for i in range(MAX_LIST_ITEMS + 1)]})
    memory = store.add("Cap the backoff at 30 s", type="fix").memory
    with pytest.raises(InvalidInput, match="over the limit"):
        store.edit(memory.id, **{field: ["y" * (FIELD_LIMITS[field] + 1)]})
    assert count(store) == 1


def test_an_import_with_a_field_over_its_limit_imports_nothing(store, tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"memories": [
        {"content": "Fine", "type": "fix"},
        {"content": "Tagged", "type": "fix", "tags": ["t" * 10_000]},
    ]}))
    with pytest.raises(InvalidInput, match=r"memories\[1\]\.tags.*over the limit"):
        import_file(store, str(path))
    assert count(store) == 0


# -- NUL ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["content", "title", "scope", "hat", "tags"])
def test_a_nul_is_refused_on_add_and_edit_on_both_backends(store, field):
    value = ["bad\x00tag"] if field == "tags" else "Retry\x00 the websocket"
    fields = {"content": "Retry the websocket with backoff", field: value}
    with pytest.raises(InvalidInput, match="NUL character"):
        store.add(fields.pop("content"), type="fix", **fields)
    memory = store.add("Cap the backoff at 30 s", type="fix").memory
    with pytest.raises(InvalidInput, match="NUL character"):
        store.edit(memory.id, **{field: value})
    assert store.get(memory.id).version == memory.version


def test_an_import_holding_a_nul_imports_nothing(store, tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"memories": [
        {"content": "Fine", "type": "fix"},
        {"content": "Not\u0000fine", "type": "fix"},
    ]}))
    with pytest.raises(InvalidInput, match=r"memories\[1\]\.content holds a NUL"):
        import_file(store, str(path))
    path.write_text(json.dumps({"memories": [{"id": "mem-1", "content": "Fine", "type": "fix",
                                              "events": [{"kind": "created", "at": 1, "actor": "a\u0000b"}]}]}))
    with pytest.raises(InvalidInput, match="NUL"):
        import_file(store, str(path))
    assert count(store) == 0


@pytest.mark.sqlite_only
def test_copying_an_older_store_holding_a_nul_into_postgresql_is_a_clean_error(postgres_server, tmp_path, clock):
    source = tmp_path / "old.db"
    with Store.open(source, project="demo", clock=clock, config=Config.defaults()) as old:
        memory = old.add("Retry the websocket with backoff", type="fix").memory
    with sqlite3.connect(source) as conn:  # as a memdeck before the limits would have stored it
        conn.execute("UPDATE memory SET title = 'Retry' || char(0) || 'the websocket' WHERE id = ?", (memory.id,))
    url = postgres_server.empty_database()
    done = run_in_process(["copy", "--from", str(source), "--to", url], cwd=tmp_path, env={**os.environ})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"memory {memory.id} holds a NUL character" in done.stderr and "nothing was copied" in done.stderr


# -- counts --------------------------------------------------------------------------------------------

def test_an_import_with_a_count_too_large_for_a_column_is_a_clean_error(run_cli, tmp_path):
    path = tmp_path / "export.json"
    path.write_text('{"memories": [{"content": "Fine", "type": "fix", "use_count": 1000000000000000000000000000000}]}')
    done = run_cli("import", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "use_count" in done.stderr and "over the largest number memdeck keeps" in done.stderr


def test_a_transcripts_long_scope_or_type_word_is_cut_not_a_failed_ingest(store, tmp_path):
    from store.capture.ingest import ingest_file
    from tests.transcript_support import assistant_line

    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([
        assistant_line("s", f"[MEMORY:fix:{'b' * 5_000}] Retry the websocket with backoff", 1),
        assistant_line("s", f"[MEMORY:{'w' * 5_000}] Cap the backoff at 30 s", 2),
        assistant_line("s", "[MEMORY:fix] A third, ordinary marker", 3),
    ]) + "\n")
    report = ingest_file(store, path)
    assert len(report.created) == 3
    first, second, _ = (store.get(i) for i in report.created)
    assert first.scope == "b" * FIELD_LIMITS["scope"]
    assert second.tags == ()  # the unknown word was too long to keep as a tag
