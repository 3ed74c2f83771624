"""Feedback `not_relevant`: the memory's confidence stays, the task is kept with the memory's
evidence for it, the same task's next context leaves the memory out while a task it is about
still gets it, and the project's memories learn a relevance floor from the judgments. And
`memdeck eval --feedback-folds` measures it on the labelled dev set."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the memdeck[mcp] extra")

from store.engine.feedback import give_feedback  # noqa: E402
from store.retrieval import judged  # noqa: E402
from store.retrieval.injection import InjectionContext, prime  # noqa: E402
from tests.data_support import SHARED, needs_shared  # noqa: E402
from tui.mcp_server.agent_session import AgentSession  # noqa: E402

pytestmark = pytest.mark.both_backends

TASK = "Add partial refunds to the checkout service"


@pytest.fixture
def agent(store):
    session = AgentSession(lambda: store)
    yield session
    session.close()


def _ids(result):
    return [r.memory.id for r in result.included]


def test_not_relevant_keeps_confidence_and_leaves_the_memory_out_of_the_same_task(agent, store):
    cents = store.add("Checkout totals are computed in integer cents; float rounding broke refunds",
                      type="pitfall", tags=["checkout"]).memory
    banner = store.add("The refunds page of the checkout service has a banner translated through the marketing CMS", type="context").memory
    given = agent.context(TASK)
    assert banner.id in given["ids"] and cents.id in given["ids"]
    used = store.get(banner.id).confidence  # the context was a use
    answer = agent.feedback(banner.id, "not_relevant", note="marketing copy, not refunds")
    assert answer["confidence"] == answer["confidence_before"] == used == store.get(banner.id).confidence
    assert answer["status"] == "active"
    event = store.events(banner.id)[-1]
    assert (event.kind, event.actor, event.session_id) == ("judged", "mcp", agent.session_id)
    assert event.detail == {"verdict": "not_relevant", "note": "marketing copy, not refunds", "task": TASK}
    (kept,) = store.get(banner.id).meta["not_relevant"]
    assert kept["task"] == TASK and kept["session"] == agent.session_id and "relevance" in kept
    # The same task (in other words' order) again: the banner is out, with the reason; cents stays.
    again = agent.context("Add partial refunds to the checkout service.")
    assert again["ids"] == [cents.id]
    result = prime(store, InjectionContext(task=TASK))
    (out,) = [r for r in result.excluded if r.memory.id == banner.id]
    assert out.reason.startswith("judged not relevant to a similar task")
    # A task the banner is about still gets it: right elsewhere, it is injected elsewhere.
    assert banner.id in _ids(prime(store, InjectionContext(task="Translate the checkout page banner in the CMS")))


def test_the_projects_memories_learn_a_floor_from_many_judgments(store):
    lesson = replace(store.config.injection.feedback, floor_gain=8.0, floor_helpful=10.0)  # off by default
    about = store.add("Refund webhooks are retried with exponential backoff", type="pattern").memory
    # Distinct on purpose (`reinforce=False`): one word apart, the sameness decision would take
    # each for an update of the one before.
    loose = [store.add(f"Refund {word} notes for the finance team", type="context", reinforce=False).memory
             for word in ("ledger", "export", "audit", "review", "archive", "summary", "calendar", "report", "budget")]
    assert judged.floor(store.get_many([m.id for m in [about, *loose]]), lesson) == 0.0
    for number, memory in enumerate(loose):
        give_feedback(store, memory.id, "not_relevant", task=f"refund task {number}",
                      evidence={"relevance": 0.2, "cosine": 0.1})
    give_feedback(store, about.id, "helpful", task="retry the refund webhooks", evidence={"relevance": 0.9})
    assert 0.2 < judged.floor(store.get_many([m.id for m in [about, *loose]]), lesson) < 0.201  # nine at 0.2, no helpful below
    # A helpful judgment at that level outweighs them (FLOOR_HELPFUL): no floor.
    give_feedback(store, about.id, "helpful", task="the refund ledger", evidence={"relevance": 0.15})
    assert judged.floor(store.get_many([m.id for m in [about, *loose]]), lesson) == 0.0
    assert store.get(loose[0].id).confidence == loose[0].confidence  # never a confidence change


def test_judgments_written_by_another_connection_change_the_next_prime(db_path, clock):
    from store import Store
    from store.engine.config import Config

    config = Config.defaults().with_overrides({"injection.feedback.floor_gain": 8})  # off by default
    store = Store.open(db_path, project="demo", clock=clock, config=config)

    strong = store.add("Refund exports are zipped before the upload to the ledger", type="pattern").memory
    weak = store.add("Exports run nightly", type="context").memory
    others = [store.add(f"The {word} page has its own style sheet", type="context", reinforce=False).memory
              for word in
              ("billing", "audit", "review", "archive", "summary", "calendar", "report", "budget", "team")]
    task = "zip the refund exports before the upload to the ledger"
    first = prime(store, InjectionContext(task=task))
    relevance = {r.memory.id: r.relevance for r in first.included}
    assert {strong.id, weak.id} <= set(relevance) and relevance[weak.id] < relevance[strong.id]
    with Store.open(db_path, project="demo") as other:  # another process's connection
        for number, memory in enumerate(others):
            give_feedback(other, memory.id, "not_relevant", task=f"task {number}",
                          evidence={"relevance": relevance[weak.id]})
    second = prime(store, InjectionContext(task=task))
    (out,) = [r for r in second.excluded if r.memory.id == weak.id]
    assert "where agents judged this project's memories not relevant" in out.reason
    assert strong.id in _ids(second)
    store.close()


@needs_shared
@pytest.mark.sqlite_only
@pytest.mark.slow
def test_eval_feedback_folds_reports_precision_and_recall_before_and_after(run_cli):
    result = run_cli("eval", str(SHARED / "eval" / "dev-retrieval.yaml"), "--feedback-folds", "--budget", "2000", "--json")
    assert result.returncode == 0, result.stderr
    (folds,) = json.loads(result.stdout).values()
    assert len(folds) == 2
    first, second = folds
    assert set(first["fed"]) == set(second["measured"]) and not set(first["fed"]) & set(first["measured"])
    for fold in folds:
        assert fold["verdicts"]["not_relevant"] > 0 and fold["verdicts"]["helpful"] > 0
    # Feedback does no harm on the held-out half (the goal, +0.10 precision, is not met:
    # docs/mcp.md says why); the recorded figures are in the docs, not pinned here.
    for key in ("precision", "budget_recall"):
        before = sum(f["before"][key] for f in folds) / 2
        after = sum(f["after"][key] for f in folds) / 2
        assert after >= before - 0.02, key
    table = run_cli("eval", str(SHARED / "eval" / "dev-retrieval.yaml"), "--feedback-folds", check=True).stdout
    assert "mean  before" in table and "budget_recall" in table and "feedback given: helpful" in table
