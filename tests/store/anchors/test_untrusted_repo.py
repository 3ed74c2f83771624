"""A cloned repository is a stranger's: its links cannot make an anchor read outside it, its big
files are not read whole, the lines an anchor keeps are redacted, and its git config cannot make
memdeck run a program (core.fsmonitor, filters, textconv, external diff, hooks)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from store import Config, Store
from store.anchors import git
from store.anchors.anchoring import MAX_FILE_BYTES, anchor_memory, anchors_of
from store.anchors.diff import memory_diffs
from store.anchors.verify import anchored_memories, check_memories, verify
from store.engine.errors import InvalidInput
from tests.git_support import REFUND, Repo

pytestmark = pytest.mark.both_backends

SECRET_FILE = "root:$6$salt$SECRETHASH:19000:0:99999:7:::\n"


@pytest.fixture
def outside(tmp_path):
    """A folder beside the repository with a file nobody meant to share."""
    folder = tmp_path / "etc"
    folder.mkdir()
    (folder / "shadow").write_text(SECRET_FILE)
    return folder


@pytest.fixture
def repo(tmp_path, outside):
    repo = Repo(tmp_path / "shop")
    repo.write("billing/refund.py", REFUND)
    os.symlink(outside / "shadow", repo.root / "passwd_link")
    os.symlink(outside, repo.root / "etc_dir")
    os.symlink("billing/refund.py", repo.root / "inner_link.py")  # a link that stays inside
    repo.commit("billing")
    return repo


@pytest.fixture
def code_store(repo, db_path, clock):
    with Store.open(db_path, project="shop", clock=clock, config=Config.defaults(),
                    project_root=repo.root) as opened:
        yield opened


def test_an_anchor_through_a_link_out_of_the_repository_is_refused(code_store):
    memory = code_store.add("Users are in the shadow file.", type="fix").memory
    for spec in ("passwd_link", "passwd_link:1", "etc_dir/shadow", "etc_dir/../etc_dir/shadow"):
        with pytest.raises(InvalidInput, match="a link that leads outside the project root"):
            anchor_memory(code_store, memory.id, [spec])
    assert anchors_of(code_store, memory.id) == []
    result = anchor_memory(code_store, memory.id, ["etc_dir/shadow", "billing/refund.py:2"], strict=False)
    assert [a.path for a in result.anchors] == ["billing/refund.py"]
    assert "outside the project root" in result.skipped[0][1]


def test_a_link_that_stays_inside_the_repository_is_followed(code_store):
    memory = code_store.add("Refunds exclude fees.", type="fix").memory
    (anchor,) = anchor_memory(code_store, memory.id, ["inner_link.py:2"]).anchors
    assert anchor.snapshot == "    # Refunds exclude the payment provider's fees."


def test_a_file_replaced_by_a_link_out_after_anchoring_is_missing_and_not_read(code_store, repo, outside):
    memory = code_store.add("Refunds exclude fees.", type="fix").memory
    anchor_memory(code_store, memory.id, ["billing/refund.py"])
    (outside / "refund.py").write_text(REFUND)
    (repo.root / "billing/refund.py").unlink()
    os.symlink(outside / "refund.py", repo.root / "billing/refund.py")
    (result,) = verify(code_store, [memory.id])
    assert result.status == "missing"
    assert all(d.lines == () for d in memory_diffs(code_store, result))


def test_the_lines_an_anchor_keeps_are_redacted_and_still_check_fresh(code_store, repo):
    repo.write("settings.py", 'DEBUG = False\nAWS_KEY = "AKIAIOSFODNN7EXAMPLE"\npassword = "hunter2hunter2"\n')
    memory = code_store.add("Settings hold the AWS key.", type="fix").memory
    anchors = anchor_memory(code_store, memory.id, ["settings.py", "settings.py:2-3"]).anchors
    for anchor in anchors:
        assert "AKIAIOSFODNN7EXAMPLE" not in anchor.snapshot and "hunter2" not in anchor.snapshot
        assert "[REDACTED:aws_access_key]" in anchor.snapshot
    (result,) = verify(code_store, [memory.id])
    assert result.status == "fresh"


def test_a_file_over_the_limit_is_refused_at_anchoring_and_not_read_at_a_check(code_store, repo):
    repo.write("big.py", "x = 1\n" * (MAX_FILE_BYTES // 6 + 10))
    memory = code_store.add("Big file.", type="fix").memory
    with pytest.raises(InvalidInput, match="larger than the 1024 KB an anchor reads"):
        anchor_memory(code_store, memory.id, ["big.py:1"])
    repo.write("small.py", "x = 1\n")
    anchor_memory(code_store, memory.id, ["small.py:1"])
    repo.write("small.py", "x = 1\n" * (MAX_FILE_BYTES // 6 + 10))
    (result,) = check_memories(code_store, anchored_memories(code_store, [memory.id]), use_cache=False)
    assert result.status == "changed" and result.anchors[0].read is False


def test_a_fifo_is_refused_at_anchoring_and_missing_at_a_check(code_store, repo):
    os.mkfifo(repo.root / "pipe.py")
    memory = code_store.add("A pipe.", type="fix").memory
    with pytest.raises(InvalidInput, match="is not a file"):
        anchor_memory(code_store, memory.id, ["pipe.py"])
    anchor_memory(code_store, memory.id, ["billing/refund.py"])
    (repo.root / "billing/refund.py").unlink()
    os.mkfifo(repo.root / "billing/refund.py")
    (result,) = verify(code_store, [memory.id])
    assert result.status == "missing"


@pytest.mark.sqlite_only
def test_add_through_a_link_out_of_the_repository_stores_nothing(run_cli, repo):
    done = run_cli("add", "Users are in the shadow file.", "--type", "fix", "--anchor", "passwd_link",
                   cwd=repo.root)
    assert done.returncode != 0 and "a link that leads outside the project root" in done.stderr
    assert "Traceback" not in done.stderr and "SECRETHASH" not in done.stdout + done.stderr
    exported = run_cli("export", "--format", "json", cwd=repo.root, check=True).stdout
    assert "SECRETHASH" not in exported and json.loads(exported)["memories"] == []


# -- the repository's git config runs nothing -----------------------------------------------------

def hostile_git(repo: Repo, log) -> None:
    """Every program a repository's own config can name, each writing to `log` when run."""
    repo.git("config", "core.fsmonitor", f"echo FSMONITOR >> {log}; false")
    repo.git("config", "core.hooksPath", str(repo.root / "hooks"))
    hook = repo.write("hooks/post-index-change", f"#!/bin/sh\necho HOOK >> {log}\n")
    hook.chmod(0o755)
    repo.write(".gitattributes", "*.py filter=evil diff=evil\n")
    repo.git("config", "filter.evil.clean", f"sh -c 'echo FILTER >> {log}; cat'")
    repo.git("config", "filter.evil.process", f"sh -c 'echo PROCESS >> {log}'")
    repo.git("config", "diff.evil.textconv", f"sh -c 'echo TEXTCONV >> {log}; cat'")
    repo.git("config", "diff.evil.command", f"sh -c 'echo EXTDIFF >> {log}'")
    repo.git("config", "diff.external", f"sh -c 'echo EXTERNAL >> {log}'")
    repo.git("config", "log.showSignature", "true")
    repo.git("config", "gpg.program", f"sh -c 'echo GPG >> {log}'")
    repo.git("config", "core.pager", f"sh -c 'echo PAGER >> {log}'")


