"""The session-start block's standing rules (`injection.session_start`, issue 38): the rules of
how work is done here, whatever the task, at their own confidence bar, count and budget, the
most confident first and the most recently confirmed first among equals."""

from __future__ import annotations

import pytest

from store.retrieval.injection import InjectionContext, prime_session_start

pytestmark = pytest.mark.both_backends


def _start(store, **settings):
    store.config = store.config.with_overrides({"injection": settings}, "test")
    return {r.memory.title for r in prime_session_start(store, InjectionContext(session_id="s1")).included}


def test_a_rule_below_the_critical_confidence_starts_the_session_at_the_standing_bar(store):
    store.add("Never write code before the plan is approved", type="convention", confidence=0.6)
    store.add("The invoices table is partitioned by month", type="context", confidence=0.95)
    assert _start(store, session_start={"min_confidence": 0.9}) == set()  # the bar before issue 38
    titles = _start(store, session_start={"min_confidence": 0.5})
    assert titles == {"Never write code before the plan is approved"}  # a context is no standing rule


def test_the_standing_rules_are_the_most_confident_within_their_count(store):
    rules = ("Never squash release commits", "Always pin the ruff version", "Keep fixtures under tests/data",
             "Run migrations through alembic only")
    for rule, confidence in zip(rules, (0.55, 0.7, 0.8, 0.65)):
        store.add(rule, type="convention", confidence=confidence)
    titles = _start(store, session_start={"min_confidence": 0.5, "limit": 2})
    assert titles == {"Keep fixtures under tests/data", "Always pin the ruff version"}


def test_among_equals_the_rule_confirmed_last_goes_first(store, clock):
    older = store.add("Always run the linter before committing", type="convention", confidence=0.6)
    clock.advance(seconds=60)
    store.add("Never push to main directly", type="convention", confidence=0.6)
    clock.advance(seconds=60)
    older = older.memory
    store.update(older.id, older, content="Always run the linter before committing, ruff included", actor="test")
    titles = _start(store, session_start={"min_confidence": 0.5, "limit": 1})
    assert titles == {"Always run the linter before committing"}


def test_the_session_budget_bounds_the_standing_rules(store):
    rules = ("Never squash release commits", "Always pin the ruff version", "Keep fixtures under tests/data",
             "Run migrations through alembic only", "Name branches after their issue", "Write dates in UTC")
    for rule in rules:
        store.add(rule + ". " + " ".join(f"{rule.split()[-1]}{n}" for n in range(30)), type="convention",
                  confidence=0.6)
    wide = _start(store, session_start={"min_confidence": 0.5, "limit": 10}, session_budget=2000)
    narrow = _start(store, session_start={"min_confidence": 0.5, "limit": 10}, session_budget=200)
    assert len(wide) == 6 and 0 < len(narrow) < 6


def test_the_critical_limit_holds_in_a_tasks_block_too(store):
    from store.retrieval.injection import prime

    rules = ("Payments go through the ledger service", "Payments are retried by the ledger queue only",
             "Payments in euros are rounded by the ledger", "Payments never bypass the ledger audit log",
             "Payments refunds are ledger entries too", "Payments webhooks are verified before the ledger")
    for rule in rules:
        store.add(rule, type="constraint", confidence=0.95)
    store.config = store.config.with_overrides({"injection": {"critical": {"limit": 3}}}, "test")
    result = prime(store, InjectionContext(task="payments ledger"))
    critical = [r for r in result.included if r.signals.get("critical")]
    assert len(critical) == 3
    assert any("over the limit" in (r.reason or "") for r in result.excluded)
