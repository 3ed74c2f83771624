"""The Claude Code hooks end to end, fed the JSON Claude Code sends on stdin."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from store import Config, Store
from tests.cli_support import memdeck_command
from tests.data_support import ROOT, needs_shared, worked_on
from tests.transcript_support import CLAUDE_2_1, OWN_TRANSCRIPT, assistant_line, hook_input

pytestmark = pytest.mark.both_backends

OWN_SESSION = "c3d2e1f0-fail-then-pass"  # the session of the project's own transcript


def test_session_start_runs_decay_then_prints_the_memories_and_records_the_injection(run_cli, db_path, tmp_path):
    # The hook runs on the real clock, so the memories are made on it too.
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        critical = store.add("Payments go through the ledger service, never straight to the DB",
                             type="constraint", confidence=0.95).memory
        stale = store.add("The old cache layer needs a manual flush", type="pattern", confidence=0.5,
                          created_at=store.now() - 400 * 86400).memory
        worked_on(store, store.now() - 60 * 86400, 60)  # decay counts the days the project was worked on
    result = run_cli("hook", "session-start", "--task", "payments ledger",
                     input=hook_input("SessionStart", "sess-1", tmp_path / "t.jsonl", tmp_path, source="startup"))
    assert result.returncode == 0, result.stderr
    assert "Payments go through the ledger service" in result.stdout
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert [e.kind for e in store.events(stale.id)][-1] == "decayed"
        assert store.get(critical.id).use_count == 1
        injected = store.sessions.activities("sess-1")
        assert [a.kind for a in injected] == ["injected"] and injected[0].detail["ids"] == [critical.id]


def test_user_prompt_submit_injects_the_prompts_memories_once_and_nothing_when_nothing_is_about_it(
        run_cli, db_path, tmp_path):
    """Claude Code's UserPromptSubmit payload (session_id, transcript_path, cwd, hook_event_name,
    prompt): the prompt is the task; the memories about it go in within the prompt budget, are
    used once, and are not given to the same session again; an unrelated prompt gets nothing."""
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        retry = store.add("Webhook deliveries retry three times with exponential backoff; the retry timeout "
                          "is 30 seconds per webhook delivery.", type="pattern").memory
        for text in ("Invoices are numbered per tenant and year.",
                     "The PDF renderer needs the fonts folder mounted.",
                     "Dark mode follows the operating system's setting.",
                     "Release notes are written in the changelog by hand."):
            store.add(text, type="convention")
    # Exactly the fields Claude Code sends a UserPromptSubmit hook.
    payload = json.dumps({"session_id": "sess-p", "transcript_path": str(tmp_path / "t.jsonl"),
                          "cwd": str(tmp_path), "permission_mode": "default",
                          "hook_event_name": "UserPromptSubmit",
                          "prompt": "Why do webhook deliveries time out after a retry?"})
    first = run_cli("hook", "user-prompt-submit", input=payload)
    assert first.returncode == 0, first.stderr
    assert "Webhook deliveries retry three times" in first.stdout and "Invoices" not in first.stdout
    tokens = int(first.stdout.split("~", 1)[1].split(" tokens", 1)[0])
    assert 0 < tokens <= 600  # injection.prompt_budget
    again = run_cli("hook", "user-prompt-submit", input=payload)
    assert again.returncode == 0 and again.stdout == ""  # the session has it already
    unrelated = payload.replace("Why do webhook deliveries time out after a retry?",
                                "Add bluetooth pairing for android tablets")
    assert run_cli("hook", "user-prompt-submit", input=unrelated.replace("sess-p", "sess-q")).stdout == ""
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert store.get(retry.id).use_count == 1
        injected = [a for a in store.sessions.activities("sess-p") if a.kind == "injected"]
        assert len(injected) == 1 and retry.id in injected[0].detail["ids"]
    no_prompt = run_cli("hook", "user-prompt-submit", input=payload.replace('"prompt"', '"other"'))
    assert no_prompt.returncode == 0 and no_prompt.stderr.startswith("memdeck hook: ") and "no prompt" in no_prompt.stderr


def test_session_start_without_a_task_gives_only_always_on_memories_and_counts_no_use(run_cli, db_path, tmp_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        rule = store.add("Never commit generated protobuf files", type="convention", confidence=0.95).memory
        critical = store.add("Payments go through the ledger service, never straight to the DB",
                             type="constraint", confidence=0.95).memory
        store.add("The dashboard polls every 30 seconds", type="pattern", confidence=0.95)
        store.add("Invoices are numbered per tenant and year", type="convention", confidence=0.45)
    result = run_cli("hook", "session-start",
                     input=hook_input("SessionStart", "sess-2", tmp_path / "t.jsonl", tmp_path, source="startup"))
    assert result.returncode == 0, result.stderr
    assert "Never commit generated protobuf" in result.stdout and "Payments go through" in result.stdout
    assert "dashboard polls" not in result.stdout and "Invoices" not in result.stdout
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert store.get(rule.id).use_count == 0 and store.get(critical.id).use_count == 0  # not a use
        injected = store.sessions.activities("sess-2")
        assert [a.kind for a in injected] == ["injected"] and set(injected[0].detail["ids"]) == {rule.id, critical.id}


@needs_shared
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
        session = store.sessions.get("c64cc478-3430-40fe-8e9c-4ee9986e9754")
        assert session.hat == "creator" and session.ended_at is not None
        log = store.sessions.activities(session.id)
        assert len(log) == 37 + 3 + 2  # the records, the new line's three entries, two Stop hook candidates
        # The session ends at its transcript's last record, not when the hook happened to run.
        assert session.ended_at == max(a.at for a in log)
        memory = store.get(next(a.memory_id for a in reversed(log) if a.kind == "memory_created"))
        assert (memory.type, memory.hat, memory.session_id) == ("pattern", "creator", session.id)


def test_hooks_never_exit_2_and_say_what_is_wrong(run_cli_process, tmp_path):
    garbage = run_cli_process("hook", "stop", input="not json")
    assert garbage.returncode == 0
    assert garbage.stderr == "memdeck hook: the hook input is not JSON (Expecting value)\n"
    missing = run_cli_process("hook", "stop", input=hook_input("Stop", "s", tmp_path / "gone.jsonl", tmp_path))
    assert missing.returncode == 0 and "no such file" in missing.stderr
    empty = run_cli_process("hook", "session-start", input="")
    assert empty.returncode == 0


@pytest.mark.sqlite_only  # about the store file itself
def test_skill_prints_both_marker_grammars_and_the_types(run_cli, db_path):
    result = run_cli("skill", check=True)
    assert "MEMORY:pattern:" in result.stdout and "[MEMORY:pitfall:billing-api]" in result.stdout
    assert "architecture, dependency, decision" in result.stdout
    assert not db_path.exists()  # printing the skill does not create a store


# -- never block, never hang -------------------------------------------------------------------

def one_failure_line(result, code: int = 1) -> str:
    """A hook's failure: one line on stderr, never exit 2 (which Claude Code reads as "block"):
    exit 1 for trouble with the store, 0 for input that is not Claude Code's (nothing to do)."""
    err = result.stderr.decode() if isinstance(result.stderr, bytes) else result.stderr
    assert result.returncode == code, err
    assert err.count("\n") == 1 and err.startswith("memdeck hook: ") and "Traceback" not in err, err
    return err


def transcript_file(tmp_path, session_id=OWN_SESSION):
    path = tmp_path / "session.jsonl"
    path.write_text(OWN_TRANSCRIPT.read_text() + assistant_line(session_id, "MEMORY:pattern:Tests sit next to the code", 99)
                    + "\n")
    return path


def test_hooks_work_from_a_folder_whose_name_is_not_utf8(run_cli, db_path, tmp_path):
    folder = os.fsencode(tmp_path) + b"/caf\xe9-repo"
    os.mkdir(folder)
    (Path(os.fsdecode(folder)) / ".git").mkdir()
    env = {"MEMDECK_PROJECT": ""}
    start = run_cli("hook", "session-start", input="{}", cwd=folder, env=env)
    assert start.returncode == 0, start.stderr
    payload = hook_input("Stop", OWN_SESSION, transcript_file(tmp_path), os.fsdecode(folder))
    stop = run_cli("hook", "stop", input=payload, cwd=folder, env=env)
    assert stop.returncode == 0, stop.stderr
    with Store.open(db_path, project="x", config=Config.defaults()) as store:
        assert [(p.name, p.root) for p in store.projects()] == [("caf\ufffd-repo", f"{tmp_path}/caf\ufffd-repo")]
        assert store.get(store.sessions.activities(OWN_SESSION)[-1].memory_id).project == "caf\ufffd-repo"


@pytest.mark.sqlite_only  # about the store file itself
def test_a_damaged_store_is_one_line_and_exit_1(run_cli, db_path, tmp_path):
    db_path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    assert "damaged" in one_failure_line(run_cli("hook", "session-start", input="{}"))
    payload = hook_input("Stop", "s1", transcript_file(tmp_path), tmp_path)
    assert "damaged" in one_failure_line(run_cli("hook", "stop", input=payload))


@pytest.mark.sqlite_only  # about the store file itself
@pytest.mark.parametrize("hook", ["session-start", "stop"])
def test_input_that_is_not_claude_codes_json_is_refused_and_creates_nothing(run_cli, db_path, tmp_path, hook):
    for data, message in ((b"not json", "not JSON"), (b"\xff\xfe{}", "not UTF-8"), (b"[1, 2]", "a JSON list"),
                          (b"[" * 100_000, "nested too deeply")):
        assert message in one_failure_line(run_cli("hook", hook, input=data), code=0)
    assert not db_path.exists()


@pytest.mark.sqlite_only  # about the store file itself
def test_stdin_without_end_is_capped_not_read_forever(run_cli, db_path):
    with open("/dev/zero", "rb") as zeros:
        result = subprocess.run([*memdeck_command(), "hook", "session-start"], stdin=zeros, capture_output=True,
                                env={**os.environ, "MEMDECK_DB": str(db_path)}, timeout=120)
    assert "larger than 1024 KiB" in one_failure_line(result, code=0)
    assert not db_path.exists()


