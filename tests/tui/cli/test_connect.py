"""`memdeck connect AGENT` and `memdeck connect --list`, run in-process through `main(argv)` on real
files in a scratch project and home: each agent's files hold memdeck's MCP server and hooks with
this memdeck's absolute path, the rest of each file stays byte for byte, a file that cannot be
parsed is refused in one line with nothing written, and connecting twice changes nothing."""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path

import pytest

from tests.cli_support import memdeck_command
from tui.cli.main import main


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "payments-api"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("MEMDECK_DB", str(tmp_path / "memdeck.db"))
    monkeypatch.chdir(root / "src")
    return root


@pytest.fixture
def home(project) -> Path:
    return Path(os.environ["HOME"])


def connect(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["connect", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


MEMDECK = memdeck_command()[0]


def test_each_agent_gets_the_mcp_server_and_hooks_running_this_memdeck(project, capsys, tmp_path):
    for agent in ("claude-code", "codex", "gemini", "cursor"):
        assert connect(capsys, agent)[0] == 0
    db = str(tmp_path / "memdeck.db")
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]["memdeck"]
    assert codex == {"command": MEMDECK, "args": ["--db", db, "mcp"]}
    codex_hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    assert list(codex_hooks) == ["SessionStart", "UserPromptSubmit", "Stop"]
    assert shlex.split(codex_hooks["Stop"][0]["hooks"][0]["command"]) == [
        MEMDECK, "--db", db, "hook", "stop", "--agent", "codex"]
    gemini = json.loads((project / ".gemini" / "settings.json").read_text())
    assert gemini["mcpServers"]["memdeck"] == {"command": MEMDECK, "args": ["--db", db, "mcp"]}
    assert list(gemini["hooks"]) == ["SessionStart", "BeforeAgent", "AfterAgent"]
    assert gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["command"].endswith("hook user-prompt-submit --agent gemini")
    cursor_mcp = json.loads((project / ".cursor" / "mcp.json").read_text())
    assert cursor_mcp["mcpServers"]["memdeck"]["command"] == MEMDECK
    cursor_hooks = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert cursor_hooks["version"] == 1
    assert list(cursor_hooks["hooks"]) == ["sessionStart", "beforeSubmitPrompt", "stop"]
    assert cursor_hooks["hooks"]["sessionStart"] == [
        {"command": f"{MEMDECK} --db {db} hook session-start --agent cursor"}]
    claude = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memdeck"]
    assert claude["command"] == MEMDECK and os.access(claude["command"], os.X_OK)
    assert "UserPromptSubmit" in json.loads((project / ".claude" / "settings.json").read_text())["hooks"]


def test_connecting_twice_changes_nothing(project, capsys):
    for agent in ("codex", "gemini", "cursor", "claude-code"):
        connect(capsys, agent)
    files = sorted(p for p in project.rglob("*") if p.is_file())
    before = {p: p.read_bytes() for p in files}
    for agent in ("codex", "gemini", "cursor", "claude-code"):
        assert connect(capsys, agent)[0] == 0
    assert sorted(p for p in project.rglob("*") if p.is_file()) == files
    assert {p: p.read_bytes() for p in files} == before


def test_codex_config_keeps_every_other_byte_and_the_earlier_memdeck_table_is_replaced(project, capsys):
    config = project / ".codex" / "config.toml"
    config.parent.mkdir()
    head = ('# my Codex settings\nmodel = "gpt-5-codex"   # the default\napproval_policy = "on-request"\n\n'
            '[mcp_servers.github]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-github"]\n\n')
    tail = '[profiles.fast]\nmodel = "gpt-5-mini"\n'
    config.write_text(head + '[mcp_servers.memdeck]\ncommand = "memdeck"\nargs = ["mcp"]\n'
                      '[mcp_servers.memdeck.env]\nPYTHONPATH = "/tmp/evil"\n\n' + tail)
    assert connect(capsys, "codex")[0] == 0
    text = config.read_text()
    assert text.startswith(head) and text.endswith(tail)
    data = tomllib.loads(text)
    assert data["mcp_servers"]["memdeck"] == {"command": MEMDECK, "args": ["--db", os.environ["MEMDECK_DB"], "mcp"]}
    assert data["profiles"] == {"fast": {"model": "gpt-5-mini"}} and "PYTHONPATH" not in text


def test_a_json_file_keeps_its_own_layout_outside_memdecks_members(project, capsys):
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    original = ('{\n    "theme": "Dracula",\n    "mcpServers": {\n'
                '        "github": {"command": "npx", "args": ["-y", "gh-mcp"]}\n    },\n'
                '    "general": {"vimMode": true}\n}\n')
    settings.write_text(original)
    assert connect(capsys, "gemini")[0] == 0
    text = settings.read_text()
    # Untouched members keep their bytes: the compact one-line entries were not re-indented.
    assert text.startswith('{\n    "theme": "Dracula",\n    "mcpServers": {\n'
                           '        "github": {"command": "npx", "args": ["-y", "gh-mcp"]},\n')
    assert '    "general": {"vimMode": true},\n' in text
    data = json.loads(text)
    assert data["theme"] == "Dracula" and data["general"] == {"vimMode": True}
    assert list(data["mcpServers"]) == ["github", "memdeck"] and "AfterAgent" in data["hooks"]


@pytest.mark.parametrize("agent, name, content, problem", [
    ("codex", ".codex/config.toml", 'model = "gpt-5"\n[mcp_servers\n', "not valid TOML"),
    ("codex", ".codex/config.toml", 'mcp_servers = { memdeck = { command = "x" } }\n', "a form memdeck does not edit"),
    ("gemini", ".gemini/settings.json", '{\n  // my settings\n  "theme": "Dracula"\n}\n', "not valid JSON"),
    ("cursor", ".cursor/hooks.json", "[1, 2]", "not an object"),
    ("cursor", ".cursor/mcp.json", '{"mcpServers": {"a": 1}, "mcpServers": {}}', "twice"),
])
def test_a_file_that_cannot_be_parsed_is_refused_in_one_line_and_nothing_is_written(
        project, capsys, agent, name, content, problem):
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    code, out, err = connect(capsys, agent)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and problem in err and "nothing was changed" in err
    assert path.read_text() == content
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no other file, no temporary


def test_cursor_keeps_other_hooks_and_updates_its_own_in_place(project, capsys):
    hooks = project / ".cursor" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text(json.dumps({"version": 1, "hooks": {
        "afterFileEdit": [{"command": "./format.sh"}],
        "stop": [{"command": "./notify.sh"}, {"command": "memdeck hook stop --agent cursor", "loop_limit": 3}]}}))
    assert connect(capsys, "cursor", "--hat", "critic")[0] == 0
    data = json.loads(hooks.read_text())
    assert data["hooks"]["afterFileEdit"] == [{"command": "./format.sh"}]
    assert data["hooks"]["stop"][0] == {"command": "./notify.sh"}
    assert data["hooks"]["stop"][1]["loop_limit"] == 3 and len(data["hooks"]["stop"]) == 2
    assert shlex.split(data["hooks"]["stop"][1]["command"])[-5:] == ["stop", "--agent", "cursor", "--hat", "critic"]


def test_user_scope_writes_into_the_home_folders(project, home, capsys):
    for agent in ("codex", "gemini", "cursor"):
        assert connect(capsys, agent, "--scope", "user")[0] == 0
    assert "memdeck" in tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]
    assert (home / ".codex" / "hooks.json").is_file() and (home / ".gemini" / "settings.json").is_file()
    assert (home / ".cursor" / "mcp.json").is_file() and (home / ".cursor" / "hooks.json").is_file()
    assert not (project / ".codex").exists()


