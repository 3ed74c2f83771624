"""The command line stays light: `memdeck prime` runs at every agent session start, so no command
but the workbench imports Textual, no command but `memdeck mcp` imports the MCP SDK, and `prime`
leaves rapidfuzz and PyYAML unloaded when there is no config file to read."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, sys
from tui.cli.main import main
code = main(sys.argv[1:])
heavy = [m for m in ("textual", "rapidfuzz", "yaml", "mcp", "pydantic", "anyio") if m in sys.modules]
print(json.dumps({"code": code, "loaded": heavy}), file=sys.stderr)
"""


def loaded_by(db_path, tmp_path, *args: str) -> list[str]:
    env = {**os.environ, "MEMDECK_DB": str(db_path)}
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60)
    report = json.loads(result.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, result.stderr
    return report["loaded"]


LIGHT_COMMANDS = [("list",), ("search", "retry"), ("stats",), ("projects",), ("prime", "--task", "retry backoff"),
                  ("inbox",), ("config",), ("mcp", "install", "--dry-run"), ("hook", "install", "--dry-run")]


@pytest.mark.parametrize("args", LIGHT_COMMANDS)
def test_no_command_but_the_workbench_imports_textual(run_cli, db_path, tmp_path, args):
    run_cli("add", "Retry backoff must cap at 60 s", "--type", "fix", check=True)
    assert "textual" not in loaded_by(db_path, tmp_path, *args)


@pytest.mark.parametrize("args", LIGHT_COMMANDS)
def test_no_command_but_mcp_imports_the_mcp_sdk(run_cli, db_path, tmp_path, args):
    run_cli("add", "Retry backoff must cap at 60 s", "--type", "fix", check=True)
    assert {"mcp", "pydantic", "anyio"}.isdisjoint(loaded_by(db_path, tmp_path, *args))


def test_prime_without_a_config_file_loads_neither_rapidfuzz_nor_yaml(run_cli, db_path, tmp_path):
    run_cli("add", "Retry backoff must cap at 60 s", "--type", "fix", check=True)
    assert loaded_by(db_path, tmp_path, "prime", "--task", "retry backoff") == []
