"""Capture without markers: each signal a session carries becomes one inbox candidate, with its
type, the user's words, the files changed in response, its evidence lines and a confidence;
chatter and task-local remarks do not; repeats strengthen instead of flooding the inbox."""

from __future__ import annotations

import json

from store import Config
from store.capture.ingest import ingest_file
from store.browse.search import MemoryFilter, list_memories
from tests.data_support import DATA, ROOT, needs_shared

OWN = DATA / "transcripts"


def candidates(store):
    found = list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=None)
    return sorted(found, key=lambda m: m.meta["evidence"][0]["line"])


def evidence_lines(memory) -> list[int]:
    return [e["line"] for e in memory.meta["evidence"]]


def test_a_rejected_tool_call_with_a_reason_becomes_the_users_rule_in_their_words(store):
    ingest_file(store, OWN / "rules-and-rejections.jsonl")
    uv = candidates(store)[0]
    assert uv.type == "convention" and uv.status == "pending" and uv.source == "automatic"
    assert uv.title == "Don't use pip directly, this project is managed with uv"  # the rule, capitalised
    assert uv.content.startswith("don't use pip directly, this project is managed with uv. Always run `uv add`")
    assert "(said when rejecting Bash: pip install pandas)" in uv.content
    (line,) = uv.meta["evidence"]
    assert line["line"] == 6 and line["kind"] == "rejection" and line["session"] == "7d1c0e2a-rules-and-rejections"
    assert line["at"] is not None and "managed with uv" in line["text"]


def test_a_correction_the_agent_agrees_with_names_the_files_it_then_changed(store):
    ingest_file(store, OWN / "rules-and-rejections.jsonl")
    money = next(m for m in candidates(store) if "money" in m.content)
    assert money.title == "Never format money with floats, amounts are integer cents everywhere and we format them with…"
    assert "The agent agreed: You're absolutely right, floats were wrong here" in money.content
    assert money.content.endswith("Changed in response: ledger/export.py, tests/test_export.py.")
    assert money.file_refs == ("ledger/export.py", "tests/test_export.py")
    assert evidence_lines(money) == [22, 23]
    # agreement and edits make it stronger than a rule said once without either
    ruff = next(m for m in candidates(store) if "ruff format" in m.content)
    assert money.confidence > ruff.confidence >= Config.defaults().capture.min_confidence


def test_chatter_and_task_local_remarks_are_not_lessons(store):
    ingest_file(store, OWN / "rules-and-rejections.jsonl")
    said = " ".join(m.content for m in candidates(store))
    for chatter in ("apply phase 1", "can you retry", "continue", "old exporter", "another session", "thanks"):
        assert chatter not in said
    assert len(candidates(store)) == 7


def test_a_stated_choice_and_an_answered_question_become_decisions(store):
    ingest_file(store, OWN / "choices.jsonl")
    sqlite, keep, backoff = candidates(store)
    assert {sqlite.type, keep.type, backoff.type} == {"decision"}
    assert sqlite.content.startswith("Let's go with SQLite in WAL mode, one file per worker")
    assert "notify/receipts.py" in sqlite.file_refs
    assert keep.content.startswith("How long should receipts be kept? 30 days, then purge")
    assert backoff.title == "For the retries I choose exponential backoff with jitter, capped at 60 seconds"


def test_a_question_about_a_bug_counts_only_when_the_agent_agrees(store):
    ingest_file(store, OWN / "bug-question.jsonl")
    (bug,) = candidates(store)
    assert bug.type == "pitfall" and evidence_lines(bug) == [4, 5]
    assert "Retry-After" in bug.content and "The agent agreed: You're right, that's a bug" in bug.content
    assert bug.file_refs == ("scraper/fetch.py", "tests/test_fetch.py")
    assert all("parse_page" not in m.content for m in candidates(store))


