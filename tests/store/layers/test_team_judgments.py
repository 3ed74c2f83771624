"""Your own verdicts on team memories teach your own primes (docs/team.md, "Feedback on team
memories"): an agent's not_relevant / helpful on a memory of the team store (a real PostgreSQL,
with roles) or the team file is kept in that person's own store (`layer_judgment`), and their
later primes judge the memory by it as they judge their own; no other member's prime changes, and
the team store's memory is not written."""

from __future__ import annotations

import json

import psycopg
import pytest

from postgres_server import dump
from store.engine.config import Config
from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.engine.feedback import KEEP_JUDGED
from store.layers.feedback import give
from store.layers.judgments import kept
from store.layers.layers import Layers
from store.engine.records import InjectionContext
from store.interop.copying import copy_store
from store.retrieval.injection import prime
from team_support import at_once
from test_team_feedback import TEAM_YAML, _team_events, _team_memory, _team_row, team  # noqa: F401 (fixtures)
from tui.mcp_server.agent_session import AgentSession

TASK = "when do deploys go out"
SIMILAR = "when do the deploys go out?"
OTHER = "write the release notes for the deploy"


def _primed(own: Store, task: str) -> tuple[list[str], dict[str, str]]:
    """(the ids a prime over every layer injects for `task`, the reasons of those left out)."""
    with Layers.open(own) as layers:
        result = prime(own, InjectionContext(task=task, project="demo"), layers=layers)
    return [r.memory.id for r in result.included], {r.memory.id: r.reason for r in result.excluded}


def _rows(own: Store) -> list[tuple]:
    return own.db.execute_sql("SELECT layer, project, memory_id, verdict, task FROM layer_judgment ORDER BY id").fetchall()


def test_not_relevant_on_a_team_memory_keeps_it_out_of_your_primes_for_that_task_and_like_ones(team):
    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes are out")
    ana, bo = team.own("ana"), team.own("bo")
    try:
        for task in (TASK, SIMILAR, OTHER):
            assert theirs in _primed(ana, task)[0], task
        agent = AgentSession(lambda: team.own("ana"))
        server = AgentSession(lambda: team.own("ana"))  # another long-lived server, started before
        try:
            assert theirs in server.context(TASK)["ids"]
            assert agent.context(TASK)["layers"][theirs] == "team"
            row = _team_row(team, theirs)
            said = agent.feedback(theirs, "not_relevant", note="about deploy days, not the hour")
            assert said["layer"] == "team" and said["confidence"] == said["confidence_before"]
            assert said["kept_for_you"].startswith("kept in your own store: your later primes leave this memory out")
            # Both servers, open all along on their own connections, read it at their next context.
            assert theirs not in agent.context(TASK)["ids"]
            assert theirs not in server.context(TASK)["ids"]
        finally:
            agent.close()
            server.close()
        # The team store's memory is not written (its use by the first context aside); the
        # verdict is its event there, with the task.
        assert _team_row(team, theirs)[:4] == row[:4] and json.loads(_team_row(team, theirs)[4]) == {}
        kind, author, _, detail = [e for e in _team_events(team, theirs) if e[0] == "judged"][-1]
        assert (kind, author, json.loads(detail)["task"]) == ("judged", "ana", TASK)
        assert _rows(ana) == [("team", "demo", theirs, "not_relevant", TASK)]
        included, reasons = _primed(ana, TASK)
        assert theirs not in included and reasons[theirs].startswith("judged not relevant to a similar task")
        included, reasons = _primed(ana, SIMILAR)
        assert theirs not in included and reasons[theirs].startswith("judged not relevant to a similar task")
        assert theirs in _primed(ana, OTHER)[0]  # a different task: still in
        # Another member's primes are their own: bo's store holds no judgment of it.
        for task in (TASK, SIMILAR):
            assert theirs in _primed(bo, task)[0]
        assert _rows(bo) == []
    finally:
        ana.close()
        bo.close()
    # Another process (the command line, a hook) reads it too; `memdeck log` shows the event.
    primed = team.run("ana", "prime", "--task", TASK, "--format", "json")
    assert primed.returncode == 0, primed.stderr
    assert theirs not in [i["id"] for i in json.loads(primed.stdout)["included"]]
    logged = team.run("ana", "log", "--memory", theirs, "--json")
    assert logged.returncode == 0, logged.stderr
    assert ("judged", "ana") in [(e["kind"], e["author"]) for e in map(json.loads, logged.stdout.splitlines())]


NEAR = ("Change the colours of the checkout banner", "Make the checkout banner colours match the brand")
FAR = ("Retry refund webhooks with exponential backoff", "Migrate the ledger database to a new schema",
       "Rotate the API keys of the payment provider", "Speed up the nightly export job",
       "Translate the onboarding emails to German")
