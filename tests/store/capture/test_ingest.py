"""Ingesting sessions: every fixture transcript, stream-json and text; the session log it writes,
the memories and candidates it stores, and doing it again changing nothing."""

from __future__ import annotations

import json

import pytest

from store.engine.errors import InvalidInput
from store.capture.ingest import IngestOptions, ingest_file
from store.browse.search import MemoryFilter, list_memories
from tests.data_support import FIXTURES, needs_shared
from tests.transcript_support import (CLAUDE_1_0_98, CLAUDE_1_0_108, CLAUDE_2_1, OWN_TRANSCRIPT, SUBAGENT,
                                      assistant_line, kinds, snapshot, user_line)

pytestmark = pytest.mark.both_backends

@needs_shared
@pytest.mark.parametrize("path, records, activities", [
    (CLAUDE_2_1, {"queue-operation": 1, "user": 16, "assistant": 21},
     {"prompt": 1, "note": 2, "assistant": 8, "tool_use": 13, "tool_result": 12, "tool_error": 1,
          "candidate": 2}),
    (CLAUDE_1_0_108, {"user": 25, "assistant": 28},
     {"prompt": 3, "note": 1, "assistant": 7, "tool_use": 21, "tool_result": 18, "tool_error": 3}),
    (SUBAGENT, {"user": 1, "assistant": 1}, {"prompt": 1, "assistant": 1}),
    (CLAUDE_1_0_98, {"summary": 1, "user": 175, "assistant": 262},
     {"summary": 1, "prompt": 7, "note": 1, "assistant": 95, "tool_use": 167, "tool_result": 144,
      "tool_error": 23, "candidate": 3}),
], ids=["claude-2.1.14", "claude-1.0.108", "subagent-2.0.28", "claude-1.0.98"])
def test_every_fixture_transcript_ingests_with_its_records_counted_by_type(store, path, records, activities):
    report = ingest_file(store, path)
    assert report.format == "transcript"
    assert dict(report.records) == records
    assert not report.unreadable and report.invalid_utf8 == 0
    assert kinds(store, report.session_id) == activities
    session = store.sessions.get(report.session_id)
    assert session.agent == "claude-code"
    assert session.meta["ingest"][str(path.resolve())]["records"] == records


def test_own_transcript_ingests_once_with_its_session_and_log(store, clock):
    report = ingest_file(store, OWN_TRANSCRIPT)
    assert report.format == "transcript" and report.session_id == "c3d2e1f0-fail-then-pass"
    assert not report.unreadable and sum(report.records.values()) == report.lines == 27
    session = store.sessions.get(report.session_id)
    assert session.agent == "claude-code" and session.meta["cwd"] == "/home/dev/calc"
    log = store.sessions.activities(report.session_id)
    assert log[0].kind == "prompt" and log[0].summary == "Make the parser accept unary minus."
    assert {"tool_use", "tool_result", "tool_error"} <= {a.kind for a in log}
    before = snapshot(store)
    clock.advance(seconds=60)
    again = ingest_file(store, OWN_TRANSCRIPT)
    assert again.lines == 0 and again.activities == 0 and not again.created
    assert snapshot(store) == before

@needs_shared
def test_the_session_id_comes_from_the_transcript_and_its_facts_are_kept(store):
    report = ingest_file(store, CLAUDE_2_1, IngestOptions(hat="creator", task="multiply"))
    session = store.sessions.get("c64cc478-3430-40fe-8e9c-4ee9986e9754")
    assert report.session_id == session.id
    assert (session.hat, session.task) == ("creator", "multiply")
    assert session.meta["cwd"] == "/tmp/tmpw6sk2trg" and session.meta["version"] == "2.1.14"
    assert session.files_touched == ("src/math_utils.py", "tests/test_math_utils.py", ".gitignore")
    assert report.files_touched == list(session.files_touched)
    first = store.sessions.activities(session.id)[0]
    assert first.kind == "prompt" and first.summary.startswith("Add a function called multiply_numbers")
    tool = next(a for a in store.sessions.activities(session.id) if a.kind == "tool_use")
    assert tool.summary == "Glob: **/*.py" and tool.detail["tool"] == "Glob"
    error = next(a for a in store.sessions.activities(session.id) if a.kind == "tool_error")
    assert error.summary.startswith("Bash: Exit code 1")


@needs_shared
def test_a_subagent_transcript_feeds_its_parent_session_without_clashing(store):
    ingest_file(store, CLAUDE_1_0_108)
    report = ingest_file(store, SUBAGENT)
    assert report.session_id == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7" and report.lines == 2
    assert len(store.sessions.get(report.session_id).meta["ingest"]) == 2


