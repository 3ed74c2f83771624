"""Anchors to code, checked against real git repositories (and a folder outside git): fresh,
moved, changed, missing, renames followed, several anchors, the cache, and what `prime` does
with a memory whose code moved on."""

from __future__ import annotations

import os

import pytest

from store import Config, Store
from store.anchors.anchoring import anchor_memory, anchors_of, parse_spec
from store.engine.errors import InvalidInput
from store.retrieval.injection import InjectionContext, prime
from store.engine.lifecycle import run_decay
from store.anchors.verify import check_memories, anchored_memories, reanchor, verify
from tests.anchor_support import code_store, repo  # noqa: F401 (fixtures)
from tests.git_support import REFUND, Repo
from tests.data_support import worked_on

pytestmark = pytest.mark.both_backends

RULE = "Refunds exclude the payment provider's fees: the amount is total minus fees."


@pytest.fixture
def notes(tmp_path):
    """A folder outside git."""
    folder = Repo(tmp_path / "notes", init=False)
    folder.write("setup.sh", "#!/bin/sh\nset -e\nexport PORT=8080\nexec ./serve\n")
    return folder


@pytest.fixture
def notes_store(notes, db_path, clock):
    with Store.open(db_path, project="notes", clock=clock, config=Config.defaults(),
                    project_root=notes.root) as opened:
        yield opened


def remember(store, *anchors, content=RULE, type="constraint", confidence=0.9):
    memory = store.add(content, type=type, confidence=confidence).memory
    anchor_memory(store, memory.id, anchors)
    return memory


def status_of(store, memory_id):
    (result,) = verify(store, [memory_id])
    return result


