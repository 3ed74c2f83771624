"""`memdeck blame` and `memdeck log --memory`: who wrote and who last changed each memory, on
either back-end (here the local user, from config `team.author`)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.both_backends


def _author(tmp_path, name: str) -> None:
    (tmp_path / "config-home" / "memdeck").mkdir(parents=True, exist_ok=True)
    (tmp_path / "config-home" / "memdeck" / "config.yml").write_text(f"team:\n  author: {name}\n")


def test_blame_names_who_wrote_and_who_last_changed_each(run_cli, tmp_path):
    _author(tmp_path, "ana")
    first = json.loads(run_cli("add", "Deploys go out on Tuesdays", "--type", "convention", "--json",
                               check=True).stdout)["id"]
    second = json.loads(run_cli("add", "Staging needs the VPN", "--type", "context", "--json",
                                check=True).stdout)["id"]
    _author(tmp_path, "bo")
    run_cli("edit", first, "--title", "Deploys go out on Tuesdays only", check=True)
    run_cli("prime", "--task", "when do deploys go out", "--record", check=True)  # feedback is no change
    blamed = json.loads(run_cli("blame", "--json", check=True).stdout)
    assert [(b["id"], b["wrote"], b["changed_by"], b["change"]) for b in blamed] == [
        (first, "ana", "bo", "edited"), (second, "ana", "ana", "created")]
    plain = run_cli("blame", check=True).stdout.splitlines()
    assert plain[0].split()[:3] == ["id", "wrote", "on"]
    assert plain[1].split()[:2] == [first, "ana"] and " bo " in plain[1]
    log = [json.loads(line) for line in run_cli("log", "--memory", first, "--json", check=True).stdout.splitlines()]
    assert [(e["kind"], e["author"]) for e in log][:2] == [("created", "ana"), ("edited", "bo")]
    text = run_cli("log", "--memory", first, check=True).stdout
    assert "ana  created" in text and "bo  edited" in text and "title" in text


def test_log_needs_a_session_or_a_memory_and_names_an_unknown_one(run_cli):
    assert run_cli("log").returncode == 2
    missing = run_cli("log", "--memory", "mem-nope")
    assert missing.returncode == 4 and "mem-nope" in missing.stderr