@pytest.mark.slow
def test_a_stdin_never_closed_ends_at_the_time_limit_or_at_the_json(db_path, tmp_path):
    env = {**os.environ, "MEMDECK_DB": str(db_path)}
    silent = subprocess.Popen([*memdeck_command(), "hook", "session-start"], stdin=subprocess.PIPE,
                              stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    # The JSON arrives and the pipe stays open: the hook reads the object and gets on with it.
    speaking = subprocess.Popen([*memdeck_command(), "hook", "session-start"], stdin=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    speaking.stdin.write(json.dumps({"session_id": "s-open", "cwd": str(tmp_path)}).encode() + b"\n")
    speaking.stdin.flush()
    try:
        assert silent.wait(timeout=60) == 0
        assert speaking.wait(timeout=60) == 0, speaking.stderr.read()
        assert silent.stderr.read().decode() == ("memdeck hook: the hook input did not end within 5 s "
                                                 "(0 bytes read, no whole JSON object)\n")
    finally:
        for process in (silent, speaking):
            process.stdin.close()
            process.kill()
            process.wait()


@pytest.mark.parametrize("name, content", [
    ("secrets.txt", "AWS_SECRET_ACCESS_KEY=abc\nMEMORY:pattern:forged from any text file\n"),
    ("notes.jsonl", "MEMORY:pattern:forged from text named like a transcript\n"),
    ("other.jsonl", '{"level": "info", "msg": "MEMORY:pattern:a JSON log, not a session"}\n'),
])
@pytest.mark.sqlite_only  # about the store file itself
def test_stop_refuses_a_transcript_path_that_is_not_a_claude_code_transcript(run_cli, db_path, tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    err = one_failure_line(run_cli("hook", "stop", input=hook_input("Stop", "s1", path, tmp_path)), code=0)
    assert "not a Claude Code transcript" in err and "nothing was ingested" in err
    assert not db_path.exists()


@pytest.mark.sqlite_only  # about the store file itself
def test_an_empty_transcript_is_nothing_to_ingest_and_creates_nothing(run_cli, db_path, tmp_path):
    path = tmp_path / "new.jsonl"
    path.write_text("")
    result = run_cli("hook", "stop", input=hook_input("Stop", "s1", path, tmp_path))
    assert result.returncode == 0 and result.stderr == f"memdeck hook: {path} is empty: nothing to ingest\n"
    assert not db_path.exists()


@pytest.mark.sqlite_only  # about the store file itself
def test_stop_refuses_a_device_or_a_folder_as_transcript(run_cli, db_path, tmp_path):
    for target in ("/dev/zero", str(tmp_path)):
        one_failure_line(run_cli("hook", "stop", input=hook_input("Stop", "s1", target, tmp_path)), code=0)
    assert not db_path.exists()


def test_a_bad_option_to_a_hook_is_exit_1_not_2(run_cli_process):
    result = run_cli_process("hook", "stop", "--no-such-option", input="{}")
    assert result.returncode == 1 and "unrecognized arguments" in result.stderr


def test_a_refused_project_name_is_exit_1_for_a_hook(run_cli_process, db_path):
    result = run_cli_process("--project", "a\tb", "hook", "session-start", input="{}")
    assert result.returncode == 1 and "--project" in result.stderr
    assert run_cli_process("--project", "a\tb", "list").returncode == 2


def test_a_session_with_no_session_start_gets_its_critical_memories_once_from_the_prompt_hook(
        run_cli, db_path, tmp_path):
    """Issue 43 item 12, the rule docs/ingest.md states: a critical memory is always-on context,
    given at session start; a session that never had one (the hook not installed, a resumed
    session) gets it once from the prompt hook, whatever the prompt, and never again. A prompt
    nothing is about in a session that had its session start gets nothing."""
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        critical = store.add("Payments go through the ledger service, never straight to the DB",
                             type="constraint", confidence=0.95).memory
        store.add("Invoices are numbered per tenant and year.", type="convention")

    def prompt(session: str, text: str):
        return run_cli("hook", "user-prompt-submit", input=json.dumps(
            {"session_id": session, "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
             "hook_event_name": "UserPromptSubmit", "prompt": text}))

    haiku = "Write a haiku about autumn leaves in Kyoto"
    first = prompt("sess-cold", haiku)
    assert first.returncode == 0 and "Payments go through the ledger service" in first.stdout
    assert "Invoices" not in first.stdout
    assert prompt("sess-cold", haiku).stdout == ""  # once
    started = run_cli("hook", "session-start", input=hook_input("SessionStart", "sess-warm", tmp_path / "t.jsonl",
                                                                 tmp_path, source="startup"))
    assert "Payments go through the ledger service" in started.stdout
    assert prompt("sess-warm", haiku).stdout == ""
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert critical.id in store.sessions.activities("sess-cold")[0].detail["ids"]
    page = " ".join((ROOT / "docs" / "ingest.md").read_text(encoding="utf-8").split())
    assert "never had a session start" in page and "gets them once from its first prompt" in page