def test_an_anchor_keeps_the_lines_their_hash_and_the_commit(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    (anchor,) = anchors_of(code_store, memory.id)
    assert (anchor.path, anchor.start, anchor.end) == ("billing/refund.py", 2, 3)
    assert anchor.snapshot == "    # Refunds exclude the payment provider's fees.\n    amount = order.total - order.fees"
    assert anchor.commit == repo.head()
    assert anchor.blob == repo.git("hash-object", "billing/refund.py").strip()
    assert [e.kind for e in code_store.events(memory.id)] == ["created", "anchored"]
    assert status_of(code_store, memory.id).status == "fresh"


def test_lines_moved_down_the_file_are_followed(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    repo.insert_lines("billing/refund.py", 1, ["import logging", "", "log = logging.getLogger(__name__)", ""])
    repo.commit("logging")
    result = status_of(code_store, memory.id)
    assert result.status == "moved"
    assert result.to_json()["anchors"][0] | {"commit": None} == {
        "path": "billing/refund.py", "start": 6, "end": 7, "status": "moved", "commit": None,
        "was": {"path": "billing/refund.py", "start": 2, "end": 3}}
    (anchor,) = anchors_of(code_store, memory.id)
    assert (anchor.start, anchor.end) == (6, 7)
    assert status_of(code_store, memory.id).status == "fresh"  # the range now points at them


def test_edited_lines_are_changed_and_prime_leaves_the_memory_out(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    anchored_at = repo.head()
    repo.replace("billing/refund.py", "amount = order.total - order.fees", "amount = order.total")
    repo.commit("fees are refunded now")
    assert status_of(code_store, memory.id).status == "changed"
    result = prime(code_store, InjectionContext(task="refund fees"))
    assert memory.id not in [r.memory.id for r in result.included]
    (out,) = [r for r in result.excluded if r.memory.id == memory.id]
    assert out.reason == f"stale: billing/refund.py changed since {anchored_at[:7]}"
    assert RULE not in result.block


def test_uncommitted_edits_count(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    repo.replace("billing/refund.py", "- order.fees", "- order.fees - order.discount")
    assert status_of(code_store, memory.id).status == "changed"
    repo.git("checkout", "--", "billing/refund.py")
    assert status_of(code_store, memory.id).status == "fresh"


def test_a_renamed_file_is_followed_through_git(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    repo.move("billing/refund.py", "payments/refunds.py")
    result = status_of(code_store, memory.id)  # staged, not yet committed
    assert result.status == "moved"
    assert result.anchors[0].path == "payments/refunds.py"
    repo.commit("move refunds")
    assert anchors_of(code_store, memory.id)[0].path == "payments/refunds.py"
    assert status_of(code_store, memory.id).status == "fresh"


def test_a_renamed_and_edited_file_is_changed_at_its_new_path(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    repo.move("billing/refund.py", "payments/refunds.py")
    repo.commit("move")
    repo.replace("payments/refunds.py", "amount = order.total - order.fees", "amount = order.total")
    result = status_of(code_store, memory.id)
    assert (result.status, result.anchors[0].path) == ("changed", "payments/refunds.py")


def test_a_deleted_file_is_missing(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    repo.git("rm", "-q", "billing/refund.py")
    repo.commit("drop refunds")
    result = status_of(code_store, memory.id)
    assert result.status == "missing"
    assert code_store.get(memory.id).anchor_status == "missing"
    reason = next(r.reason for r in prime(code_store, InjectionContext(task="refund fees")).excluded
                  if r.memory.id == memory.id)
    assert reason.startswith("stale: billing/refund.py missing since ")


def test_a_memory_is_as_stale_as_its_worst_anchor(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3", "billing/invoice.py", "billing/refund.py:9-10")
    repo.insert_lines("billing/refund.py", 1, ["# refunds", ""])
    result = status_of(code_store, memory.id)
    assert [a.status for a in result.anchors] == ["moved", "fresh", "moved"]
    assert result.status == "moved"
    repo.write("billing/invoice.py", "def invoice(order):\n    return order.total + order.tax\n")
    result = status_of(code_store, memory.id)
    assert [a.status for a in result.anchors] == ["fresh", "changed", "fresh"]
    assert result.status == "changed"
    assert code_store.get(memory.id).stale


def test_outside_git_anchors_compare_with_the_snapshot(notes, notes_store):
    memory = remember(notes_store, "setup.sh:3", content="The service listens on port 8080.")
    (anchor,) = anchors_of(notes_store, memory.id)
    assert anchor.commit is None and anchor.blob is None
    notes.insert_lines("setup.sh", 2, ["# strict mode"])
    assert status_of(notes_store, memory.id).status == "moved"
    notes.replace("setup.sh", "PORT=8080", "PORT=9090")
    assert status_of(notes_store, memory.id).status == "changed"
    reason = next(r.reason for r in prime(notes_store, InjectionContext(task="port service")).excluded
                  if r.memory.id == memory.id)
    assert reason == "stale: setup.sh changed since 2026-03-01"
    (notes.root / "setup.sh").unlink()
    assert status_of(notes_store, memory.id).status == "missing"


def test_bad_anchors_are_refused_and_nothing_is_stored(code_store, repo):
    memory = code_store.add(RULE, type="constraint").memory
    for spec, message in (("billing/nope.py", "cannot read billing/nope.py"),
                          ("billing/refund.py:9-99", "billing/refund.py has 10 lines"),
                          ("../outside.py", "outside the project root"),
                          ("billing", "not a file")):
        with pytest.raises(InvalidInput, match=message):
            anchor_memory(code_store, memory.id, ["billing/invoice.py", spec])
    assert anchors_of(code_store, memory.id) == []
    with pytest.raises(InvalidInput, match="lines run from 1"):
        parse_spec("billing/refund.py:5-2")
    result = anchor_memory(code_store, memory.id, ["billing/invoice.py", "billing/nope.py"], strict=False)
    assert [a.path for a in result.anchors] == ["billing/invoice.py"]
    assert result.skipped[0][0] == "billing/nope.py"


def test_absolute_paths_inside_the_root_become_relative_and_repeats_are_one_anchor(code_store, repo):
    memory = code_store.add(RULE, type="constraint").memory
    anchor_memory(code_store, memory.id, [str(repo.root / "billing/refund.py") + ":2-3"])
    anchor_memory(code_store, memory.id, ["./billing/refund.py:2-3"])
    assert [a.spec for a in anchors_of(code_store, memory.id)] == ["billing/refund.py:2-3"]


def test_the_cheap_check_trusts_a_file_whose_size_and_mtime_did_not_change(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    path = repo.root / "billing/refund.py"
    stamp = path.stat()
    # Same size, same mtime, other bytes: only a read would see it.
    path.write_text(REFUND.replace("order.fees", "order.feez"))
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    anchored = anchored_memories(code_store, [memory.id])
    (cached,) = check_memories(code_store, anchored)
    assert cached.status == "fresh" and not cached.anchors[0].read
    (exact,) = check_memories(code_store, anchored, use_cache=False)
    assert exact.status == "changed" and exact.anchors[0].read


def test_a_fresh_check_restarts_the_decay_clock(code_store, repo, clock):
    kept = remember(code_store, "billing/refund.py:2-3", confidence=0.8)
    idle = code_store.add("Invoices are numbered per year.", type="convention", confidence=0.8).memory
    worked_on(code_store, clock.now() + 86400, 80)  # decay counts the days the project was worked on
    clock.advance(days=60)
    verify(code_store)
    assert code_store.get(kept.id).verified_at == clock.now()
    clock.advance(days=20)  # within the 30-day grace since the verification
    changes = {c.memory_id for c in run_decay(code_store)}
    assert idle.id in changes and kept.id not in changes


def test_a_check_that_changes_a_memory_s_status_is_in_its_history(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    verify(code_store)
    verify(code_store)
    assert [e.kind for e in code_store.events(memory.id)] == ["created", "anchored"]
    repo.replace("billing/refund.py", "- order.fees", "")
    verify(code_store)
    verify(code_store)
    checked = [e for e in code_store.events(memory.id) if e.kind == "checked"]
    assert len(checked) == 1
    assert checked[0].detail["status"] == "changed" and checked[0].detail["was"] == "fresh"
    assert checked[0].detail["anchors"] == [f"billing/refund.py:2-3 changed since {repo.head()[:7]}"]


def test_reanchoring_takes_the_lines_as_they_are_now(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3")
    repo.replace("billing/refund.py", "# Refunds exclude", "# Refunds always exclude")
    repo.commit("comment")
    assert status_of(code_store, memory.id).status == "changed"
    reanchor(code_store, memory.id)
    (anchor,) = anchors_of(code_store, memory.id)
    assert anchor.commit == repo.head() and "always exclude" in anchor.snapshot
    assert status_of(code_store, memory.id).status == "fresh"
    repo.git("rm", "-q", "billing/refund.py")
    verify(code_store)
    with pytest.raises(InvalidInput, match="no longer there"):
        reanchor(code_store, memory.id)


def test_the_flag_policy_injects_a_trusted_stale_memory_with_a_warning(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3", confidence=0.9)
    weak = remember(code_store, "billing/refund.py:5", content="Refunds of zero are skipped without a word.",
                    type="pitfall", confidence=0.6)
    repo.write("billing/refund.py", "def refund(order):\n    return issue(order.customer, order.total)\n")
    code_store.config = code_store.config.with_overrides({"anchors.stale": "flag"})
    result = prime(code_store, InjectionContext(task="refund fees zero skipped"))
    assert "(verify: billing/refund.py changed)" in result.block
    assert memory.id in [r.memory.id for r in result.included]
    assert weak.id in [r.memory.id for r in result.excluded]


def test_a_recorded_prime_saves_its_checks_and_a_dry_run_writes_nothing(code_store, repo, clock):
    memory = remember(code_store, "billing/refund.py:2-3")
    repo.replace("billing/refund.py", "- order.fees", "")
    prime(code_store, InjectionContext(task="refund fees"))
    assert code_store.get(memory.id).anchor_status == "fresh"
    prime(code_store, InjectionContext(task="refund fees"), record=True)
    assert code_store.get(memory.id).anchor_status == "changed"


def diffs_of(store, memory_id):
    from store.anchors.diff import memory_diffs

    (result,) = verify(store, [memory_id])
    return memory_diffs(store, result)


def test_the_diff_of_a_changed_region_is_git_s_cut_to_the_anchored_lines(code_store, repo):
    repo.insert_lines("billing/refund.py", 8, [f"# note {i}" for i in range(12)])
    repo.commit("notes")
    memory = remember(code_store, "billing/refund.py:2-3")
    repo.replace("billing/refund.py", "amount = order.total - order.fees", "amount = order.total")
    repo.replace("billing/refund.py", 'return {"customer"', 'return {"who"')  # far away: not shown
    repo.commit("refund fees too")
    (diff,) = diffs_of(code_store, memory.id)
    assert diff.source == "git"
    assert diff.lines[0].startswith("@@ -1,")
    assert "-    amount = order.total - order.fees" in diff.lines
    assert "+    amount = order.total" in diff.lines
    assert not any('"who"' in line for line in diff.lines)
    assert diff.commits == (f"{repo.head()[:7]} refund fees too",)


def test_the_diff_outside_git_compares_with_the_snapshot(notes, notes_store):
    memory = remember(notes_store, "setup.sh:3-4", content="The service listens on port 8080.")
    notes.write("setup.sh", "#!/bin/sh\n# strict\nset -eu\nexport PORT=9090\nexec ./serve\n")
    (diff,) = diffs_of(notes_store, memory.id)
    assert diff.source == "snapshot"
    assert list(diff.lines) == ["@@ -3,2 +4,2 @@", "-export PORT=8080", "+export PORT=9090", " exec ./serve"]
    reanchor(notes_store, memory.id)
    assert [a.spec for a in anchors_of(notes_store, memory.id)] == ["setup.sh:4-5"]


def test_a_fresh_or_missing_anchor_has_no_diff(code_store, repo):
    memory = remember(code_store, "billing/refund.py:2-3", "billing/invoice.py:1")
    (repo.root / "billing/invoice.py").unlink()
    fresh, missing = diffs_of(code_store, memory.id)
    assert (fresh.check.status, fresh.lines) == ("fresh", ())
    assert (missing.check.status, missing.lines) == ("missing", ())


def test_anchoring_and_verification_raise_the_version_and_reanchoring_is_a_compare_and_set(code_store, repo):
    from store.engine.errors import Conflict

    memory = remember(code_store, "billing/refund.py:2-3")
    anchored = code_store.get(memory.id)
    assert anchored.version == memory.version + 1
    verify(code_store)
    seen = code_store.get(memory.id)
    assert seen.version == anchored.version + 1  # a verification is a write, as a use is
    repo.replace("billing/refund.py", "# Refunds exclude", "# Refunds always exclude")
    code_store.edit(memory.id, title="Refunds never include fees")  # someone else, meanwhile
    with pytest.raises(Conflict):
        reanchor(code_store, memory.id, expected=seen)
    assert "always" not in anchors_of(code_store, memory.id)[0].snapshot
    reanchor(code_store, memory.id, expected=code_store.get(memory.id))
    assert "always" in anchors_of(code_store, memory.id)[0].snapshot


def test_a_check_of_anchors_replaced_meanwhile_is_not_saved(code_store, repo):
    from store.anchors.verify import save_checks

    memory = remember(code_store, "billing/refund.py:2-3")
    repo.replace("billing/refund.py", "- order.fees", "")
    read_before = check_memories(code_store, anchored_memories(code_store, [memory.id]), use_cache=False)
    reanchor(code_store, memory.id)  # meanwhile: the memory holds, anchored to the lines as they are
    save_checks(code_store, read_before, actor="verify")
    assert [a.status for a in anchors_of(code_store, memory.id)] == ["fresh"]
    assert not code_store.get(memory.id).stale


def test_mcp_remember_anchors_the_paths_that_name_files(code_store, repo):
    from tui.mcp_server.agent_session import AgentSession

    agent = AgentSession(lambda: code_store)
    answer = agent.remember(RULE, "constraint", paths=["billing/refund.py:2-3", "billing/*.py", "gone.py"])
    memory = code_store.get(answer["id"])
    assert memory.file_refs == ("billing/refund.py", "billing/*.py", "gone.py")
    assert [a.spec for a in anchors_of(code_store, memory.id)] == ["billing/refund.py:2-3"]
    assert memory.anchor_status == "fresh" and memory.session_id == agent.session_id


def test_a_json_export_carries_anchors_and_an_import_restores_them_once(code_store, repo, tmp_path, clock):
    from store.interop.importer import import_document
    from store.interop.transfer import export_text, read_document
    from store.browse.search import MemoryFilter

    memory = remember(code_store, "billing/refund.py:2-3", "billing/invoice.py")
    status_of(code_store, memory.id)
    text = export_text(code_store, "json", MemoryFilter())
    with Store.open(tmp_path / "other.db", project="shop", clock=clock, config=Config.defaults(),
                    project_root=repo.root) as other:
        for _ in range(2):  # a second import of the same file adds no anchor
            import_document(other, read_document(other, text, "export.json", "json"))
        kept = [(a.path, a.start, a.end, a.line_hash, a.snapshot, a.commit, a.blob, a.status, a.created_at)
                for a in anchors_of(other, memory.id)]
        assert kept == [(a.path, a.start, a.end, a.line_hash, a.snapshot, a.commit, a.blob, a.status, a.created_at)
                        for a in anchors_of(code_store, memory.id)]
        assert export_text(other, "json", MemoryFilter()).split('"memories"')[1] == text.split('"memories"')[1]
        # Checked against this checkout's code like any anchor: an edit of the lines is seen.
        repo.write("billing/refund.py", REFUND.replace("order.total - order.fees", "order.total"))
        assert status_of(other, memory.id).status == "changed"


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.py", "C:/secrets.py"])
def test_an_imported_anchor_outside_the_project_is_refused_and_nothing_written(code_store, path):
    from store.interop.transfer import read_document

    document = ('{"format": "memdeck", "version": 1, "memories": [{"id": "m1", "type": "fix", '
                '"content": "Keep refunds net of fees", "anchors": [{"path": "%s", "line_hash": "x"}]}]}' % path)
    with pytest.raises(InvalidInput, match="not a path inside the project"):
        read_document(code_store, document, "evil.json", "json")