def test_a_blocking_hook_is_a_constraint_and_blocking_again_strengthens_it(store):
    ingest_file(store, OWN / "hook-blocked.jsonl")
    push, lint = candidates(store)
    assert push.type == lint.type == "constraint"
    assert push.content == ("A PreToolUse:Bash hook blocked the agent from running Bash: git push origin main: "
                            "Direct pushes to main are not allowed. Open a pull request from a branch.")
    assert lint.title == "Cannot stop while `ruff check` reports errors"
    assert evidence_lines(lint) == [10, 17]  # the second block is evidence, not a second candidate
    assert [e.kind for e in store.events(lint.id)] == ["created", "reinforced"]
    assert lint.confidence > push.confidence


def test_a_check_that_passes_after_edits_is_a_fix_and_a_listing_that_passes_after_mkdir_is_not(store):
    ingest_file(store, OWN / "fail-then-pass.jsonl")
    fix, pip = candidates(store)
    assert fix.type == "fix" and fix.file_refs == ("calc/parser.py", "calc/ast.py")
    assert "test_unary - AssertionError" in fix.content and evidence_lines(fix) == [5, 11]
    assert pip.type == "pitfall" and evidence_lines(pip) == [19, 21, 23]
    # what the session learned: the call that did the same work and worked
    assert pip.title == "`pip install hypothesis` fails; `.venv/bin/pip install hypothesis` works instead"
    assert "the same error: error: externally-managed-environment" in pip.content


def test_a_hooks_feedback_repeated_in_another_session_neither_proposes_nor_reinforces(store, tmp_path):
    """Issue 40: the hook says it in every session; the user did not teach it again. (A rule the
    user types again reinforces its memory with the new evidence: test_capture_retaught.py.)"""
    ingest_file(store, OWN / "hook-blocked.jsonl")
    lint = next(m for m in candidates(store) if "ruff check" in m.title)
    store.set_status([lint.id], "active")
    again = tmp_path / "again.jsonl"
    again.write_text((OWN / "hook-blocked.jsonl").read_text().replace("9c44a1f0-hook-blocked", "another-session"))
    report = ingest_file(store, again)
    assert lint.id not in report.candidates
    after = store.get(lint.id)
    assert after.status == "active" and after.confidence == lint.confidence
    assert {e["session"] for e in after.meta["evidence"]} == {"9c44a1f0-hook-blocked"}


def test_a_rejected_candidate_is_not_brought_back_by_its_repeat_in_the_same_session(store, tmp_path):
    path = tmp_path / "live.jsonl"
    lines = (OWN / "hook-blocked.jsonl").read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:16]))
    ingest_file(store, path)
    lint = next(m for m in candidates(store) if "ruff check" in m.title)
    store.trash.delete([lint.id])
    path.write_text("".join(lines))
    ingest_file(store, path)
    assert store.get(lint.id).status == "deleted" and store.get(lint.id).confidence == lint.confidence
    assert all("ruff check" not in m.title for m in candidates(store))


def test_thresholds_are_settings(store):
    store.config = store.config.with_overrides({"capture.min_confidence": 0.7})
    ingest_file(store, OWN / "rules-and-rejections.jsonl")
    assert {m.confidence >= 0.7 for m in candidates(store)} == {True} and len(candidates(store)) == 4


def test_a_long_session_yields_a_handful_not_hundreds(store, tmp_path):
    """A session that says the same kinds of thing again and again: at most max_per_session."""
    records = []
    for n in range(200):
        records.append({"type": "user", "sessionId": "long", "timestamp": f"2026-03-02T10:{n // 60:02d}:{n % 60:02d}Z",
                        "message": {"role": "user", "content": f"Never touch generated file number {n}, ever, it is rebuilt nightly."}})
        records.append({"type": "user", "sessionId": "long", "timestamp": f"2026-03-02T10:{n // 60:02d}:{n % 60:02d}Z",
                        "message": {"role": "user", "content": f"Always name module {n * 7919 % 1000} after its table {n}."}})
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = ingest_file(store, path)
    limit = store.config.capture.max_per_session
    assert 2 <= len(candidates(store)) <= limit
    assert len(set(report.candidates)) == len(candidates(store))