@pytest.mark.sqlite_only
def test_session_start_after_an_anchored_file_went_runs_none_of_the_repositorys_programs(run_cli, tmp_path):
    """The issue's repro: anchor `pay.py:1-2`, `git rm pay.py`, commit, set core.fsmonitor, then
    the session-start hook; then the same for a diff of a changed file."""
    repo = Repo(tmp_path / "shop")
    repo.write("pay.py", "def pay():\n    return ledger.post()\n")
    repo.write("refund.py", REFUND)
    repo.commit("pay")
    for text, spec in (("Payments go through the ledger.", "pay.py:1-2"), ("Refunds exclude fees.", "refund.py:2-3")):
        done = run_cli("add", text, "--type", "constraint", "--confidence", "0.9", "--anchor", spec, cwd=repo.root)
        assert done.returncode == 0, done.stderr
    repo.git("rm", "-q", "pay.py")
    repo.commit("no pay")
    log = tmp_path / "pwned"
    hostile_git(repo, log)
    repo.replace("refund.py", "order.total - order.fees", "order.total")
    # The repository's own git would run them: the repro holds.
    git_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "-C", str(repo.root), "diff", "--name-status", "-M", "HEAD~1", "--"],
                   capture_output=True, env=git_env)
    assert "FSMONITOR" in log.read_text()
    log.unlink()
    hook = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(repo.root),
                       "hook_event_name": "SessionStart", "source": "startup"})
    done = run_cli("hook", "session-start", "--task", "payments ledger", input=hook, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    done = run_cli("verify", "--json", cwd=repo.root)
    statuses = sorted(m["status"] for m in json.loads(done.stdout))
    assert statuses == ["changed", "missing"]
    assert not log.exists(), log.read_text()


def test_git_questions_run_none_of_the_repositorys_programs(tmp_path):
    repo = Repo(tmp_path / "shop")
    repo.write("pay.py", "a\nb\n")
    repo.write("refund.py", REFUND)
    first = repo.commit("one")
    repo.move("pay.py", "payments.py")
    repo.commit("moved")
    log = tmp_path / "pwned"
    hostile_git(repo, log)
    repo.replace("refund.py", "order.total - order.fees", "order.total")
    assert git.renames_since(repo.root, first) == {"pay.py": "payments.py"}
    assert "-    amount = order.total - order.fees" in git.diff_since(repo.root, first, "refund.py", "refund.py")
    assert git.file_at(repo.root, first, "refund.py") == REFUND.encode()
    assert len(git.commits_touching(repo.root, first, "payments.py")) == 1
    assert not log.exists(), log.read_text()


def test_an_export_redacts_a_snapshot_stored_before_snapshots_were_redacted(code_store, repo):
    from store.interop.memdeck_json import anchor_json

    repo.write("settings.py", 'AWS_KEY = "AKIAIOSFODNN7EXAMPLE"\n')
    memory = code_store.add("Settings hold the AWS key.", type="fix").memory
    anchor_memory(code_store, memory.id, ["settings.py:1"])
    p = code_store.backend.param
    code_store.db.execute_sql(f"UPDATE anchor SET snapshot = {p} WHERE memory_id = {p}",
                              ('AWS_KEY = "AKIAIOSFODNN7EXAMPLE"', memory.id))  # as an older memdeck kept it
    (anchor,) = anchors_of(code_store, memory.id)
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(anchor_json(anchor))


def test_a_stored_commit_id_that_is_an_option_asks_git_nothing(code_store, repo, tmp_path):
    """A commit id comes from strangers too (an imported file, a memory a team member shared):
    `--output=FILE` handed to git as a commit would have it write FILE. Checking a missing file's
    anchor (where git is asked about renames since the commit), the diff, and each git question
    leave no file behind and answer nothing."""
    memory = code_store.add("Refunds subtract the fees.", type="fix").memory
    anchor_memory(code_store, memory.id, ["billing/refund.py:2"])
    option = "--output=../written"  # git runs in the repository: beside it, in tmp_path
    p = code_store.backend.param
    with code_store.transaction():
        code_store.db.execute_sql(f"UPDATE anchor SET commit_id = {p} WHERE memory_id = {p}", (option, memory.id))
    anchored = anchored_memories(code_store, [memory.id])
    (repo.root / "billing" / "refund.py").unlink()  # missing: a rename is looked for since the commit
    assert check_memories(code_store, anchored, use_cache=False)[0].anchors[0].status == "missing"
    repo.write("billing/refund.py", REFUND.replace("order.total - order.fees", "order.total"))
    assert memory_diffs(code_store, check_memories(code_store, anchored, use_cache=False)[0])
    for asked in (git.renames_since(repo.root, option),
                  git.commits_touching(repo.root, option, "billing/refund.py"),
                  git.diff_since(repo.root, option, "billing/refund.py", "billing/refund.py"),
                  git.file_at(repo.root, option, "billing/refund.py")):
        assert not asked
    assert not list(tmp_path.glob("written*"))
    assert git.is_commit_id(git.head_commit(repo.root)) and not git.is_commit_id("-abc") and not git.is_commit_id("")
