"""A cloned repository is a stranger's: its links cannot make an anchor read outside it, its big
files are not read whole, the lines an anchor keeps are redacted, and its git config cannot make
memdeck run a program (core.fsmonitor, filters, textconv, external diff, hooks)."""

from __future__ import annotations

import json
import os

import pytest

from store import Config, Store
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
