"""Hostile input: invalid UTF-8, NUL bytes and binary garbage, a 10 MB line, truncated JSON,
secrets and terminal escapes. A clear message, nothing lost, nothing leaked."""

from __future__ import annotations

import json
import os

import pytest

from store.engine.errors import InvalidInput, NotFound
from store.engine.limits import EARLIEST_TIME, LATEST_TIME
from store.capture.ingest import IngestOptions, ingest_file
from tests.transcript_support import assistant_line, snapshot, user_line

SECRET = "sk-ant-api03-" + "Zq9" * 12
DB_PASSWORD = "hunter2-very-secret"


def store_bytes(db_path) -> bytes:
    """Every byte SQLite wrote for the store, main file and write-ahead log."""
    return b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))


def test_a_secret_in_a_marker_is_redacted_before_storage_and_the_redaction_recorded(store, db_path, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([
        user_line("s", f"use key {SECRET} and postgres://app:{DB_PASSWORD}@db/prod"),
        assistant_line("s", f"[MEMORY:fix:billing] Call the API with {SECRET}; "
                            f"the DSN is postgres://app:{DB_PASSWORD}@db/prod", 1),
    ]) + "\n")
    report = ingest_file(store, path)
    memory = store.get(report.created[0])
    assert SECRET not in memory.content and DB_PASSWORD not in memory.content
    assert "[REDACTED:anthropic_key]" in memory.content and "postgres://app:[REDACTED:url_password]@db" in memory.content
    assert memory.meta["redactions"] == {"anthropic_key": 1, "url_password": 1}
    created = next(a for a in store.sessions.activities("s") if a.kind == "memory_created")
    assert created.detail["redactions"] == {"anthropic_key": 1, "url_password": 1}
    assert any(a.kind == "note" and "secret redacted" in a.summary for a in store.sessions.activities("s"))
    assert report.redacted == 1
    store.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = store_bytes(db_path)
    assert SECRET.encode() not in raw and DB_PASSWORD.encode() not in raw


