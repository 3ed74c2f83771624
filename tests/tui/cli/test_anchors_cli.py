"""The command line of anchors: `add --anchor`, `edit --anchor`, `verify` and its exit codes,
`list --stale`, and `prime` leaving stale memories out, without calling git when nothing changed."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.git_support import REFUND, Repo

pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path):
    repo = Repo(tmp_path / "shop")
    repo.write("billing/refund.py", REFUND)
    repo.commit("billing")
    return repo


def add(run_cli, repo, text, *anchors):
    args = [a for spec in anchors for a in ("--anchor", spec)]
    done = run_cli("add", text, "--type", "constraint", "--confidence", "0.9", *args, "--json", cwd=repo.root,
                   check=True)
    return json.loads(done.stdout)


def test_add_with_anchors_prints_the_id_and_verify_reports_each_anchor(run_cli, repo):
    added = add(run_cli, repo, "Refunds exclude fees.", "billing/refund.py:2-3", "billing/refund.py")
    assert added["id"].startswith("mem-") and added["anchor_status"] == "fresh"
    assert [(a["path"], a["start"], a["end"]) for a in added["anchors"]] == [
        ("billing/refund.py", 2, 3), ("billing/refund.py", None, None)]
    done = run_cli("verify", "--json", cwd=repo.root)
    assert done.returncode == 0
    assert json.loads(done.stdout) == [{"id": added["id"], "status": "fresh", "anchors": [
        {"path": "billing/refund.py", "start": 2, "end": 3, "status": "fresh", "commit": repo.head()},
        {"path": "billing/refund.py", "start": None, "end": None, "status": "fresh", "commit": repo.head()}]}]
    assert "1 anchored: 1 fresh" in done.stderr


def test_verify_exits_1_when_code_changed_and_0_when_it_only_moved(run_cli, repo):
    added = add(run_cli, repo, "Refunds exclude fees.", "billing/refund.py:2-3")
    repo.insert_lines("billing/refund.py", 1, ["import logging", ""])
    done = run_cli("verify", cwd=repo.root)
    assert done.returncode == 0 and "billing/refund.py:2-3 moved to billing/refund.py:4-5" in done.stdout
    repo.replace("billing/refund.py", "- order.fees", "")
    done = run_cli("verify", added["id"], cwd=repo.root)
    assert done.returncode == 1 and "changed since" in done.stdout
    assert "1 anchored: 1 changed" in done.stderr
    listed = json.loads(run_cli("list", "--stale", "--json", cwd=repo.root, check=True).stdout)
    assert [m["id"] for m in listed] == [added["id"]] and listed[0]["anchor_status"] == "changed"


def test_verify_of_an_unknown_id_is_not_found(run_cli, repo):
    assert run_cli("verify", "mem-nope", cwd=repo.root).returncode == 4


def test_a_bad_anchor_stores_nothing(run_cli, repo):
    done = run_cli("add", "Refunds exclude fees.", "--type", "fix", "--anchor", "billing/refund.py:40-41",
                   cwd=repo.root)
    assert done.returncode == 2 and "billing/refund.py has 10 lines" in done.stderr
    done = run_cli("add", "Refunds exclude fees.", "--type", "fix", "--anchor", "billing/refund.py:0",
                   cwd=repo.root)
    assert done.returncode == 2
    assert json.loads(run_cli("list", "--json", cwd=repo.root, check=True).stdout) == []


def test_edit_adds_and_drops_anchors(run_cli, repo):
    memory_id = run_cli("add", "Refunds exclude fees.", "--type", "fix", cwd=repo.root, check=True).stdout.strip()
    run_cli("edit", memory_id, "--anchor", "billing/refund.py:3", cwd=repo.root, check=True)
    shown = json.loads(run_cli("show", memory_id, "--json", cwd=repo.root, check=True).stdout)
    assert [(a["path"], a["start"]) for a in shown["anchors"]] == [("billing/refund.py", 3)]
    assert "anchor:     billing/refund.py:3  fresh" in run_cli("show", memory_id, cwd=repo.root).stdout
    run_cli("edit", memory_id, "--no-anchors", cwd=repo.root, check=True)
    shown = json.loads(run_cli("show", memory_id, "--json", cwd=repo.root, check=True).stdout)
    assert shown["anchors"] == [] and [e["kind"] for e in shown["events"]] == ["created", "anchored", "anchored"]


def git_logger(tmp_path):
    """A `git` first on PATH that logs each call, then runs the real git."""
    real = next(os.path.join(d, "git") for d in os.environ["PATH"].split(os.pathsep)
                if os.access(os.path.join(d, "git"), os.X_OK))
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git-calls.log"
    script = folder / "git"
    script.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}, log


def test_prime_calls_no_git_when_nothing_changed_and_leaves_stale_memories_out(run_cli, repo, tmp_path):
    added = add(run_cli, repo, "Refunds exclude the provider fees.", "billing/refund.py:2-3")
    env, log = git_logger(tmp_path)
    done = run_cli("prime", "--task", "refund fees", "--record", cwd=repo.root, env=env, check=True)
    assert "Refunds exclude the provider fees." in done.stdout
    assert not log.exists()
    repo.git("rm", "-q", "billing/refund.py")
    done = run_cli("prime", "--task", "refund fees", "--format", "json", "--record", cwd=repo.root, env=env,
                   check=True)
    (out,) = json.loads(done.stdout)["excluded"]
    assert out["id"] == added["id"] and out["reason"].startswith("stale: billing/refund.py missing since ")
    assert "diff" in log.read_text()  # a file went missing: git is asked whether it was renamed
    log.unlink()
    run_cli("prime", "--task", "refund fees", cwd=repo.root, env=env, check=True)
    assert not log.exists()  # still missing, as at the last check: not asked again


def test_an_export_leaves_anchors_out_and_imports_back(run_cli, repo, tmp_path):
    added = add(run_cli, repo, "Refunds exclude fees.", "billing/refund.py:2-3")
    exported = json.loads(run_cli("export", "--format", "json", cwd=repo.root, check=True).stdout)
    (memory,) = [m for m in exported["memories"] if m["id"] == added["id"]]
    assert "anchor_status" not in memory
    (tmp_path / "export.json").write_text(json.dumps(exported))
    done = run_cli("--db", str(tmp_path / "other.db"), "import", str(tmp_path / "export.json"), cwd=repo.root)
    assert done.returncode == 0, done.stderr


def test_a_project_named_from_another_repository_is_checked_against_its_own_root(run_cli, tmp_path):
    """`--project shop` run in another repository: shop's anchors are read from shop's recorded
    root, not from the repository memdeck runs in (where they would all be "missing")."""
    shop = Repo(tmp_path / "shop")
    shop.write("billing/refund.py", REFUND)
    shop.commit("billing")
    by_folder = {"MEMDECK_PROJECT": ""}  # each folder its own project, as outside the tests
    added = json.loads(run_cli("add", "Refunds exclude fees.", "--type", "constraint", "--anchor", "billing/refund.py:2-3", "--json",
                               cwd=shop.root, env=by_folder, check=True).stdout)
    assert added["project"] == "shop"
    elsewhere = Repo(tmp_path / "docs-site")
    elsewhere.write("README.md", "docs\n")
    elsewhere.commit("docs")
    done = run_cli("--project", "shop", "verify", "--json", cwd=elsewhere.root, env=by_folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [(r["id"], r["status"]) for r in json.loads(done.stdout)] == [(added["id"], "fresh")]
