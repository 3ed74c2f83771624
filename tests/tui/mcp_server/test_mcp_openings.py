"""Opening is a use (issue 39): MCP `get` of a memory a prime of the session listed keeps the
task as an opening (an `opened` event, confidence unchanged), once a session; a memory no prime
listed is a lookup. The lines an agent that opens memories left unopened are kept as weak
`unopened` evidence at the session's next prime or its end; an agent that never opens anything
leaves none. And what they teach a later prime for a similar task."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the memdeck[mcp] extra")

from store.engine.feedback import keep_judgment  # noqa: E402
from store.retrieval.injection import InjectionContext, prime  # noqa: E402
from tui.mcp_server.agent_session import AgentSession  # noqa: E402

pytestmark = pytest.mark.both_backends

TASK = "invoice export retries after a timeout in the billing worker"


def _billing(store, n: int = 14) -> list[str]:
    store.config = store.config.with_overrides({"injection.index_lines": 10})  # off by default
    return [store.add(f"Billing worker step {i}: the invoice export retries after a timeout, "
                      f"{'and waits a little longer each time, ' * (i % 4)}then gives up after {i + 2} tries.",
                      type=("pattern", "pitfall", "fix")[i % 3], reinforce=False,
                      title=f"Invoice export retry rule number {i} for the billing worker after timeouts "
                            f"and the long tail of slow exports").memory.id for i in range(n)]


@pytest.fixture
def agent(store):
    session = AgentSession(lambda: store)
    yield session
    session.close()


def _listed(agent, task: str = TASK) -> list[str]:
    """The index lines of a `context` for `task` (the MCP session's prime, recorded)."""
    agent.context(task, budget=600)
    (listing,) = [a for a in agent.store.sessions.activities(agent.session_id, kinds=("injected",))
                  if a.detail.get("task") == task][-1:]
    assert listing.detail["indexed"], "a small budget leaves memories for the index"
    return listing.detail["indexed"]


def test_opening_a_listed_memory_keeps_the_task_and_an_event_without_moving_confidence(agent, store):
    _billing(store)
    line = _listed(agent)[0]
    before = store.get(line).confidence
    answer = agent.get(line)
    assert answer["opened_for"] == TASK
    memory = store.get(line)
    assert memory.confidence == before and memory.use_count == 0
    (kept,) = memory.meta["opened"]
    assert kept["task"] == TASK and kept["session"] == agent.session_id
    event = store.events(line)[-1]
    assert (event.kind, event.actor, event.session_id) == ("opened", "mcp", agent.session_id)
    assert event.confidence_before == event.confidence_after == before
    assert event.detail == {"task": TASK}
    (lookup,) = store.sessions.activities(agent.session_id, kinds=("lookup",))
    assert lookup.memory_id == line and lookup.detail == {"opened": TASK}


def test_opening_an_unlisted_memory_is_only_a_lookup(agent, store):
    _billing(store)
    agent.context(TASK, budget=600)
    plants = store.add("The office plants are watered on Fridays.", type="context", reinforce=False).memory
    answer = agent.get(plants.id)
    assert "opened_for" not in answer
    assert "opened" not in store.get(plants.id).meta
    assert [e.kind for e in store.events(plants.id)] == ["created"]
    (lookup,) = store.sessions.activities(agent.session_id, kinds=("lookup",))
    assert lookup.memory_id == plants.id and not lookup.detail


def test_opening_the_same_memory_twice_in_a_session_counts_once(agent, store):
    _billing(store)
    line = _listed(agent)[0]
    agent.get(line)
    assert "opened_for" not in agent.get(line)
    assert len(store.get(line).meta["opened"]) == 1
    assert [e.kind for e in store.events(line)].count("opened") == 1
    # A memory resource read is an opening too, and the same one.
    agent.memory_text(line)
    assert len(store.get(line).meta["opened"]) == 1


def test_lines_left_unopened_count_at_the_next_prime_once_the_agent_opens_memories(agent, store):
    _billing(store)
    lines = _listed(agent)
    agent.get(lines[0])
    agent.context("invoice export gives up after tries in the billing worker", budget=600)
    for line in lines[1:]:
        (kept,) = store.get(line).meta["unopened"]
        assert kept["task"] == TASK and kept["session"] == agent.session_id
        assert [e.kind for e in store.events(line)].count("opened") == 0  # no event for a line left
    assert "unopened" not in store.get(lines[0]).meta
    # Settling again (the session's end) counts each listing once.
    agent.close()
    assert all(len(store.get(line).meta["unopened"]) == 1 for line in lines[1:])


def test_an_agent_that_never_opens_a_memory_leaves_no_unopened_lines(agent, store):
    _billing(store)
    lines = _listed(agent)
    agent.search("invoice export")  # MCP used, but nothing opened: not an agent that opens lines
    agent.context("invoice export gives up after tries in the billing worker", budget=600)
    agent.close()
    assert all("unopened" not in store.get(line).meta for line in lines)


def test_the_session_end_settles_the_last_listing(agent, store):
    _billing(store)
    lines = _listed(agent)
    agent.get(lines[0])
    assert all("unopened" not in store.get(line).meta for line in lines)  # not settled yet
    agent.close()
    assert all(len(store.get(line).meta["unopened"]) == 1 for line in lines[1:])


def _judged_elsewhere(store, ids: list[str]) -> None:
    """Judgments on tasks about other things, so that chance (the new task's median similarity
    with the judged tasks) is low and a near task stands out."""
    for number, task in enumerate(("rotate the TLS certificates of the web proxy", "translate the onboarding emails",
                                   "migrate the analytics dashboards to the new charts",
                                   "the office plants need water on Fridays", "speed up the mobile app's cold start")):
        keep_judgment(store, store.get(ids[number % len(ids)]), "not_relevant", task, None, None)


def _reason_left_out(store, lesson, memory_id: str, task: str, **changes) -> str:
    """Why a prime for `task`, under the feedback lesson with `changes`, left `memory_id` out ('' if in)."""
    store.config = replace(store.config, injection=replace(store.config.injection, feedback=replace(lesson, **changes)))
    result = prime(store, InjectionContext(task=task, budget=2000))
    return next((r.reason for r in result.excluded if r.memory.id == memory_id), "")


def test_unopened_lines_leave_a_memory_out_of_a_similar_task_only_once_there_are_enough(store):
    ids = _billing(store)
    target = ids[-1]
    _judged_elsewhere(store, ids[:-1])
    similar = "the billing worker gives up on slow invoice exports"
    for _ in range(2):
        keep_judgment(store, store.get(target), "unopened", TASK, None, "s-1")
    lesson = store.config.injection.feedback

    def out(**changes) -> str:
        return _reason_left_out(store, lesson, target, similar, **changes)

    assert "unopened" not in out(unopened_weight=0.0)
    assert "unopened" not in out(unopened_weight=1.0, unopened_after=3)
    assert "index lines left unopened counted" in out(unopened_weight=0.5, unopened_after=2)
    # An opening for a task like it weighs against them.
    keep_judgment(store, store.get(target), "opened", similar, None, "s-2")
    assert "unopened" not in out(unopened_weight=0.5, unopened_after=2, opened_weight=1.0)


def test_an_opening_outweighs_a_not_relevant_verdict_on_tasks_like_it(store):
    ids = _billing(store)
    target = ids[-1]
    _judged_elsewhere(store, ids[:-1])
    similar = "the billing worker gives up on slow invoice exports"
    keep_judgment(store, store.get(target), "not_relevant", TASK, None, "s-1")
    lesson = store.config.injection.feedback

    def out(**changes) -> str:
        return _reason_left_out(store, lesson, target, similar, **changes)

    assert out().startswith("judged not relevant")
    keep_judgment(store, store.get(target), "opened", "invoice export retries in the billing worker", None, "s-2")
    assert not out(opened_weight=1.0).startswith("judged not relevant")
    assert out(opened_weight=0.0).startswith("judged not relevant")
