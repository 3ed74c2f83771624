"""Confidence from being wanted, not from being shown (issue 40): a memory injected into prompts
again and again has its uses counted and keeps its confidence; judged helpful, or taught again,
it rises."""

from __future__ import annotations

from store.engine.feedback import give_feedback
from store.retrieval.injection import InjectionContext, prime


def test_being_injected_counts_a_use_and_adds_no_confidence(store):
    memory = store.add("Invoice exports are written as UTF-8 CSV with a header row.", type="convention",
                       title="Invoice exports are UTF-8 CSV with a header row", confidence=0.6).memory
    for n in range(5):
        result = prime(store, InjectionContext(task="invoice export csv header", session_id=f"s{n}"), record=True)
        assert memory.id in [r.memory.id for r in result.included]
    shown = store.get(memory.id)
    assert shown.use_count == 5
    assert shown.confidence == memory.confidence


def test_judged_helpful_or_taught_again_it_rises(store):
    memory = store.add("Invoice exports are written as UTF-8 CSV with a header row.", type="convention",
                       confidence=0.6).memory
    helped = give_feedback(store, memory.id, "helpful", actor="mcp")
    assert helped.after.confidence > memory.confidence
    again = store.add("Invoice exports are written as UTF-8 CSV with a header row.", type="convention",
                      confidence=0.6)
    assert not again.created and again.memory.confidence > helped.after.confidence
