"""`memdeck mcp install` and `memdeck hook install`: Claude Code's settings written with the
absolute path of this memdeck, merged into what the files already hold, refused unchanged when a
file cannot be read, and hooks that run with a PATH that does not hold memdeck."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.cli_support import memdeck_command
from tests.transcript_support import assistant_line
from tests.data_support import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "payments-api"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


@pytest.fixture
def home(tmp_path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def install(run_cli, project, home):
    def run(*args, check=True, cwd=None):
        env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": ""}
        return run_cli(*args, check=check, cwd=cwd or project / "src", env=env)

    return run


def test_mcp_install_writes_the_project_entry_with_the_absolute_executable(install, project, db_path):
    result = install("mcp", "install")
    config = json.loads((project / ".mcp.json").read_text())
    entry = config["mcpServers"]["memdeck"]
    assert entry["type"] == "stdio"
    assert Path(entry["command"]).is_absolute() and os.access(entry["command"], os.X_OK)
    # This memdeck, with the store it was told to use ($MEMDECK_DB here).
    assert [entry["command"], *entry["args"]] == [*memdeck_command(), "--db", str(db_path), "mcp"]
    assert f"claude mcp add --transport stdio --scope project memdeck -- {shlex.quote(entry['command'])}" in result.stderr


def test_mcp_install_keeps_other_servers_and_updates_its_own_entry(install, project):
    (project / ".mcp.json").write_text(json.dumps({
        "mcpServers": {"github": {"command": "npx", "args": ["-y", "gh-mcp"]},
                       "memdeck": {"command": "memdeck", "args": ["mcp"], "env": {"MEMDECK_DB": "/data/team.db"}}},
        "note": "kept"}))
    install("mcp", "install")
    install("mcp", "install")
    config = json.loads((project / ".mcp.json").read_text())
    assert config["note"] == "kept" and list(config["mcpServers"]) == ["github", "memdeck"]
    assert config["mcpServers"]["github"] == {"command": "npx", "args": ["-y", "gh-mcp"]}
    assert config["mcpServers"]["memdeck"]["env"] == {}  # memdeck did not write it: dropped, and said so
    assert Path(config["mcpServers"]["memdeck"]["command"]).is_absolute()


def test_mcp_install_for_the_user_merges_into_claude_json(install, home, db_path):
    claude_json = home / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 12, "projects": {"/x": {"allowedTools": []}}}))
    install("--project", "payments", "mcp", "install", "--scope", "user")
    config = json.loads(claude_json.read_text())
    assert config["numStartups"] == 12 and config["projects"] == {"/x": {"allowedTools": []}}
    # The store and project chosen on the command line go with the entry.
    assert config["mcpServers"]["memdeck"]["args"] == ["--db", str(db_path), "--project", "payments", "mcp"]


def test_install_refuses_a_file_it_cannot_parse_and_leaves_it_as_it_was(install, project):
    broken = '{"mcpServers": {"github": {"command": "npx",}}\n'
    (project / ".mcp.json").write_text(broken)
    result = install("mcp", "install", check=False)
    assert result.returncode == 2
    assert ".mcp.json: not valid JSON (line 1" in result.stderr and "nothing was changed" in result.stderr
    assert (project / ".mcp.json").read_text() == broken
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("[1, 2]")
    result = install("hook", "install", check=False)
    assert result.returncode == 2 and "not an object" in result.stderr
    assert (project / ".claude" / "settings.json").read_text() == "[1, 2]"
    assert [p.name for p in (project / ".claude").iterdir()] == ["settings.json"]  # no temporary left


def test_dry_run_prints_the_file_and_writes_nothing(install, project):
    result = install("hook", "install", "--dry-run")
    assert "SessionStart" in json.loads(result.stdout)["hooks"]
    assert not (project / ".claude").exists()


def test_hook_install_merges_into_settings_and_updates_its_own_hooks(install, project):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [
                {"type": "command", "command": "echo hello"},
                {"type": "command", "command": "memdeck hook session-start --hat creator"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
        }}))
    install("hook", "install", "--hat", "critic")
    install("hook", "install", "--hat", "critic")
    data = json.loads(settings.read_text())
    assert data["permissions"] == {"allow": ["Bash(npm test)"]}
    assert data["hooks"]["PreToolUse"] == [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
    (group,) = data["hooks"]["SessionStart"]
    assert group["matcher"] == "startup" and group["hooks"][0] == {"type": "command", "command": "echo hello"}
    executable = shlex.split(group["hooks"][1]["command"])
    assert Path(executable[0]).is_absolute() and executable[-4:] == ["hook", "session-start", "--hat", "critic"]
    (stop,) = data["hooks"]["Stop"]
    assert shlex.split(stop["hooks"][0]["command"])[-4:] == ["hook", "stop", "--hat", "critic"]


def test_installed_hooks_run_without_memdeck_on_the_path(install, project, home, db_path):
    install("hook", "install", "--scope", "user")
    data = json.loads((home / ".claude" / "settings.json").read_text())
    start = data["hooks"]["SessionStart"][0]
    assert start["matcher"] == "startup|resume|clear|compact"
    payload = json.dumps({"session_id": "s-1", "cwd": str(project), "hook_event_name": "SessionStart",
                          "source": "startup"})
    # MEMDECK_NO_SERVE: the session start starts no hook server (a process outliving the test).
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "MEMDECK_DB": str(db_path), "MEMDECK_NO_SERVE": "1"}
    ran = subprocess.run(start["hooks"][0]["command"], shell=True, input=payload, capture_output=True,
                         text=True, env=env, cwd=home, timeout=120)
    assert ran.returncode == 0, ran.stderr
    transcript = project / "t.jsonl"
    transcript.write_text(assistant_line("s-1", "[MEMORY:pitfall] Installed hooks find memdeck by its path.") + "\n")
    stop = data["hooks"]["Stop"][0]["hooks"][0]["command"]
    ran = subprocess.run(stop, shell=True, text=True, capture_output=True, env=env, cwd=home, timeout=120,
                         input=json.dumps({"session_id": "s-1", "cwd": str(project),
                                           "transcript_path": str(transcript), "hook_event_name": "Stop"}))
    assert ran.returncode == 0, ran.stderr


def test_docs_mcp_shows_every_hook_that_hook_install_writes(install, project):
    install("hook", "install")
    written = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    page = (ROOT / "docs" / "mcp.md").read_text()
    shown = page.split("`memdeck hook install` writes the", 1)[1]
    count, example = shown.split()[0], shown.split("```json", 1)[1].split("```", 1)[0]
    assert set(json.loads(example)["hooks"]) == set(written)
    assert count == {2: "two", 3: "three"}[len(written)]
