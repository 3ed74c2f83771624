"""Guard rails on what an agent may do over MCP: a pinned server stays in its project; an agent's
replacement text, and its `wrong` on a memory a person stands behind, wait in the inbox for a
person; a burst of verdicts beyond `sessions.feedback_limit` is held too; each is in the memory's
history with the agent's session, and a person's accept applies it."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the memdeck[mcp] extra")

from store import Config, Store  # noqa: E402
from store.engine.curation import Curator  # noqa: E402
from store.engine.errors import InvalidInput  # noqa: E402
from tui.mcp_server.agent_session import AgentSession  # noqa: E402

pytestmark = pytest.mark.both_backends


@pytest.fixture
def pinned(db_path, clock):
    with Store.open(db_path, project="repoA", clock=clock, config=Config.defaults()) as store:
        agent = AgentSession(lambda: store, environ={}, pinned=True)
        yield agent, store
        agent.close()


def test_a_pinned_server_never_reaches_another_project(pinned):
    agent, store = pinned
    theirs = store.add("Feature flags of teamB are read at start; disable them in the console",
                       type="pattern", project="teamB", actor="ingest").memory
    ours = store.add("Feature flags here come from the env", type="pattern", actor="ingest").memory
    with pytest.raises(InvalidInput, match="pinned to project 'repoA'"):
        agent.feedback(theirs.id, "outdated", replacement="Feature flags … disable them")
    for call in (lambda: agent.get(theirs.id), lambda: agent.feedback(theirs.id, "wrong"),
                 lambda: agent.search("feature flags", project="teamB"),
                 lambda: agent.context("feature flags", project="teamB"),
                 lambda: agent.remember("x y z", type="fix", project="teamB")):
        with pytest.raises(InvalidInput, match="pinned to project 'repoA'"):
            call()
    assert store.get(theirs.id) == theirs and store.get(theirs.id).status == "active"
    assert [m["id"] for m in agent.search("feature flags")["memories"]] == [ours.id]
    assert agent.context("feature flags")["project"] == "repoA"


def test_wrong_on_a_memory_a_person_wrote_waits_in_the_inbox(pinned):
    agent, store = pinned
    rule = store.add("Never run migrations on Fridays", type="constraint").memory  # by a person (cli)
    answers = [agent.feedback(rule.id, "wrong", note=f"try {n}") for n in range(3)]
    after = store.get(rule.id)
    assert (after.status, after.confidence) == ("active", rule.confidence)  # three wrongs retire nothing
    held = [store.get(a["held"]) for a in answers]
    assert all(h.status == "pending" and h.session_id == agent.session_id for h in held)
    assert answers[0]["held_because"] == "a person wrote it: a person decides"
    judged = [e for e in store.events(rule.id) if e.kind == "judged"]
    assert [(e.session_id, e.detail["held"], e.actor) for e in judged] == [(agent.session_id, h.id, "mcp") for h in held]
    # A person accepts one: the verdict is applied once, as the agent gave it; the note is done.
    curator = Curator(store, actor="ui")
    curator.set_status([held[0].id], "active")
    assert store.get(rule.id).confidence == pytest.approx(rule.confidence - 0.2)
    assert store.get(held[0].id).status == "deleted"
    contradicted = store.events(rule.id)[-1]
    assert (contradicted.kind, contradicted.actor, contradicted.session_id) == ("contradicted", "ui", agent.session_id)
    curator.undo()  # from the workbench (`u`): the verdict and the accept, both undone
    assert store.get(rule.id).confidence == pytest.approx(rule.confidence)
    assert store.get(held[0].id).status == "pending"
    curator.set_status([held[0].id], "active")  # accepted again after the undo: applied again
    assert store.get(rule.id).confidence == pytest.approx(rule.confidence - 0.2)
    curator.undo()
    curator.delete([held[1].id])  # rejected: the memory stays as it is
    assert store.get(rule.id).confidence == pytest.approx(rule.confidence)


def test_a_memory_a_person_accepted_or_edited_is_vouched_for(pinned):
    agent, store = pinned
    accepted = store.add("Queue consumers are idempotent", type="pattern", status="pending", actor="ingest").memory
    Curator(store, actor="ui").set_status([accepted.id], "active")
    edited = store.add("Logs go to Loki", type="context", actor="ingest").memory
    store.edit(edited.id, content="Logs go to Loki, traces to Tempo", actor="ui")
    own = store.add("The agent's own note", type="context", actor="mcp").memory
    assert agent.feedback(accepted.id, "wrong")["held_because"] == "a person accepted it: a person decides"
    assert agent.feedback(edited.id, "outdated")["held_because"] == "a person edited it: a person decides"
    assert "held" not in agent.feedback(own.id, "wrong")  # an agent's own memory: applied at once
    assert store.get(own.id).confidence < own.confidence


def test_a_burst_of_feedback_is_recorded_but_held(db_path, clock):
    config = Config.defaults().with_overrides({"sessions.feedback_limit": 3})
    with Store.open(db_path, project="demo", clock=clock, config=config) as store:
        memories = [store.add(text, type="context", actor="mcp").memory for text in (
            "Caches are warmed at deploy", "Sessions live in Redis", "Uploads go to S3 directly",
            "Emails are queued through SES", "Search runs on OpenSearch 2")]
        agent = AgentSession(lambda: store, environ={})
        try:
            answers = [agent.feedback(m.id, "helpful") for m in memories]
        finally:
            agent.close()
        assert ["held" in a for a in answers] == [False, False, False, True, True]
        assert answers[3]["held_because"] == "more than 3 verdicts in this session"
        assert store.get(memories[4].id).use_count == 0 and store.get(memories[0].id).use_count == 1
        log = store.sessions.activities(agent.session_id, kinds=["feedback"])
        assert len(log) == 5 and "held for review" in log[4].summary
        Curator(store, actor="ui").set_status([answers[4]["held"]], "active")
        assert store.get(memories[4].id).use_count == 1  # accepted: applied as given
