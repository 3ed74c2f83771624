"""The agents' own command lines list memdeck's MCP server after `memdeck connect`: Claude Code
(`claude mcp list`), Codex CLI (`codex mcp list`) and Gemini CLI (`gemini mcp list`), each
installed from npm into a temporary prefix (never into the clone). Each test skips, saying why,
when npm or the registry cannot be reached."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.agent_cli_support import installed
from tests.cli_support import memdeck_command

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def npm_prefix(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("npm")


@pytest.fixture
def scratch(tmp_path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "payments-api"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "MEMDECK_DB": str(tmp_path / "m.db"),
           "CLAUDE_CONFIG_DIR": "", "NO_COLOR": "1", "CI": "1"}
    env.pop("CLAUDE_CONFIG_DIR")
    return project, env


def run(argv, project: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=project, env=env, capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL)


def connect(project: Path, env: dict[str, str], *args: str) -> None:
    done = run([*memdeck_command(), "connect", *args], project, env)
    assert done.returncode == 0, done.stderr


def test_claude_mcp_list_shows_memdeck(npm_prefix, scratch):
    claude = installed(npm_prefix, "claude")
    project, env = scratch
    connect(project, env, "claude-code")
    listed = run([claude, "mcp", "list"], project, env)
    assert f"memdeck: {memdeck_command()[0]}" in listed.stdout, listed.stdout + listed.stderr


def test_codex_mcp_list_shows_memdeck_in_both_scopes(npm_prefix, scratch):
    codex = installed(npm_prefix, "codex")
    project, env = scratch
    connect(project, env, "codex", "--scope", "user")
    listed = json.loads(run([codex, "mcp", "list", "--json"], project, env).stdout)
    assert [(s["name"], s["transport"]["command"], s["enabled"]) for s in listed] == [
        ("memdeck", memdeck_command()[0], True)]
    # A project's .codex/config.toml counts once Codex trusts the project.
    (Path(env["CODEX_HOME"]) / "config.toml").unlink()
    (Path(env["CODEX_HOME"]) / "config.toml").write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    connect(project, env, "codex")
    listed = json.loads(run([codex, "mcp", "list", "--json"], project, env).stdout)
    assert [s["transport"]["args"][-1] for s in listed if s["name"] == "memdeck"] == ["mcp"]


def test_gemini_mcp_list_shows_memdeck(npm_prefix, scratch):
    gemini = installed(npm_prefix, "gemini")
    project, env = scratch
    connect(project, env, "gemini")
    listed = run([gemini, "mcp", "list"], project, env)
    # Listed, and disabled until the user trusts the folder (Gemini CLI's rule for project servers).
    assert f"memdeck: {memdeck_command()[0]}" in listed.stdout + listed.stderr, listed.stdout + listed.stderr


def test_gemini_runs_memdecks_hooks_and_reads_their_answers(npm_prefix, scratch, tmp_path):
    """A real `gemini -p` run: SessionStart and BeforeAgent run memdeck's hooks, whose answers
    Gemini CLI takes (it goes on to call the model, which cannot be reached here: the test stops
    it once both hooks have run)."""
    import time

    from store import Config, Store

    gemini = installed(npm_prefix, "gemini")
    project, env = scratch
    db = env["MEMDECK_DB"]
    with Store.open(db, project="payments-api", config=Config.defaults()) as store:
        # Below the standing rules' bar (`injection.session_start`), so only the prompt brings it.
        memory = store.add("Payments go through the ledger service, never straight to the DB", type="constraint",
                           confidence=0.45).memory
    connect(project, env, "gemini")
    home = Path(env["HOME"])
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    env = {**env, "GEMINI_API_KEY": "not-a-key", "MEMDECK_PROJECT": "payments-api"}
    child = subprocess.Popen([str(gemini), "-p", "move a payment to the ledger"], cwd=project, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    injected: list = []
    try:
        ends = time.monotonic() + 120
        while time.monotonic() < ends and len(injected) < 2 and child.poll() is None:
            time.sleep(0.5)
            with Store.open(db, project="payments-api", config=Config.defaults()) as store:
                sessions = [s for s in store.sessions.recent() if s.meta.get("agent") == "gemini"]
                injected = [a for s in sessions for a in store.sessions.activities(s.id) if a.kind == "injected"]
    finally:
        child.kill()
        stderr = child.communicate()[1]
    assert len(injected) == 2, stderr[-3000:]
    # The session start had no always-on memory to give; the prompt's hook gave the ledger rule.
    assert injected[0].detail["ids"] == [] and injected[1].detail["ids"] == [memory.id]
    assert "memdeck hook:" not in stderr
