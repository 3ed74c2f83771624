"""The command line stays light: `memdeck prime` runs at every agent session start, so no command
but the workbench imports Textual, no command but `memdeck mcp` imports the MCP SDK, and `prime`
leaves rapidfuzz and PyYAML unloaded when there is no config file to read, and numpy unloaded
when there are no vectors to compare; psycopg (the PostgreSQL driver, which Peewee would import
whenever it is installed) is left unloaded on a SQLite store."""

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
heavy = [m for m in ("textual", "rapidfuzz", "yaml", "mcp", "pydantic", "anyio", "psycopg") if m in sys.modules]
print(json.dumps({"code": code, "loaded": heavy, "numpy": "numpy" in sys.modules}), file=sys.stderr)
"""


def probe(db_path, tmp_path, *args: str, env: dict | None = None) -> dict:
    env = {**os.environ, "MEMDECK_DB": str(db_path), **(env or {})}
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60)
    report = json.loads(result.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, result.stderr
    return report


def loaded_by(db_path, tmp_path, *args: str) -> list[str]:
    return probe(db_path, tmp_path, *args)["loaded"]


LIGHT_COMMANDS = [("list",), ("search", "retry"), ("stats",), ("projects",), ("prime", "--task", "retry backoff"),
                  ("inbox",), ("config",), ("mcp", "install", "--dry-run"), ("hook", "install", "--dry-run"),
                  ("connect", "codex", "--dry-run"), ("connect", "--list")]


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


def test_prime_imports_numpy_only_with_vectors_to_compare(run_cli, db_path, tmp_path):
    from store.index import embedding

    run_cli("add", "Retry backoff must cap at 60 s", "--type", "fix", check=True)
    # A project with no memory, so no vector: nothing to compare the task with.
    assert not probe(db_path, tmp_path, "--project", "empty", "prime", "--task", "retry backoff")["numpy"]
    # Words alone, as without the extra.
    words = tmp_path / "words-alone.yml"
    words.write_text("injection:\n  semantic: false\n", encoding="utf-8")
    report = probe(db_path, tmp_path, "prime", "--task", "retry backoff", env={"MEMDECK_CONFIG": str(words)})
    assert not report["numpy"]
    with_vectors = probe(db_path, tmp_path, "prime", "--task", "retry backoff")
    assert with_vectors["numpy"] == embedding.available()
