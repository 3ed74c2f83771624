"""Time bases: importing (or verifying) a memory starts its decay clock, times from outside are
never later than now, and history is in the order memdeck recorded it."""

from __future__ import annotations

import json

import pytest

from store import Config, Store
from store.engine.clock import DAY
from store.interop.document import ImportDocument, IncomingMemory
from store.interop.importer import import_document
from store.engine.lifecycle import plan_decay, run_decay
from tests.data_support import FIXTURES, T0, needs_shared, worked_on
from tests.transcript_support import hook_input

RALPH = FIXTURES / "ralph" / "mikeyobrien__tonic__.ralph__agent__memories.md"


@pytest.mark.slow
@needs_shared
def test_a_real_ralph_file_of_old_memories_survives_the_first_session_start(run_cli, db_path, tmp_path):
    # The file's memories were written in early 2026; the hook runs on the real clock, later.
    imported = run_cli("import", str(RALPH), "--json", check=True)
    added = json.loads(imported.stdout)["added"]
    assert len(added) == 69
    before = {m["id"]: m for m in json.loads(run_cli("list", "--json", "--limit", "0", check=True).stdout)}
    assert min(m["created_at"] for m in before.values()) < "2026-03"
    started = run_cli("hook", "session-start",
                      input=hook_input("SessionStart", "first", tmp_path / "t.jsonl", tmp_path, source="startup"))
    assert started.returncode == 0, started.stderr
    after = json.loads(run_cli("list", "--json", "--limit", "0", check=True).stdout)
    assert len(after) == 69
    assert all(m["status"] == "active" for m in after)
    assert all(m["confidence"] >= before[m["id"]]["confidence"] for m in after)  # none decayed


def test_the_grace_period_counts_from_the_import(store, clock):
    document = ImportDocument("ralph", "memories.md", [IncomingMemory(
        {"id": "mem-1600000000-beef", "type": "fix", "content": "Pin the toolchain", "source": "imported",
         "created_at": T0 - 400 * DAY}, "line 3")])
    import_document(store, document)
    worked_on(store, T0 - 400 * DAY, 443)  # the project was worked on every day
    assert plan_decay(store) == []
    clock.advance(days=29)
    assert plan_decay(store) == []
    clock.advance(days=14)
    assert [c.memory_id for c in run_decay(store)] == ["mem-1600000000-beef"]


def test_verifying_a_memory_restarts_its_decay_clock(store, clock):
    memory = store.add("Deploys go through the canary first", type="constraint",
                       created_at=T0 - 200 * DAY).memory
    worked_on(store, T0 - 199 * DAY, 200)
    assert plan_decay(store)  # stale
    store.edit(memory.id, verified_at=T0)
    assert plan_decay(store) == []


def test_times_from_outside_are_never_later_than_now(store):
    future = T0 + 90 * DAY
    document = ImportDocument("json", "export.json", [IncomingMemory(
        {"id": "mem-1-future", "type": "fix", "content": "Written by a clock running ahead",
         "created_at": future, "updated_at": future, "last_used_at": future, "verified_at": future},
        "memories[0]", events=({"kind": "created", "at": future, "actor": "x", "session_id": None,
                                "confidence_before": None, "confidence_after": 0.8, "detail": {}},))])
    import_document(store, document)
    memory = store.get("mem-1-future")
    assert memory.created_at == memory.updated_at == memory.last_used_at == memory.verified_at == T0
    assert store.events(memory.id)[0].at == T0
    added = store.add("Also from the future", type="fix", created_at=future).memory
    assert added.created_at == T0


def test_history_is_in_the_order_memdeck_recorded_it(store, clock):
    memory = store.add("Use the retry helper", type="fix").memory
    # Another tool's history, dated before the memory was made here, arrives later.
    store.record_event(memory.id, "reinforced", before=0.8, after=0.9, actor="import", at=T0 - 100 * DAY)
    clock.advance(seconds=5)
    store.edit(memory.id, title="Retry helper")
    assert [e.kind for e in store.events(memory.id)] == ["created", "reinforced", "edited"]


@needs_shared
def test_a_store_opened_on_the_real_clock_keeps_imports_active(db_path, tmp_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        from store.interop.transfer import import_file

        import_file(store, str(RALPH))
        assert run_decay(store) == []
