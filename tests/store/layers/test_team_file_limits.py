"""The team file is bounded (issue 41): one over `MAX_TEAM_FILE_BYTES` is refused in one line
before it is read, and a store a killed process was building is removed by the next one, never
read as the cache."""

from __future__ import annotations

import json
import os
import subprocess

from cli_support import memdeck_command
from store.layers.file_layer import MAX_TEAM_FILE_BYTES, cache_folder

HEADER = "format: memdeck\nversion: 1\nmemories:\n"
ENTRY = "- type: pitfall\n  content: The staging database resets every night at 02:00 UTC, number {n}.\n"


def _run(tmp_path, repo, *args):
    env = {**os.environ, "MEMDECK_DB": str(tmp_path / "own.db"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    return subprocess.run([*memdeck_command(), *args], capture_output=True, text=True, env=env, cwd=repo, timeout=120)


def _repo(tmp_path, entries: int):
    repo = tmp_path / "repo"
    (repo / ".memdeck").mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".memdeck" / "team.yaml").write_text(HEADER + "".join(ENTRY.format(n=n) for n in range(entries)))
    return repo


def test_a_team_file_over_the_limit_is_refused_in_one_line(tmp_path):
    entries = MAX_TEAM_FILE_BYTES // len(ENTRY.format(n=0)) + 100
    repo = _repo(tmp_path, entries)
    assert (repo / ".memdeck" / "team.yaml").stat().st_size > MAX_TEAM_FILE_BYTES
    done = _run(tmp_path, repo, "list", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "over the team file's limit" in lines[0] and "not read" in lines[0], done.stderr
    assert not (tmp_path / "cache" / "memdeck" / "layers").exists() or not any(
        (tmp_path / "cache" / "memdeck" / "layers").iterdir())


def test_a_half_built_cache_of_a_killed_process_is_removed_and_never_read(tmp_path, monkeypatch):
    repo = _repo(tmp_path, 3)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = cache_folder()
    folder.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    abandoned = [folder / f".0123456789abcdef-fedcba9876543210.{dead.pid}.db",
                 folder / f".0123456789abcdef-fedcba9876543210.{dead.pid}.db-journal"]
    for path in abandoned:
        path.write_bytes(b"half a store")
    done = _run(tmp_path, repo, "list", "--json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == 3
    assert not any(path.exists() for path in abandoned)
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []
