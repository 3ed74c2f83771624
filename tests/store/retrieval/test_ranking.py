"""Relevance ranking: what a user relies on when memdeck picks memories for a task."""

from __future__ import annotations

import pytest

from store.retrieval.injection import InjectionContext, prime
from store.retrieval.ranking import keywords, rank

pytestmark = pytest.mark.both_backends


def _ids(items):
    return [r.memory.id for r in items]


def _about(result):
    """The ids of a block's memories with evidence (what the gate let in), without the filler
    after them (`injection.gate.fill`)."""
    return [r.memory.id for r in result.included if not r.filler]


def test_a_memory_about_the_files_in_play_outranks_an_unrelated_confident_one(store):
    about = store.add("Manager.Start needs the worktree set before it runs.", type="pitfall",
                      file_refs="internal/session/*.go", confidence=0.5).memory
    unrelated = store.add("Release notes are written in the changelog by hand.", type="convention",
                          confidence=0.95).memory
    ranked = rank(store, InjectionContext(task="make start safer", paths=("internal/session/manager.go",))).items
    order = _ids(ranked)
    assert order.index(about.id) < order.index(unrelated.id)
    result = prime(store, InjectionContext(task="make start safer", paths=("internal/session/manager.go",)))
    assert _about(result) == [about.id]
    assert result.included[0].signals["path"] == 1.0
    assert _ids(result.included) == [about.id]  # no filler unless the gate is sure
    store.config = store.config.with_overrides({"injection.gate.fill_strength": 1.0})
    filled = prime(store, InjectionContext(task="make start safer", paths=("internal/session/manager.go",)))
    assert _ids(filled.included) == [about.id, unrelated.id] and filled.included[1].filler


def test_the_text_of_the_task_finds_memories_by_stemmed_words(store):
    retry = store.add("Webhook deliveries are retried three times with backoff.", type="pattern").memory
    store.add("The dashboard uses server-sent events for live updates.", type="architecture")
    result = prime(store, InjectionContext(task="why does the webhook delivery retry"))
    assert _ids(result.included) == [retry.id]
    assert result.included[0].signals["text"] > 0.5


def test_the_reading_sessions_own_memories_are_left_out(store):
    own = store.add("Cache keys include the tenant id.", type="pattern", session_id="s-now").memory
    other = store.add("Cache entries expire after ten minutes.", type="pattern", session_id="s-old").memory
    result = prime(store, InjectionContext(task="when cache entries expire", session_id="s-now"))
    assert _ids(result.included) == [other.id]
    assert {r.memory.id: r.reason for r in result.excluded}[own.id] == "from this session"


def test_pending_inactive_and_deleted_memories_are_never_injected_but_shown_with_why(store):
    pending = store.add("Payments retry on a 409 conflict.", type="fix", status="pending").memory
    # Written as distinct on purpose: the sameness decision would hold a related text for review.
    inactive = store.add("Payments retry on timeouts only.", type="fix", status="inactive", reinforce=False).memory
    deleted = store.add("Payments retry forever on errors.", type="fix").memory
    store.trash.delete([deleted.id])
    result = prime(store, InjectionContext(task="payments retry conflict timeouts errors"))
    assert result.included == []
    reasons = {r.memory.id: r.reason for r in result.excluded}
    assert reasons[pending.id] == "pending review"
    assert reasons[inactive.id] == "inactive"
    assert reasons[deleted.id].startswith("deleted")
    assert result.block == ""


def test_a_task_about_nothing_the_store_knows_injects_nothing(store):
    store.add("Invoices are numbered per tenant and year.", type="convention")
    store.add("The PDF renderer needs the fonts folder mounted.", type="dependency")
    result = prime(store, InjectionContext(task="investigate the flaky bluetooth pairing on android"))
    assert result.included == [] and result.block == "" and result.tokens == 0
    assert all(r.reason for r in result.excluded)


def test_critical_constraints_are_surfaced_whatever_the_task(store):
    critical = store.add("Never store card numbers; only the processor's token.", type="constraint",
                         confidence=0.95).memory
    store.add("Buttons use the primary colour for the main action.", type="convention", confidence=0.95)
    result = prime(store, InjectionContext(task="add a dark mode toggle"))
    assert _ids(result.included) == [critical.id]
    assert result.included[0].reason.startswith("critical")


def test_same_hat_outranks_unrelated_hat_when_text_is_equal(store):
    creator = store.add("Queue workers acknowledge a job only after it is stored.", type="pattern", hat="creator").memory
    critic = store.add("Queue workers acknowledge a job only once it is stored.", type="pattern", hat="explorer",
                       reinforce=False).memory
    ranked = rank(store, InjectionContext(hat="creator", task="queue workers acknowledge jobs")).items
    assert _ids(ranked)[:2] == [creator.id, critic.id]
    assert ranked[0].signals["hat"] == 1.0 and ranked[1].signals["hat"] == 0.0


def test_memories_below_the_confidence_floor_are_out_with_the_reason(store):
    weak = store.add("Exports run at midnight UTC.", type="context", confidence=0.2).memory
    result = prime(store, InjectionContext(task="when do exports run midnight"))
    assert "below the floor" in {r.memory.id: r.reason for r in result.excluded}[weak.id]


def test_task_keywords_drop_stop_words():
    assert keywords("Make the CLI usable from scripts, and the output of it") == ["cli", "usable", "scripts", "output"]


def test_in_a_small_store_a_memory_saying_what_the_task_says_is_injected_despite_word_forms(store):
    """BM25's idf is about zero with one memory; the share of task words it uses decides, and
    "fails" counts for "fail" (3 of the 4 task words; without it 2 of 4, below the gate)."""
    from store.retrieval.injection import InjectionContext, prime

    memory = store.add("The API fails when migrations lag.", type="context",
                       title="Run migrations first").memory

    result = prime(store, InjectionContext(task="migrations fail on api start"))

    assert [r.memory.id for r in result.included] == [memory.id]