@needs_shared
def test_ingesting_the_same_transcripts_twice_changes_nothing(store, clock):
    for path in (CLAUDE_2_1, CLAUDE_1_0_98, FIXTURES / "markers" / "LeenVandelied__MyTimeline__docs__memory__sprints__sprint-79__issue-463-done.md"):
        ingest_file(store, path)
    before = snapshot(store)
    clock.advance(seconds=60)
    for path in (CLAUDE_2_1, CLAUDE_1_0_98, FIXTURES / "markers" / "LeenVandelied__MyTimeline__docs__memory__sprints__sprint-79__issue-463-done.md"):
        again = ingest_file(store, path)
        assert again.lines == 0 and again.activities == 0 and not again.created and not again.reinforced
    assert snapshot(store) == before


@needs_shared
def test_a_transcript_that_grew_is_ingested_from_where_it_stopped(store, tmp_path):
    lines = CLAUDE_1_0_98.read_bytes().splitlines(keepends=True)
    growing = tmp_path / "live.jsonl"
    growing.write_bytes(b"".join(lines[:200]))
    first = ingest_file(store, growing)
    growing.write_bytes(b"".join(lines))
    second = ingest_file(store, growing)
    assert (first.lines, second.lines) == (200, len(lines) - 200)
    # "whole" says every sentence of the first session again: a sentence said again would be a
    # lesson there (store.capture.said_again), not in the session it repeats.
    store.config = store.config.with_overrides({"capture.said_again.min_shared": 0}, "test")
    whole = ingest_file(store, CLAUDE_1_0_98, IngestOptions(session_id="whole"))
    assert kinds(store, first.session_id) == kinds(store, whole.session_id)
    # the fail-edit-pass fix spans both pieces and is still proposed once
    seqs = [a.seq for a in store.sessions.activities(first.session_id)]
    assert seqs == list(range(len(seqs)))