def test_dry_run_prints_and_writes_nothing(project, capsys):
    code, out, _ = connect(capsys, "codex", "--dry-run")
    assert code == 0 and "[mcp_servers.memdeck]" in out and '"Stop"' in out
    assert not (project / ".codex").exists()


def test_list_says_what_is_connected_where_and_whether_it_still_runs_this_memdeck(project, capsys):
    connect(capsys, "codex")
    connect(capsys, "gemini", "--scope", "user")
    code, out, _ = connect(capsys, "--list", "--json")
    rows = {(r["agent"], r["scope"], r["what"]): r for r in json.loads(out)}
    assert code == 0 and len(rows) == 16
    assert rows[("codex", "project", "mcp")]["state"] == "connected: runs this memdeck"
    assert rows[("gemini", "user", "hooks")]["state"] == "connected: runs this memdeck"
    assert rows[("cursor", "project", "mcp")]["state"] == "not connected"
    # A memdeck that moved: the file still names the old one.
    hooks = project / ".codex" / "hooks.json"
    hooks.write_text(hooks.read_text().replace(MEMDECK, "/opt/gone/bin/memdeck"))
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text("{not json")
    code, out, _ = connect(capsys, "--list")
    lines = {tuple(line.split()[:3]): line for line in out.splitlines()[1:]}
    assert "stale: runs /opt/gone/bin/memdeck, which is missing" in lines[("codex", "project", "hooks")]
    assert "unreadable: not valid JSON" in lines[("cursor", "project", "mcp")]


def test_connect_without_an_agent_says_which_it_takes(project, capsys):
    code, _, err = connect(capsys)
    assert code == 2 and "claude-code, codex, gemini, cursor" in err
