"""Every git call memdeck makes runs with the repository's filters off, whatever their names
(issue 41): a filter named with `=` (git splits `-c filter.a=b.clean=` at its first `=`, so that
setting names another filter) or with a byte that is not UTF-8 (a name decoded and encoded
again is another name) runs nothing, in a real repository."""

from __future__ import annotations

import json
import subprocess

from store.anchors import git
from tests.git_support import REFUND, Repo

NAMES = (b"a=b", b"x=y=z", b"bad\xffname")


def hostile_filters(repo: Repo, log) -> None:
    """A clean, smudge and process filter under each name, each writing to `log` when run."""
    attributes = b""
    for n, name in enumerate(NAMES):
        attributes += b"*.py filter=" + name + b"\n" if n == 0 else b"refund.py filter=" + name + b"\n"
        for part in (b"clean", b"smudge"):
            subprocess.run([b"git", b"-C", str(repo.root).encode(), b"config", b"filter." + name + b"." + part,
                            f"sh -c 'echo FILTER >> {log}; cat'".encode()], check=True)
    (repo.root / ".gitattributes").write_bytes(attributes)


def _repo_with_a_change(tmp_path):
    repo = Repo(tmp_path / "shop")
    repo.write("pay.py", "a\nb\n")
    repo.write("refund.py", REFUND)
    first = repo.commit("one")
    repo.move("pay.py", "payments.py")
    repo.commit("moved")
    return repo, first


def test_filters_named_with_an_equals_sign_or_a_byte_not_utf8_run_nothing(tmp_path):
    repo, first = _repo_with_a_change(tmp_path)
    log = tmp_path / "pwned"
    hostile_filters(repo, log)
    repo.replace("refund.py", "order.total - order.fees", "order.total")
    # The repository's own git runs them: the repro holds.
    subprocess.run(["git", "-C", str(repo.root), "diff", "HEAD", "--"], capture_output=True)
    assert "FILTER" in log.read_text()
    log.unlink()
    assert git.renames_since(repo.root, first) == {"pay.py": "payments.py"}
    assert "-    amount = order.total - order.fees" in git.diff_since(repo.root, first, "refund.py", "refund.py")
    assert git.file_at(repo.root, first, "refund.py") == REFUND.encode()
    assert len(git.commits_touching(repo.root, first, "payments.py")) == 1
    assert not log.exists(), log.read_text()


def test_the_session_start_hook_runs_none_of_them(run_cli, tmp_path):
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
    hostile_filters(repo, log)
    repo.replace("refund.py", "order.total - order.fees", "order.total")
    hook = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(repo.root),
                       "hook_event_name": "SessionStart", "source": "startup"})
    done = run_cli("hook", "session-start", "--task", "payments ledger", input=hook, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    done = run_cli("verify", "--json", cwd=repo.root)
    assert sorted(m["status"] for m in json.loads(done.stdout)) == ["changed", "missing"]
    assert not log.exists(), log.read_text()