def test_terminal_escapes_and_control_characters_are_stripped_from_memories(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(assistant_line("s", "MEMORY:pitfall:\x1b[31mRed\x1b[0m builds \x07fail\x00 on Fridays\x1b]0;title\x07") + "\n")
    memory = store.get(ingest_file(store, path).created[0])
    assert memory.content == "Red builds fail on Fridays"
    assert memory.meta["control_stripped"] == 5


def test_invalid_utf8_is_read_with_replacement_characters_and_counted(store, tmp_path):
    path = tmp_path / "t.jsonl"
    line = assistant_line("s", "MEMORY:pattern:caf\u00e9 menus are cached").encode().replace(b"\\u00e9", b"\xe9")
    path.write_bytes(line + b"\n")
    report = ingest_file(store, path)
    assert report.invalid_utf8 == 1 and not report.unreadable
    assert store.get(report.created[0]).content == "caf\ufffd menus are cached"


def test_binary_garbage_is_refused_with_a_clear_message_and_nothing_written(store, tmp_path):
    path = tmp_path / "core.bin"
    path.write_bytes(bytes(range(256)) * 64)
    before = snapshot(store)
    with pytest.raises(InvalidInput, match=r"looks binary \(a NUL byte at byte 0\)"):
        ingest_file(store, path)
    assert snapshot(store) == before


def test_binary_garbage_read_as_text_on_purpose_stores_no_control_characters(store, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"\x00\x01garbage\xff\xfe\n\n[MEMORY:fix] Reboot\x00 the \x1b[1mrouter\x1b[0m\n")
    report = ingest_file(store, path, IngestOptions(format="text"))
    assert store.get(report.created[0]).content == "Reboot the router"
    for activity in store.sessions.activities(report.session_id):
        assert not any(ord(c) < 32 and c not in "\n\t" for c in activity.summary)


def test_garbage_and_truncated_lines_inside_a_transcript_are_reported_by_line_and_the_rest_ingested(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join([
        assistant_line("s", "MEMORY:pattern:first", 0).encode(),
        b'{"type": "assistant", "sessionId": "s", "message": {"content": [{"type": "te',
        b"\x89PNG\r\n\x1a\x00\x00\x00\rIHDR" + os.urandom(64).replace(b"\n", b""),
        b"[1, 2, 3]",
        assistant_line("s", "MEMORY:pattern:after the damage", 4).encode(),
    ]) + b"\n")
    report = ingest_file(store, path)
    assert [u["line"] for u in report.unreadable] == [2, 3, 4, 5]
    assert report.unreadable[0]["reason"].startswith("not JSON (Unterminated string")
    assert report.unreadable[3]["reason"] == "a JSON list, not a record"
    assert [store.get(i).content for i in report.created] == ["first", "after the damage"]
    notes = [a for a in store.sessions.activities("s") if a.kind == "note"]
    assert [a.detail["line"] for a in notes] == [2, 3, 4, 5]


def test_an_unfinished_last_line_waits_for_the_rest_of_it(store, tmp_path):
    path = tmp_path / "live.jsonl"
    whole = assistant_line("s", "MEMORY:pattern:written in two goes", 1).encode()
    path.write_bytes(assistant_line("s", "hello", 0).encode() + b"\n" + whole[:30])
    first = ingest_file(store, path)
    assert first.lines == 1 and first.incomplete_tail == 30 and not first.unreadable
    path.write_bytes(assistant_line("s", "hello", 0).encode() + b"\n" + whole + b"\n")
    second = ingest_file(store, path)
    assert second.lines == 1 and store.get(second.created[0]).content == "written in two goes"


def test_a_ten_megabyte_line_is_ingested_and_its_memory_cut_to_the_configured_length(store, tmp_path):
    path = tmp_path / "big.jsonl"
    text = "MEMORY:context:" + ("0123456789abcdef " * 620_000)
    path.write_text(assistant_line("s", text) + "\n")
    assert path.stat().st_size > 10_000_000
    report = ingest_file(store, path)
    memory = store.get(report.created[0])
    assert len(memory.content) <= 4000 and memory.meta["cut_from"] > 10_000_000
    assert len(store.sessions.activities("s")[0].summary) <= 200
    assert json.loads(json.dumps(report.to_json()))["cut"] == 1


@pytest.mark.parametrize("stamp", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00+05:00", "1900-01-01T00:00:00Z"])
def test_a_record_time_outside_the_dates_memdeck_keeps_counts_as_unknown(store, tmp_path, stamp):
    """Out of range (or overflowing when converted): the record is read, its time taken as
    unknown (now), so the session and its log stay within the store's limits."""
    path = tmp_path / "t.jsonl"
    line = json.loads(assistant_line("odd-times", "[MEMORY:fix:billing] Round invoice totals once, at the end", 1))
    line["timestamp"] = stamp
    path.write_text(user_line("odd-times", "fix the invoice rounding") + "\n" + json.dumps(line) + "\n")
    report = ingest_file(store, path)
    assert len(report.created) == 1
    times = [a.at for a in store.sessions.activities("odd-times")]
    session = store.sessions.get("odd-times")
    assert times and all(EARLIEST_TIME <= t <= LATEST_TIME for t in [*times, session.started_at, session.ended_at])
    assert max(times) == store.now()  # the odd record's entries: now


def test_a_session_or_activity_time_outside_the_limits_is_refused_and_nothing_written(store):
    store.sessions.ensure("s1")
    for bad in (float("nan"), -1.0, LATEST_TIME + 1):
        with pytest.raises(InvalidInput, match="outside the dates memdeck keeps|not a time"):
            store.sessions.append_activity("s1", "note", "odd", at=bad)
        with pytest.raises(InvalidInput):
            store.sessions.ensure("s2", started_at=bad)
        with pytest.raises(InvalidInput):
            store.sessions.end("s1", bad)
    assert store.sessions.activities("s1") == [] and store.sessions.get("s1").ended_at is None
    with pytest.raises(NotFound):
        store.sessions.get("s2")


def test_a_number_too_long_for_python_is_an_unreadable_line_not_a_crash(store, tmp_path):
    """json.loads raises a plain ValueError (not a JSONDecodeError) for an integer of more than
    4,300 digits: the line is unreadable, and the lines around it are ingested."""
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([
        assistant_line("s", "MEMORY:pattern:before the number", 0),
        '{"type": "user", "sessionId": "s", "n": ' + "9" * 5000 + "}",
        assistant_line("s", "MEMORY:pattern:after the number", 2),
    ]) + "\n")
    report = ingest_file(store, path)
    assert [u["line"] for u in report.unreadable] == [2]
    assert report.unreadable[0]["reason"].startswith("not JSON (Exceeds the limit")
    assert [store.get(i).content for i in report.created] == ["before the number", "after the number"]
