"""Sessions that end, sessions split by their id, and `memdeck sessions` / `memdeck log` for
agents and scripts."""

from __future__ import annotations

import pytest

import json
import os
import signal
import subprocess
import time

from store import Config, Store
from store.capture.ingest import IngestOptions, ingest_file
from store.engine.session_log import summaries
from tests.cli_support import memdeck_command
from tests.data_support import DATA

pytestmark = pytest.mark.both_backends

OWN = DATA / "transcripts"
HOOKS = OWN / "hook-blocked.jsonl"
HOOKS_ID = "9c44a1f0-hook-blocked"


def test_a_one_shot_ingest_ends_the_session_at_its_last_record(store):
    ingest_file(store, HOOKS)
    session = store.sessions.get(HOOKS_ID)
    assert session.ended_at is not None and session.ended_at == max(a.at for a in store.sessions.activities(HOOKS_ID))
    assert not summaries(store)[0].live


def test_a_stream_json_result_ends_its_session(store, tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"type": "system", "subtype": "init", "session_id": "sj", "cwd": "/w"},
        {"type": "assistant", "session_id": "sj", "message": {"content": [{"type": "text", "text": "done"}]}},
        {"type": "result", "subtype": "success", "session_id": "sj", "num_turns": 1},
    ]))
    ingest_file(store, path, IngestOptions(format="stream-json"))
    assert store.sessions.get("sj").ended_at is not None


def test_a_session_without_an_end_stops_being_live_after_the_idle_time(store, clock):
    store.sessions.ensure("quiet", started_at=clock.at - 3600)
    store.sessions.append_activity("quiet", "prompt", "hello", at=clock.at - 31 * 60)
    store.sessions.ensure("busy", started_at=clock.at - 3600)
    store.sessions.append_activity("busy", "prompt", "hello", at=clock.at - 60)
    found = {s.session.id: s for s in summaries(store)}
    assert found["busy"].live and found["busy"].ended_at is None
    assert not found["quiet"].live and found["quiet"].ended_at == clock.at - 31 * 60
    store.config = store.config.with_overrides({"sessions.idle_minutes": 60})
    assert {s.session.id: s.live for s in summaries(store)}["quiet"]


def test_lines_with_another_session_id_go_to_their_own_session(store, tmp_path):
    path = tmp_path / "two.jsonl"
    lines = HOOKS.read_text().splitlines()
    other = [line.replace(HOOKS_ID, "second-session") for line in (OWN / "bug-question.jsonl").read_text().replace(
        "5e0a3d88-bug-question", HOOKS_ID).splitlines()]
    path.write_text("\n".join(lines[:9] + other + lines[9:]) + "\n")
    report = ingest_file(store, path)
    assert report.session_id == HOOKS_ID
    first, second = store.sessions.activities(HOOKS_ID), store.sessions.activities("second-session")
    assert [a.seq for a in second] == list(range(len(second))) and len(second) == 14 + 1  # its records and its candidate
    assert {a.detail["line"] for a in first if a.kind != "candidate"}.isdisjoint(range(10, 24))
    assert store.sessions.get("second-session").ended_at is not None
    bug = next(m for m in store.get_many(report.candidates) if m.type == "pitfall")
    assert bug.session_id == "second-session" and bug.file_refs == ("scraper/fetch.py", "tests/test_fetch.py")
    assert ingest_file(store, path).lines == 0  # and again: nothing new in either


def test_a_followed_ingest_keeps_the_session_live_until_it_stops(db_path, tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_text("".join(HOOKS.read_text().splitlines(keepends=True)[:9]))
    env = {**os.environ, "MEMDECK_DB": str(db_path)}
    Store.open(db_path, project="demo", config=Config.defaults()).close()
    follow = subprocess.Popen([*memdeck_command(), "ingest", str(path), "--follow"], env=env, cwd=tmp_path,
                              stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: _session(db_path) is not None and len(_log(db_path)) >= 9)
        assert _session(db_path).ended_at is None
        with path.open("a") as handle:
            handle.write("".join(HOOKS.read_text().splitlines(keepends=True)[9:]))
        _wait_for(lambda: any(a.kind == "note" for a in _log(db_path)))
        assert _session(db_path).ended_at is None
    finally:
        follow.send_signal(signal.SIGINT)
        follow.communicate(timeout=60)
    assert follow.returncode == 0
    session = _session(db_path)
    assert session.ended_at is not None
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:  # the Stop hook's signal closed
        assert any("ruff check" in m.title for m in store.get_many([a.memory_id for a in store.sessions.activities(HOOKS_ID)
                                                                      if a.kind == "candidate"]))


def test_sessions_lists_them_with_their_counts_as_text_and_json(run_cli):
    run_cli("ingest", str(HOOKS), check=True)
    run_cli("ingest", str(OWN / "choices.jsonl"), check=True)
    text = run_cli("sessions", check=True).stdout
    assert text.splitlines()[0].split() == ["session", "started", "ended", "agent", "entries", "markers",
                                            "memories", "candidates", "errors"]
    assert HOOKS_ID in text and "2b9f71c4-choices" in text
    listed = json.loads(run_cli("sessions", "--json", check=True).stdout)
    hooks = next(s for s in listed if s["id"] == HOOKS_ID)
    assert hooks["live"] is False and hooks["ended_at"].startswith("2026-03-02T")
    assert (hooks["activities"], hooks["candidates"], hooks["errors"]) == (23, 3, 1)
    assert run_cli("sessions", "--limit", "0").returncode == 2


def test_log_prints_a_session_by_the_start_of_its_id_of_the_kinds_asked(run_cli):
    run_cli("ingest", str(HOOKS), check=True)
    lines = run_cli("log", "9c44", "--kind", "candidate", "--kind", "prompt", check=True).stdout.splitlines()
    assert [line.split()[2] for line in lines] == ["prompt", "candidate", "candidate", "candidate"]
    assert "Direct pushes to main are not allowed" in lines[1] and "reinforced" in lines[3]
    entries = [json.loads(line) for line in run_cli("log", HOOKS_ID, "--json", check=True).stdout.splitlines()]
    assert [e["seq"] for e in entries] == list(range(23)) and entries[0]["kind"] == "prompt"
    missing = run_cli("log", "nope")
    assert missing.returncode == 4 and "no session with id 'nope'" in missing.stderr
    assert run_cli("log", HOOKS_ID, "--kind", "bogus").returncode == 2


def test_log_follow_prints_new_entries_until_the_session_ends(db_path, tmp_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        store.sessions.ensure("run")
        store.sessions.append_activity("run", "prompt", "first")
    env = {**os.environ, "MEMDECK_DB": str(db_path)}
    follow = subprocess.Popen([*memdeck_command(), "log", "run", "--follow"], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = follow.stdout.readline()  # printed, and now waiting for more
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        store.sessions.append_activity("run", "tool_use", "Bash: make test")
        store.sessions.end("run", None)
    out, err = follow.communicate(timeout=60)
    assert follow.returncode == 0, err
    assert [line.split()[2] for line in [first, *out.splitlines()]] == ["prompt", "tool_use"]


def _session(db_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        try:
            return store.sessions.get(HOOKS_ID)
        except Exception:
            return None


def _log(db_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        return store.sessions.activities(HOOKS_ID)


def _wait_for(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
