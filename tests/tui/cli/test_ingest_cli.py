"""`memdeck ingest` as a user runs it: the summary, exit codes, stdin with --tee, --follow on a
growing file, and two ingest processes on one store at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from store import Config, Store
from tests.cli_support import memdeck_command
from tests.data_support import FIXTURES, needs_shared
from tests.transcript_support import CLAUDE_1_0_98, CLAUDE_2_1, assistant_line

SPRINT_79 = FIXTURES / "markers" / "LeenVandelied__MyTimeline__docs__memory__sprints__sprint-79__issue-463-done.md"


def open_store(db_path) -> Store:
    return Store.open(db_path, project="demo", config=Config.defaults())


@needs_shared
def test_ingest_prints_a_summary_and_a_second_run_says_nothing_is_new(run_cli):
    first = run_cli("ingest", str(SPRINT_79), check=True)
    assert "markers: 4 → memories 4 created, 0 reinforced" in first.stderr
    assert first.stdout == ""
    second = run_cli("ingest", str(SPRINT_79), check=True)
    assert "nothing new" in second.stderr and "all of it was ingested before" in second.stderr


def test_ingest_json_summary_and_rejected_markers_listed_with_their_line(run_cli, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\n[MEMORY:pitfall]\n\n[MEMORY:fix:api] Retry once on 502\n")
    result = run_cli("ingest", str(notes), "--json", check=True)
    report = json.loads(result.stdout)
    assert report["format"] == "text" and report["markers"] == 1
    assert report["rejected"] == [{"line": 3, "reason": "no text after the marker", "source": "[MEMORY:pitfall]"}]
    plain = run_cli("ingest", str(notes), "--session", "again", check=True)
    assert "rejected marker, line 3: no text after the marker: [MEMORY:pitfall]" in plain.stderr


def test_unreadable_lines_exit_1_after_ingesting_everything_else(run_cli, tmp_path, db_path):
    path = tmp_path / "t.jsonl"
    path.write_text(assistant_line("s", "MEMORY:fix:kept") + "\n{broken\n")
    result = run_cli("ingest", str(path))
    assert result.returncode == 1
    assert "unreadable line 2: not JSON" in result.stderr and "Traceback" not in result.stderr
    with open_store(db_path) as store:
        assert store.sessions.activities("s")[0].kind == "assistant"


def test_bad_input_is_a_message_not_a_traceback(run_cli, tmp_path):
    missing = run_cli("ingest", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 4 and "no such file" in missing.stderr
    binary = tmp_path / "blob"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    refused = run_cli("ingest", str(binary))
    assert refused.returncode == 2 and "looks binary" in refused.stderr and "Traceback" not in refused.stderr
    assert run_cli("ingest", str(binary), "--tee").returncode == 2


@needs_shared
def test_stdin_with_tee_is_copied_byte_for_byte_and_ingested(run_cli, db_path):
    data = CLAUDE_2_1.read_bytes() + b"\xff\xfe partial last line without newline"
    result = run_cli("ingest", "-", "--tee", input=data)
    assert result.stdout == data
    assert result.returncode == 0
    with open_store(db_path) as store:
        assert len(store.sessions.activities("c64cc478-3430-40fe-8e9c-4ee9986e9754")) == 39  # 37 records, 2 candidates


def test_tee_keeps_the_pipe_flowing_when_ingest_fails(run_cli):
    data = b"\x00binary\n" * 1000
    result = run_cli("ingest", "-", "--tee", input=data)
    assert result.returncode == 2 and result.stdout == data


def test_tee_flushes_each_line_as_it_arrives(db_path, tmp_path):
    env = {**os.environ, "MEMDECK_DB": str(db_path)}
    proc = subprocess.Popen([*memdeck_command(), "ingest", "-", "--tee"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        line = (json.dumps({"type": "system", "subtype": "init", "session_id": "live"}) + "\n").encode()
        proc.stdin.write(line)
        proc.stdin.flush()
        assert proc.stdout.readline() == line  # arrives while stdin is still open
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0


def test_follow_picks_up_lines_appended_while_it_runs(db_path, tmp_path):
    live = tmp_path / "live.jsonl"
    live.write_text(assistant_line("f", "started", 0) + "\n")
    env = {**os.environ, "MEMDECK_DB": str(db_path)}
    proc = subprocess.Popen([*memdeck_command(), "ingest", str(live), "--follow", "--idle-exit", "30"],
                            stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        with open_store(db_path) as store:
            _wait_for(lambda: _count(store, "f") >= 1)
            with live.open("a") as handle:
                handle.write(assistant_line("f", "MEMORY:fix:appended while following", 1) + "\n")
            _wait_for(lambda: _count(store, "f") >= 4)
            kinds = [a.kind for a in store.sessions.activities("f")]
        assert kinds == ["assistant", "assistant", "marker", "memory_created"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert b"ingested 2 lines" in err


def test_follow_stops_on_its_own_after_the_idle_time(run_cli, tmp_path):
    live = tmp_path / "live.jsonl"
    live.write_text(assistant_line("g", "hi") + "\n")
    result = run_cli("ingest", str(live), "--follow", "--idle-exit", "0.5", check=True)
    assert "ingested 1 lines" in result.stderr


@needs_shared
def test_two_ingest_processes_on_one_store_lose_nothing(db_path, tmp_path):
    env = {**os.environ, "MEMDECK_DB": str(db_path)}
    Store.open(db_path, project="demo", config=Config.defaults()).close()
    # the same big transcript twice, at once, plus a different one: each line once, nothing lost
    commands = [[*memdeck_command(), "ingest", str(CLAUDE_1_0_98)], [*memdeck_command(), "ingest", str(CLAUDE_1_0_98)],
                [*memdeck_command(), "ingest", str(SPRINT_79)]]
    procs = [subprocess.Popen(c, stderr=subprocess.PIPE, env=env, cwd=tmp_path) for c in commands]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    with open_store(db_path) as store:
        log = store.sessions.activities("fe5e1c67-53e7-4862-81ae-d0e013e3270b")
        assert len(log) == 441 and [a.seq for a in log] == list(range(441))
        assert len({a.detail["line"] for a in log if a.kind == "tool_use"}) == 167
        assert store.db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0] == 3 + 4  # candidates, markers


def _count(store, session_id) -> int:
    try:
        return len(store.sessions.activities(session_id))
    except Exception:
        return 0


def _wait_for(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