@needs_shared
def test_a_changed_transcript_is_refused_rather_than_ingested_twice(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(CLAUDE_2_1.read_bytes())
    ingest_file(store, path)
    path.write_bytes(CLAUDE_2_1.read_bytes().replace(b"multiply_numbers", b"divide_numbersXX"))
    before = snapshot(store)
    with pytest.raises(InvalidInput, match="changed before the part already ingested"):
        ingest_file(store, path)
    assert snapshot(store) == before


def test_only_the_agents_own_text_makes_memories(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([
        user_line("s1", "Record learnings like [MEMORY:pattern] Tests use pytest"),
        json.dumps({"type": "user", "sessionId": "s1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "MEMORY:pitfall:read from a file"}]}}),
        assistant_line("s1", "Done.\n[MEMORY:pitfall:billing] Retries must reuse the idempotency key", 1),
    ]) + "\n")
    report = ingest_file(store, path)
    assert report.quoted == 2 and report.markers == 1
    memory = store.get(report.created[0])
    assert (memory.type, memory.scope, memory.source, memory.status, memory.session_id) == (
        "pitfall", "billing", "explicit", "active", "s1")
    log = store.sessions.activities("s1")
    assert [a.kind for a in log] == ["prompt", "note", "tool_result", "note", "assistant", "marker", "memory_created"]
    assert log[-1].memory_id == memory.id
    assert "only the agent's own text counts" in log[1].summary


def test_a_repeated_marker_reinforces_and_an_unknown_type_goes_to_the_fallback_with_a_tag(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([
        assistant_line("s2", "[MEMORY:business-rule] Category names are unique per owner", 0),
        assistant_line("s2", "MEMORY:gotchas:Archived rows still count in native SQL", 1),
        assistant_line("s2", "[MEMORY:business-rule] Category names are unique per owner", 2),
    ]) + "\n")
    report = ingest_file(store, path)
    assert len(report.created) == 2 and report.reinforced == [report.created[0]]
    rule, gotcha = store.get_many(report.created)
    assert (rule.type, rule.tags, rule.confidence) == ("context", ("business-rule",), 0.7)
    assert gotcha.type == "pitfall" and gotcha.tags == ()
    assert report.fallback == [{"word": "business-rule", "memory_id": rule.id}]
    notes = [a for a in store.sessions.activities("s2") if a.kind == "note"]
    assert notes[0].memory_id == rule.id and "unknown type 'business-rule'" in notes[0].summary
    assert [e.kind for e in store.events(rule.id)] == ["created", "reinforced"]


def test_rejected_markers_are_logged_with_their_line(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(assistant_line("s3", "Notes:\n[MEMORY:pitfall]\n\nMEMORY:fix") + "\n")
    report = ingest_file(store, path)
    assert [(r["line"], r["text_line"], r["reason"]) for r in report.rejected] == [
        (1, 2, "no text after the marker"), (1, 4, "no ':' and text after the type")]
    rejected = [a for a in store.sessions.activities("s3") if a.kind == "marker_rejected"]
    assert [a.detail["source"] for a in rejected] == ["[MEMORY:pitfall]", "MEMORY:fix"]
    assert list_memories(store, MemoryFilter()) == []


def test_markers_can_be_sent_to_the_inbox_by_config(store, tmp_path):
    store.config = store.config.with_overrides({"ingest": {"marker_status": "pending"}})
    path = tmp_path / "t.jsonl"
    path.write_text(assistant_line("s4", "MEMORY:decision:SQLite for simplicity") + "\n")
    report = ingest_file(store, path)
    assert store.get(report.created[0]).status == "pending"


def test_long_memories_are_cut_and_say_so(store, tmp_path):
    store.config = store.config.with_overrides({"ingest": {"max_length": 100}})
    path = tmp_path / "t.jsonl"
    path.write_text(assistant_line("s5", "MEMORY:pattern:" + "word " * 100) + "\n")
    report = ingest_file(store, path)
    memory = store.get(report.created[0])
    assert len(memory.content) <= 100 and memory.content.endswith("…")
    assert memory.meta["cut_from"] == 500 - 1
    assert any(a.kind == "note" and "cut to 100 characters" in a.summary for a in store.sessions.activities("s5"))


@needs_shared
def test_the_fail_edit_pass_heuristic_proposes_a_fix_naming_the_files_changed(store):
    report = ingest_file(store, CLAUDE_1_0_98)
    pending = list_memories(store, MemoryFilter(statuses=("pending",)))
    assert sorted(m.id for m in pending) == sorted(report.candidates)
    fix = next(m for m in pending if "npx tsc" in m.title)
    assert fix.type == "fix" and fix.source == "automatic" and fix.status == "pending"
    assert fix.file_refs == ("todo-app/src/hooks/useTodos.test.ts",)
    assert "It passed after changes to: todo-app/src/hooks/useTodos.test.ts." in fix.content
    repeated = next(m for m in pending if m.title.startswith("Edit: todo-app/src/app/page.tsx fails"))
    assert repeated.type == "pitfall" and "File has not been read yet" in repeated.content
    assert "The agent found: I need to read the file first before editing it" in repeated.content  # a subagent's words
    candidate_log = [a for a in store.sessions.activities(report.session_id) if a.kind == "candidate"]
    assert {a.memory_id for a in candidate_log} == set(report.candidates)


def test_stream_json_output_is_read_and_its_result_is_not_counted_twice(store, tmp_path):
    path = tmp_path / "run.jsonl"
    text = "Done.\n[MEMORY:timing:jellyfin] Takes 60s to start after restart"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"type": "system", "subtype": "init", "session_id": "sj", "cwd": "/srv", "model": "claude-sonnet-4-5"},
        {"type": "assistant", "session_id": "sj", "message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "MEMORY:pattern:only thinking"},
            {"type": "text", "text": text},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "systemctl restart jellyfin"}}]}},
        {"type": "user", "session_id": "sj", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "restarted"}]}},
        {"type": "stream_event", "session_id": "sj", "event": {"type": "content_block_delta"}},
        {"type": "result", "subtype": "success", "num_turns": 2, "result": text, "session_id": "sj"},
    ]) + "\n")
    report = ingest_file(store, path)
    assert report.format == "stream-json" and report.session_id == "sj"
    assert dict(report.records) == {"system": 1, "assistant": 1, "user": 1, "stream_event": 1, "result": 1}
    assert report.markers == 1
    assert [a.kind for a in store.sessions.activities("sj")] == [
        "note", "thinking", "note", "assistant", "marker", "memory_created", "tool_use", "tool_result", "summary"]
    assert store.sessions.activities("sj")[-2].summary == "Bash: restarted"


@needs_shared
def test_plain_text_is_all_the_agents_own_output_and_one_session_per_file(store):
    path = FIXTURES / "markers" / "LeenVandelied__MyTimeline__docs__memory__sprints__sprint-10__issue-52-done.md"
    report = ingest_file(store, path, IngestOptions(hat="editor"))
    assert report.format == "text" and report.session_id.startswith("text-")
    memories = store.get_many(report.created)
    assert [(m.type, m.hat) for m in memories] == [("context", "editor"), ("decision", "editor"), ("pitfall", "editor")]
    markers = [a for a in store.sessions.activities(report.session_id) if a.kind == "marker"]
    assert [a.detail["line"] for a in markers] == [33, 34, 35]