def test_a_subagents_prompt_and_meta_text_are_not_the_users_words(store, tmp_path):
    path = tmp_path / "sub.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"type": "user", "sessionId": "s", "isSidechain": True, "message": {"role": "user", "content": "Never use classes, always use functions."}},
        {"type": "user", "sessionId": "s", "isMeta": True, "message": {"role": "user", "content": [{"type": "text", "text": "Always answer in French."}]}},
    ]))
    ingest_file(store, path)
    assert candidates(store) == []


def test_capture_meets_its_targets_on_the_labelled_transcripts_of_this_repository():
    """benchmarks/eval_capture.py on the transcripts written for these tests (the real ones
    are scored by the next test, which needs ../shared)."""
    scored = _evaluate(shared=False)
    recall, precision = _totals(scored)
    assert recall >= 0.6 and precision >= 0.5, [(s.file, s.missed, s.candidates) for s in scored]


@needs_shared
def test_capture_meets_its_targets_on_the_real_transcripts():
    for s in _evaluate(shared=True):
        assert s.recall is None or s.recall >= 0.6, (s.file, s.missed)
        assert s.precision is None or s.precision >= 0.5, (s.file, s.candidates)


def _evaluate(*, shared: bool):
    results, _ = _eval_capture().evaluate()
    return [r for r in results if r.shared == shared]


def _totals(scored):
    return _eval_capture().totals(scored)


def _eval_capture():
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import eval_capture

    return eval_capture


def test_the_words_of_a_rule_are_not_always_a_rule():
    from store.capture import wording

    assert wording.read_user_text("don't worry about the old exporter for now") is None
    assert wording.read_user_text("I don't know why it fails") is None
    assert wording.read_user_text("<command-name>/clear</command-name> never mind") is None
    for chatter in ("yes", "continue", "apply phase 1", "can you retry", "Thanks!", "looks good"):
        assert wording.read_user_text(chatter) is None, chatter
    rule = wording.read_user_text("Please never commit generated files, they are rebuilt in CI.")
    assert (rule.kind, rule.type, rule.confidence) == ("rule", "convention", 0.6)
    local = wording.read_user_text("Never mind the flaky test for now, skip it this time.")
    assert local is None or local.confidence < 0.45


def test_hook_feedback_is_read_with_or_without_a_system_reminder_around_it():
    from store.capture import hook_words, wording

    wrapped = ('<system-reminder>\nPostToolUse:Edit hook blocking error from command: "lint.sh": '
               'Line too long in api/views.py\n</system-reminder>')
    assert hook_words.hook_feedback(wrapped) == ("PostToolUse:Edit", "Line too long in api/views.py")
    assert hook_words.hook_feedback("my Stop hook feedback: is great") is None
    assert wording.rejection_reason("<tool_use_error>" + wording.DECLINED + ". " + wording.REJECTION
                                    + "  too risky</tool_use_error>") == "too risky"


def test_the_confidence_of_each_kind_of_candidate_is_a_setting(store):
    default = Config.defaults().capture.confidence
    store.config = store.config.with_overrides({"capture": {"confidence": {"start_hook": 0.75, "start_fix": 0.6}}})
    ingest_file(store, OWN / "fail-then-pass.jsonl")
    ingest_file(store, OWN / "hook-blocked.jsonl")
    by_type = {m.type: m.confidence for m in candidates(store) if m.type in ("fix", "constraint")}
    assert (default.start_fix, default.start_hook) == (0.5, 0.65)
    assert by_type["fix"] == 0.6
    push = next(m for m in candidates(store) if m.type == "constraint" and "hook" in m.tags)
    assert push.confidence == 0.75
