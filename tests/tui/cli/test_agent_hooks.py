"""The hooks as Codex CLI, Gemini CLI and Cursor run them: the real `memdeck` process, fed each
agent's own payload (tests/data/agents/), answers in that agent's shape within 10,000
characters, captures the turn at the agent's stop, and on any input exits 0 with at most one line
on stderr (the never-block rule)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import Config, Store
from store.browse.search import MemoryFilter, list_memories
from tests.data_support import DATA
from tui.cli.agents.common import MAX_CONTEXT, capped

pytestmark = pytest.mark.slow

AGENTS = DATA / "agents"


def payload(name: str, cwd: Path, transcript: Path | str = "") -> str:
    text = (AGENTS / name).read_text()
    return text.replace("@CWD@", str(cwd)).replace("@TRANSCRIPT@", str(transcript))


@pytest.fixture
def rules(db_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        store.add("Payments go through the ledger service, never straight to the DB", type="constraint",
                  confidence=0.95)
        store.add("The payment retry loop backs off exponentially from 1 s", type="pattern", confidence=0.9)


@pytest.mark.parametrize("agent, sample, event", [
    ("codex", "codex/session-start.json", "SessionStart"),
    ("gemini", "gemini/session-start.json", "SessionStart"),
])
def test_session_start_answers_with_additional_context(run_cli, rules, tmp_path, agent, sample, event):
    result = run_cli("hook", "session-start", "--agent", agent, input=payload(sample, tmp_path))
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == event
    assert "Payments go through the ledger service" in answer["additionalContext"]


@pytest.mark.parametrize("agent, sample, event", [
    ("codex", "codex/user-prompt-submit.json", "UserPromptSubmit"),
    ("gemini", "gemini/before-agent.json", "BeforeAgent"),
])
def test_the_prompt_hook_adds_the_prompts_memories(run_cli, rules, tmp_path, agent, sample, event):
    result = run_cli("hook", "user-prompt-submit", "--agent", agent, input=payload(sample, tmp_path))
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == event and "retry loop backs off" in answer["additionalContext"]


def test_cursor_gets_context_at_session_start_and_an_allow_at_the_prompt(run_cli, rules, tmp_path):
    start = run_cli("hook", "session-start", "--agent", "cursor", input=payload("cursor/session-start.json", tmp_path))
    assert start.returncode == 0, start.stderr
    assert "Payments go through the ledger" in json.loads(start.stdout)["additional_context"]
    prompt = run_cli("hook", "user-prompt-submit", "--agent", "cursor",
                     input=payload("cursor/before-submit-prompt.json", tmp_path))
    assert prompt.returncode == 0 and json.loads(prompt.stdout) == {"continue": True}
    stop = run_cli("hook", "stop", "--agent", "cursor", input=payload("cursor/stop.json", tmp_path))
    assert stop.returncode == 0 and json.loads(stop.stdout) == {}
    assert stop.stderr.count("\n") == 1 and "nothing to ingest" in stop.stderr


def test_gemini_prints_json_even_when_there_is_nothing_to_add(run_cli, tmp_path):
    result = run_cli("hook", "session-start", "--agent", "gemini", input=payload("gemini/session-start.json", tmp_path))
    assert result.returncode == 0 and json.loads(result.stdout) == {}


def test_codex_stop_reads_its_session_file_and_keeps_the_marked_lesson(run_cli, db_path, tmp_path):
    rollout = tmp_path / "rollout-2026-11-20T09-14-02-019a7c2e.jsonl"
    rollout.write_text(payload("codex/rollout.jsonl", tmp_path))
    first = run_cli("hook", "stop", "--agent", "codex", input=payload("codex/stop.json", tmp_path, rollout))
    assert first.returncode == 0, first.stderr
    assert first.stdout == "" and "markers: 1" in first.stderr
    again = run_cli("hook", "stop", "--agent", "codex", input=payload("codex/stop.json", tmp_path, rollout))
    assert again.returncode == 0 and "nothing new" in again.stderr
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        (memory,) = [m for m in list_memories(store, MemoryFilter(statuses=()), limit=None) if "backoff must cap at 60 s" in m.content]
        assert memory.type == "pitfall" and memory.session_id == "019a7c2e-5d1b-7f30-9b64-2f1c0e8d4a11"
        kinds = [a.kind for a in store.sessions.activities(memory.session_id)]
        assert "prompt" in kinds and "tool_use" in kinds  # the typed prompt and the shell call, read


def test_codex_stop_without_a_session_file_keeps_the_last_reply(run_cli, db_path, tmp_path):
    data = json.loads(payload("codex/stop.json", tmp_path))
    data["transcript_path"] = None
    result = run_cli("hook", "stop", "--agent", "codex", input=json.dumps(data))
    assert result.returncode == 0 and "markers: 1" in result.stderr


def test_gemini_after_agent_keeps_the_marked_lesson(run_cli, db_path, tmp_path):
    result = run_cli("hook", "stop", "--agent", "gemini", input=payload("gemini/after-agent.json", tmp_path))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {} and "markers: 1" in result.stderr
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert any("backoff must cap at 60 s" in m.content for m in list_memories(store, MemoryFilter(statuses=()), limit=None))


@pytest.mark.parametrize("agent, quiet", [("codex", ""), ("gemini", {}), ("cursor", {})])
@pytest.mark.parametrize("hook", ["session-start", "user-prompt-submit", "stop"])
@pytest.mark.parametrize("stdin", [b"not json", b"[1, 2]", b"\xff\xfe", b'{"prompt": 7, "transcript_path": "/etc/passwd"}'])
def test_malformed_input_never_blocks_exit_0_and_one_line(run_cli, db_path, agent, quiet, hook, stdin):
    result = run_cli("hook", hook, "--agent", agent, input=stdin)
    assert result.returncode == 0
    # An object with nothing of a session start in it is still a session start: nothing said.
    said = 0 if hook == "session-start" and stdin.startswith(b"{") else 1
    assert result.stderr.count(b"\n") == said and result.stderr.startswith(b"memdeck hook: " if said else b"")
    if agent == "cursor" and hook == "user-prompt-submit":
        quiet = {"continue": True}
    assert (json.loads(result.stdout) if quiet != "" else result.stdout.decode()) == quiet


def test_a_bad_option_is_exit_0_for_the_other_agents_and_1_for_claude_code(run_cli):
    assert run_cli("hook", "stop", "--agent", "gemini", "--bogus").returncode == 0
    assert run_cli("hook", "stop", "--bogus").returncode == 1


def test_context_is_cut_to_10000_characters_at_a_line(run_cli, db_path, tmp_path):
    assert capped("x" * 50) == "x" * 50
    long = "\n".join(f"line {i} " + "y" * 90 for i in range(300))
    cut = capped(long)
    assert len(cut) <= MAX_CONTEXT and cut.endswith("[memdeck: cut at 10,000 characters]")
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        import random

        rng = random.Random(4)  # distinct memories, so none is taken for a repeat of another
        words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7)) for _ in range(5000)]
        for i in range(80):
            store.add(f"Rule {i}: " + " ".join(rng.sample(words, 60)), type="constraint", confidence=0.95)
    result = run_cli("hook", "session-start", "--agent", "codex", "--budget", "100000",
                     input=payload("codex/session-start.json", tmp_path))
    assert result.returncode == 0, result.stderr
    assert 2000 < len(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]) <= MAX_CONTEXT
