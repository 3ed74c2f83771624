"""The Claude Code hooks end to end, fed the JSON Claude Code sends on stdin."""

from __future__ import annotations

import json

from store import Config, Store
from tests.test_ingest import CLAUDE_2_1, assistant_line


def hook_input(event: str, session_id: str, transcript, cwd, **extra) -> str:
    return json.dumps({"session_id": session_id, "transcript_path": str(transcript), "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": event, **extra})


def test_session_start_runs_decay_then_prints_the_memories_and_records_the_injection(run_cli, db_path, tmp_path):
    # The hook runs on the real clock, so the memories are made on it too.
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        critical = store.add("Payments go through the ledger service, never straight to the DB",
                             type="constraint", confidence=0.95).memory
        stale = store.add("The old cache layer needs a manual flush", type="pattern", confidence=0.5,
                          created_at=store.now() - 400 * 86400).memory
    result = run_cli("hook", "session-start", "--task", "payments ledger",
                     input=hook_input("SessionStart", "sess-1", tmp_path / "t.jsonl", tmp_path, source="startup"))
    assert result.returncode == 0, result.stderr
    assert "Payments go through the ledger service" in result.stdout
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert [e.kind for e in store.events(stale.id)][-1] == "decayed"
        assert store.get(critical.id).use_count == 1
        injected = store.activities("sess-1")
        assert [a.kind for a in injected] == ["injected"] and injected[0].detail["ids"] == [critical.id]


def test_stop_ingests_the_transcript_and_again_only_what_is_new(run_cli, db_path, tmp_path):
    transcript = tmp_path / "session.jsonl"
    lines = CLAUDE_2_1.read_text().splitlines(keepends=True)
    transcript.write_text("".join(lines[:20]))
    payload = hook_input("Stop", "c64cc478-3430-40fe-8e9c-4ee9986e9754", transcript, tmp_path, stop_hook_active=False)
    first = run_cli("hook", "stop", "--hat", "creator", input=payload)
    assert first.returncode == 0, first.stderr and first.stdout == ""
    transcript.write_text("".join(lines) + assistant_line("c64cc478-3430-40fe-8e9c-4ee9986e9754",
                                                          "MEMORY:pattern:Tests sit next to the code they test", 99) + "\n")
    second = run_cli("hook", "stop", "--hat", "creator", input=payload)
    assert second.returncode == 0 and "ingested 19 lines" in second.stderr
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        session = store.session("c64cc478-3430-40fe-8e9c-4ee9986e9754")
        assert session.hat == "creator" and session.ended_at is not None
        log = store.activities(session.id)
        assert len(log) == 37 + 3 + 2  # the records, the new line's three entries, two Stop hook candidates
        memory = store.get(next(a.memory_id for a in reversed(log) if a.kind == "memory_created"))
        assert (memory.type, memory.hat, memory.session_id) == ("pattern", "creator", session.id)


def test_hooks_never_exit_2_and_say_what_is_wrong(run_cli, tmp_path):
    garbage = run_cli("hook", "stop", input="not json")
    assert garbage.returncode == 1
    assert "not JSON" in garbage.stderr and "no transcript_path" in garbage.stderr
    missing = run_cli("hook", "stop", input=hook_input("Stop", "s", tmp_path / "gone.jsonl", tmp_path))
    assert missing.returncode == 1 and "no such file" in missing.stderr
    empty = run_cli("hook", "session-start", input="")
    assert empty.returncode == 0


def test_skill_prints_both_marker_grammars_and_the_types(run_cli, db_path):
    result = run_cli("skill", check=True)
    assert "MEMORY:pattern:" in result.stdout and "[MEMORY:pitfall:billing-api]" in result.stdout
    assert "architecture, dependency, decision" in result.stdout
    assert not db_path.exists()  # printing the skill does not create a store