NEW = "Make the checkout banner colours darker on mobile"


def test_a_helpful_verdict_counts_against_not_relevant_ones_as_for_your_own_memories(team):
    """`tests/store/retrieval/test_feedback_lesson.py`'s lesson of tasks like the new one, on team memories: two
    not_relevant verdicts for tasks near the new one leave the banner out of ana's prime (with
    the semantic signal); two helpful ones for tasks as near bring it back."""
    banner = _team_memory(team, "The checkout banner text and colours live in the CMS, not in the code")
    others = [_team_memory(team, text) for text in (
        "Refund webhooks are retried by the queue", "Ledger migrations run with alembic",
        "API keys are rotated by the ops team", "Exports are zipped before upload")]
    config = Config.defaults().with_overrides({"team.db": team.url("ana"), "team.author": "ana",
                                               "injection.feedback.similar_evidence": 0.5,
                                               "injection.feedback.floor_gain": 0})
    ana = Store.open(team.repo.parent / "ana.db", project="demo", project_root=team.repo, config=config)
    try:
        assert banner in _primed(ana, NEW)[0]
        with Layers.open(ana, file=False) as layers:
            for task in NEAR:
                give(layers, layers.get(banner), "not_relevant", task=task, evidence={"relevance": 1.0})
            for memory_id, task in zip(others, FAR):
                give(layers, layers.get(memory_id), "not_relevant", task=task, evidence={"relevance": 0.1})
        included, reasons = _primed(ana, NEW)
        assert banner not in included
        assert reasons[banner].startswith("judged not relevant to tasks nearer this one than chance")
        with team.own("bo") as bo:
            assert banner in _primed(bo, NEW)[0]
        with Layers.open(ana, file=False) as layers:
            said = give(layers, layers.get(banner), "helpful", task="Make the checkout banner colours match the logo",
                        evidence={"relevance": 0.5})
            assert said.to_json()["kept_for_you"].startswith("kept in your own store: it counts against")
            give(layers, layers.get(banner), "helpful", task="Change the checkout banner colours for the sale",
                 evidence={"relevance": 0.5})
        assert banner in _primed(ana, NEW)[0]
        assert [r[3] for r in _rows(ana) if r[2] == banner] == ["not_relevant"] * 2 + ["helpful"] * 2
    finally:
        ana.close()
    assert json.loads(_team_row(team, banner)[4]) == {}


