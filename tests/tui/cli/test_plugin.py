"""The repository is also a Claude Code plugin and its marketplace: `.claude-plugin/plugin.json`
(with the MCP server), `hooks/hooks.json` and `.claude-plugin/marketplace.json`, each running
`scripts/memdeck-plugin`, which finds the installed memdeck or says in one line what to do.
`claude plugin validate` passes on it, and a Claude Code that installs it lists the server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.agent_cli_support import installed
from tests.cli_support import memdeck_command
from tui.cli.claude_setup import HOOKS
from tests.data_support import ROOT

LAUNCHER = ROOT / "scripts" / "memdeck-plugin"


def test_the_manifests_name_the_launcher_for_every_hook_and_the_server():
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    assert plugin["name"] == "memdeck" and marketplace["plugins"][0]["source"] == "./"
    assert plugin["mcpServers"]["memdeck"] == {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/memdeck-plugin",
                                               "args": ["mcp"]}
    # The same events and matchers as `memdeck hook install` writes.
    assert [(event, groups[0].get("matcher"), groups[0]["hooks"][0]["command"]) for event, groups in hooks.items()] == [
        (event, matcher, f"${{CLAUDE_PLUGIN_ROOT}}/scripts/memdeck-plugin hook {name}") for event, name, matcher in HOOKS]
    assert os.access(LAUNCHER, os.X_OK)


def launch(tmp_path, *args: str, memdeck_bin: str | None, stdin: str = "") -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    # MEMDECK_NO_SERVE: a session start starts no hook server (a process outliving the test).
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "MEMDECK_DB": str(tmp_path / "m.db"), "MEMDECK_NO_SERVE": "1",
           **({"MEMDECK_BIN": memdeck_bin} if memdeck_bin else {})}
    return subprocess.run([str(LAUNCHER), *args], input=stdin, capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)


@pytest.mark.slow
def test_the_launcher_runs_the_installed_memdeck(tmp_path):
    payload = json.dumps({"session_id": "s-1", "cwd": str(tmp_path), "hook_event_name": "SessionStart"})
    result = launch(tmp_path, "hook", "session-start", memdeck_bin=memdeck_command()[0], stdin=payload)
    assert result.returncode == 0 and result.stderr == ""
    assert (tmp_path / "m.db").exists()  # the store was opened: memdeck ran


@pytest.mark.slow
def test_without_memdeck_one_line_says_what_to_do_and_a_hook_does_not_block(tmp_path):
    hook = launch(tmp_path, "hook", "session-start", memdeck_bin=None, stdin="{}")
    assert hook.returncode == 0 and hook.stdout == ""
    assert hook.stderr.count("\n") == 1 and "memdeck is not installed: pipx install memdeck" in hook.stderr
    server = launch(tmp_path, "mcp", memdeck_bin=str(tmp_path / "nowhere" / "memdeck"))
    assert server.returncode == 1 and server.stderr == hook.stderr


@pytest.fixture(scope="module")
def npm_prefix(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("npm")


@pytest.mark.slow
def test_claude_plugin_validate_passes_and_claude_lists_the_plugins_server(npm_prefix, tmp_path):
    claude = installed(npm_prefix, "claude")
    for manifest in (ROOT, ROOT / ".claude-plugin" / "plugin.json"):
        done = subprocess.run([claude, "plugin", "validate", "--strict", str(manifest)], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and "Validation passed" in done.stdout, done.stdout + done.stderr
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    env = {**{k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}, "HOME": str(home),
           "MEMDECK_DB": str(tmp_path / "m.db"), "MEMDECK_BIN": memdeck_command()[0]}
    for args in (["plugin", "marketplace", "add", str(ROOT)], ["plugin", "install", "memdeck@memdeck"]):
        done = subprocess.run([claude, *args], capture_output=True, text=True, env=env, cwd=project, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run([claude, "mcp", "list"], capture_output=True, text=True, env=env, cwd=project,
                            timeout=180, stdin=subprocess.DEVNULL)
    line = next(line for line in listed.stdout.splitlines() if line.startswith("plugin:memdeck:memdeck:"))
    assert "scripts/memdeck-plugin mcp" in line and "Connected" in line, listed.stdout