def test_not_relevant_on_a_team_file_memory_is_kept_for_you_and_the_file_is_not_written(team):
    (team.repo / ".memdeck").mkdir()
    (team.repo / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    agent = AgentSession(lambda: team.own("ana"))
    try:
        context = agent.context("when is the deploy window")
        before = dump(team.owner_url)  # the team store as the first read left it (its project row)
        theirs = next(i for i, layer in context["layers"].items() if layer == "file")
        with pytest.raises(InvalidInput, match=f"memory {theirs} is in the file layer, read-only here") as refused:
            agent.feedback(theirs, "wrong", note="we deploy on Wednesdays now")
        assert "\n" not in str(refused.value)
        said = agent.feedback(theirs, "not_relevant")
        assert said["layer"] == "file" and "team file's memory are unchanged" in said["kept_for_you"]
        assert theirs not in agent.context("when is the deploy window")["ids"]
        assert theirs in agent.context("what happens on Tuesday mornings after the release notes")["ids"]
        assert _rows(agent.store) == [("file", "demo", theirs, "not_relevant", "when is the deploy window")]
    finally:
        agent.close()
    assert (team.repo / ".memdeck" / "team.yaml").read_text(encoding="utf-8") == TEAM_YAML
    assert dump(team.owner_url) == before
    # A verdict without a task (no context asked for) has nothing to keep: one line, nothing kept.
    agent = AgentSession(lambda: team.own("ana"))
    try:
        with pytest.raises(InvalidInput, match="kept for you with its task, and there is none"):
            agent.feedback(theirs, "helpful")
        assert len(_rows(agent.store)) == 1
    finally:
        agent.close()


def test_judgments_of_a_team_memory_deleted_since_are_left_unread_and_harmless(team):
    gone = _team_memory(team, "Deploys go out on Tuesdays after the release notes are out")
    ana = team.own("ana")
    try:
        with Layers.open(ana, file=False) as layers:
            give(layers, layers.get(gone), "not_relevant", task=TASK)
        with psycopg.connect(team.owner_url) as conn:  # the owner deletes it for good
            conn.execute("DELETE FROM memory WHERE id = %s", (gone,))
        again = _team_memory(team, "Deploys go out on Tuesday mornings after the release notes")
        included, reasons = _primed(ana, TASK)
        assert again in included and gone not in included and gone not in reasons
        assert len(_rows(ana)) == 1  # left where it is, read by no prime
    finally:
        ana.close()


@pytest.mark.slow
def test_two_processes_keeping_judgments_at_once_keep_the_newest(team):
    """The hook and the MCP server (two connections to the same own store) keep verdicts on the
    same team memory at the same time: none fails, and the newest `KEEP_JUDGED` stay."""
    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes are out")
    rounds = 15
    def member(name: str, start) -> None:
        own = team.own("ana")
        with Layers.open(own, file=False) as layers:
            memory = layers.get(theirs)
            start.wait()
            for n in range(rounds):
                give(layers, memory, "not_relevant", task=f"{name} task {n}")
        own.close()

    failures = at_once(member, ("hook", "mcp"))
    assert not failures, failures
    ana = team.own("ana")
    try:
        tasks = [r[4] for r in _rows(ana)]
        assert len(tasks) == KEEP_JUDGED
        assert {f"{name} task {rounds - 1}" for name in ("hook", "mcp")} <= set(tasks)
        with Layers.open(ana, file=False) as layers:
            judged = kept(ana, "team", [layers.get(theirs)])[theirs]["not_relevant"]
        assert [j["task"] for j in judged] == tasks
    finally:
        ana.close()
    judged_events = [e for e in _team_events(team, theirs) if e[0] == "judged"]
    assert len(judged_events) == 2 * rounds  # every verdict is the team store's event


def test_your_own_store_on_postgresql_keeps_them_too(team, postgres_server, tmp_path):
    """The own store may be a PostgreSQL database (migration 14 on both back-ends)."""
    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes are out")
    config = Config.defaults().with_overrides({"team.db": team.url("ana"), "team.author": "ana"})
    with Store.open(postgres_server.fresh_database(), project="demo", project_root=team.repo, config=config) as own:
        assert theirs in _primed(own, TASK)[0]
        with Layers.open(own, file=False) as layers:
            give(layers, layers.get(theirs), "not_relevant", task=TASK, evidence={"relevance": 0.4, "cosine": 0.3})
            assert kept(own, "team", [layers.get(theirs)])[theirs]["not_relevant"][0]["relevance"] == 0.4
        assert theirs not in _primed(own, SIMILAR)[0]
        url = own.path
    # `memdeck copy` carries them to another store (here back to a SQLite file), ids and all.
    copy_store(url, tmp_path / "copied.db")
    with Store.open(tmp_path / "copied.db", project="demo", project_root=team.repo, config=config) as copied:
        assert theirs not in _primed(copied, SIMILAR)[0]
        with Layers.open(copied, file=False) as layers:
            give(layers, layers.get(theirs), "helpful", task=OTHER)  # the id generator goes on after the copied row
        assert [r[3] for r in _rows(copied)] == ["not_relevant", "helpful"]


def test_a_memory_you_shared_and_judged_not_relevant_stays_out_in_its_team_copy_too(team):
    """A memory in two layers (shared, same id) is judged in your own copy (its meta): the team
    copy does not take its place in your prime, for that task."""
    from store.interop.sharing import share

    bo = team.own("bo")
    try:
        mine = bo.add("Deploys go out on Tuesdays after the release notes are out", type="convention").memory
        with Layers.open(bo, file=False) as layers:
            share(bo, layers.store("team"), [mine.id])
            said = give(layers, layers.get(mine.id), "not_relevant", task=TASK)
            assert "kept_for_you" not in said.to_json()  # your own memory: kept on it, as always
        assert _rows(bo) == []
        included, reasons = _primed(bo, TASK)
        assert mine.id not in included
        assert reasons[mine.id].startswith("judged not relevant to a similar task")
    finally:
        bo.close()
    with team.own("ana") as ana:  # the team's copy is not judged for anyone else
        assert mine.id in _primed(ana, TASK)[0]


def test_a_verdict_the_team_store_does_not_take_is_not_kept_for_you_either(team):
    from store.backends.postgres import WRITE_LOCK
    from store.engine.errors import StoreError

    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes are out")
    ana = team.own("ana")
    try:
        with Layers.open(ana, file=False) as layers, psycopg.connect(team.owner_url) as other:
            memory = layers.get(theirs)
            other.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))  # a long import holds it
            with pytest.raises(StoreError, match="write lock is held by another writer") as busy:
                give(layers, memory, "not_relevant", task=TASK)
            other.rollback()
            assert "\n" not in str(busy.value)
            assert _rows(ana) == [] and [e for e in _team_events(team, theirs) if e[0] == "judged"] == []
            give(layers, memory, "not_relevant", task=TASK)  # the lock free: recorded there and kept here
        assert [r[3] for r in _rows(ana)] == ["not_relevant"]
    finally:
        ana.close()
