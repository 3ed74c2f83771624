"""Feedback on team memories (docs/team.md, "Feedback on team memories"): a memory read from the
team store (a real PostgreSQL, with roles) gets its feedback there, as the connecting database
user, within what the role allows; the trail names who gave it; the team file stays read-only."""

from __future__ import annotations

import json
import os
import subprocess
from functools import partial

import psycopg
import pytest

from tests.cli_support import run_in_process
from postgres_server import dump
from team_support import as_member, at_once
from store.backends.postgres_roles import Refused
from store.engine.config import Config
from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.layers.layers import Layers
from store.engine.records import InjectionContext
from store.retrieval.injection import prime
from tui.mcp_server.agent_session import AgentSession

TEAM_YAML = """\
format: memdeck
version: 1
memories:
- type: convention
  title: Deploy window
  content: Deploys happen on Tuesday mornings only, after the release notes are out.
"""


@pytest.fixture
def team(postgres_server, tmp_path, monkeypatch):
    """A team store with a reader (ana), a writer (bo) and a reviewer (di); `url(user)`, and
    `own(user)`: that person's own SQLite store (project demo, in a git repository) whose
    config names the team store as them."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    owner_url = postgres_server.fresh_database()
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    url = partial(as_member, owner_url)  # the team store as that database user

    def own(user: str) -> Store:
        config = Config.defaults().with_overrides({"team.db": url(user), "team.author": user})
        return Store.open(tmp_path / f"{user}.db", project="demo", project_root=repo, config=config)

    def run(user: str, *args: str, team_store: bool = False):
        config = tmp_path / f"{user}.yml"
        config.write_text(f"team:\n  db: '{url(user)}'\n  author: {user}\n", encoding="utf-8")
        env = {**os.environ, "MEMDECK_DB": url(user) if team_store else str(tmp_path / f"{user}.db"),
               "MEMDECK_PROJECT": "demo", "MEMDECK_CONFIG": str(config), "XDG_CACHE_HOME": str(tmp_path / "cache")}
        return run_in_process([*args], env=env, cwd=repo)

    assert run("postgres", "team", "init", owner_url, team_store=True).returncode == 0
    for user, role in (("ana", "reader"), ("bo", "writer"), ("di", "reviewer")):
        assert run("postgres", "team", "grant", user, role, team_store=True).returncode == 0
    team_ = type("Team", (), {})()
    team_.url, team_.own, team_.run, team_.owner_url, team_.repo = url, own, run, owner_url, repo
    return team_


def _team_memory(team, text: str, *, actor: str = "mcp") -> str:
    """A memory bo adds to the team store (as an agent's remember: no person vouches for it)."""
    with Store.open(team.url("bo"), project="demo", config=Config.defaults()) as bo:
        return bo.add(text, type="convention", actor=actor).memory.id


def _team_row(team, memory_id: str) -> tuple:
    with psycopg.connect(team.owner_url) as conn:
        return conn.execute("SELECT title, confidence, use_count, status, meta FROM memory WHERE id = %s",
                            (memory_id,)).fetchone()


def _team_events(team, memory_id: str) -> list[tuple]:
    with psycopg.connect(team.owner_url) as conn:
        return conn.execute("SELECT kind, author, actor, detail FROM event WHERE memory_id = %s ORDER BY id",
                            (memory_id,)).fetchall()


def test_an_agents_verdicts_on_a_team_memory_are_recorded_in_the_team_store_as_the_reader(team):
    helpful = _team_memory(team, "Deploys go out on Tuesdays after the release notes")
    wrong = _team_memory(team, "The staging database keeps its data across nights")
    judged = _team_memory(team, "Feature flags are removed two sprints after launch")
    title, confidence, uses, _, meta = _team_row(team, helpful)
    agent = AgentSession(lambda: team.own("ana"))
    try:
        context = agent.context("when do deploys go out")
        assert context["layers"][helpful] == "team"
        assert _team_row(team, helpful)[2] == uses + 1  # put into the agent's context: used once
        said = agent.feedback(helpful, "helpful", note="right on time")
        assert said["layer"] == "team" and said["confidence"] > said["confidence_before"] == confidence  # shown: counted, not raised
        assert _team_row(team, helpful)[:3] == (title, said["confidence"], uses + 2)
        said = agent.feedback(wrong, "wrong", note="it resets every night")
        assert said["layer"] == "team" and said["confidence"] < said["confidence_before"]
        agent.feedback(judged, "not_relevant")
        # The own store holds none of it: no copy, no event.
        assert agent.store.found([helpful, wrong, judged]) == {}
    finally:
        agent.close()
    kinds = [(kind, author, actor) for kind, author, actor, _ in _team_events(team, helpful)]
    assert kinds == [("created", "bo", "mcp"), ("used", "ana", "prime"), ("used", "ana", "mcp")]
    assert _team_events(team, wrong)[-1][:3] == ("contradicted", "ana", "mcp")
    # Not relevant: the task is in the event, not kept on the team's memory (every member's
    # primes would leave it out).
    kind, author, _, detail = _team_events(team, judged)[-1]
    assert (kind, author) == ("judged", "ana") and json.loads(detail)["task"] == "when do deploys go out"
    assert json.loads(_team_row(team, judged)[4]) == {}
    # `memdeck log --memory ID` in ana's own project (the team layer beside it) names her.
    logged = team.run("ana", "log", "--memory", wrong, "--json")
    assert logged.returncode == 0, logged.stderr
    assert [(e["kind"], e["author"]) for e in map(json.loads, logged.stdout.splitlines())] == [
        ("created", "bo"), ("contradicted", "ana")]
    assert "ana  contradicted  via mcp" in team.run("ana", "log", "--memory", wrong).stdout


def test_a_verdict_a_person_must_confirm_waits_in_the_team_inbox_and_a_reader_may_not_add_it(team):
    vouched = _team_memory(team, "Releases are cut from main on Mondays", actor="cli")  # a person wrote it
    before = dump(team.owner_url)
    reader = AgentSession(lambda: team.own("ana"))
    try:
        with pytest.raises(Refused, match="ana is a reader.*nothing was changed"):
            reader.feedback(vouched, "wrong", note="we cut on Tuesdays now")
    finally:
        reader.close()
    assert dump(team.owner_url) == before
    writer = AgentSession(lambda: team.own("bo"))
    try:
        said = writer.feedback(vouched, "wrong", note="we cut on Tuesdays now")
    finally:
        writer.close()
    assert said["held"] and said["confidence"] == said["confidence_before"]
    with Store.open(team.url("di"), project="demo", config=Config.defaults()) as reviewer:
        held = reviewer.get(said["held"])
        assert (held.status, held.meta["held_feedback"]["target"]) == ("pending", vouched)
        assert reviewer.db.execute_sql("SELECT owner FROM memory WHERE id = %s", (held.id,)).fetchone()[0] == "bo"
        assert reviewer.events(vouched)[-1].kind == "judged" and reviewer.events(vouched)[-1].author == "bo"


def test_a_verdict_that_would_change_the_team_files_memory_is_refused_in_one_line(team):
    """`wrong` and `outdated` would change the memory for everyone: the file changes through a
    pull request. (`not_relevant` and `helpful` are kept for you: tests/store/layers/test_team_judgments.py.)"""
    (team.repo / ".memdeck").mkdir()
    (team.repo / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    agent = AgentSession(lambda: team.own("ana"))
    try:
        found = agent.search("deploy window")["memories"]
        theirs = next(m["id"] for m in found if m["layer"] == "file")
        with pytest.raises(InvalidInput, match=f"memory {theirs} is in the file layer, read-only here") as refused:
            agent.feedback(theirs, "outdated", note="we deploy on Wednesdays now")
        assert "\n" not in str(refused.value)
    finally:
        agent.close()
    assert (team.repo / ".memdeck" / "team.yaml").read_text(encoding="utf-8") == TEAM_YAML


def test_prime_record_counts_a_team_memorys_use_in_the_team_store_and_the_log_names_the_reader(team):
    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes")
    primed = team.run("ana", "prime", "--task", "when do deploys go out", "--record", "--format", "json")
    assert primed.returncode == 0, primed.stderr
    assert {i["id"]: i["layer"] for i in json.loads(primed.stdout)["included"]}[theirs] == "team"
    assert _team_row(team, theirs)[2] == 1
    assert _team_events(team, theirs)[-1][:3] == ("used", "ana", "prime")
    # A dry run records nothing.
    assert team.run("ana", "prime", "--task", "when do deploys go out").returncode == 0
    assert _team_row(team, theirs)[2] == 1


def test_a_reader_changes_feedback_columns_but_not_the_text_through_psql(team):
    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes")
    with psycopg.connect(team.url("ana"), autocommit=True) as conn:
        before = _team_row(team, theirs)[1]
        # One feedback step; a jump to any confidence is refused (issue 41: tests/store/layers/test_team_guard.py).
        conn.execute("UPDATE memory SET use_count = use_count + 1, confidence = %s, version = version + 1 "
                     "WHERE id = %s", (before + 0.1, theirs))
        for statement in ("UPDATE memory SET title = 'Deploys on Fridays' WHERE id = %s",
                          "UPDATE memory SET content = 'Deploys on Fridays' WHERE id = %s",
                          "UPDATE memory SET meta = '{}' WHERE id = %s"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement, (theirs,))
    title, confidence, uses, _, _ = _team_row(team, theirs)
    assert (title, confidence, uses) == ("Deploys go out on Tuesdays after the release notes", before + 0.1, 1)


@pytest.mark.slow
def test_members_recording_use_at_once_all_count(team):
    """Two members' primes record the same team memory's use at the same time: every use counts
    (the count goes up in the UPDATE, the confidence is planned under the write lock)."""
    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes")
    rounds = 15
    def member(user: str, start) -> None:
        own = team.own(user)
        with Layers.open(own, file=False) as layers:
            start.wait()
            for _ in range(rounds):
                prime(own, InjectionContext(task="when do deploys go out", project="demo"), record=True,
                      layers=layers)
            assert layers.unrecorded == []
        own.close()

    failures = at_once(member, ("ana", "bo"))
    assert not failures, failures
    assert _team_row(team, theirs)[2] == 2 * rounds
    used = [author for kind, author, _, _ in _team_events(team, theirs) if kind == "used"]
    assert sorted(used) == ["ana"] * rounds + ["bo"] * rounds


def test_changing_another_layers_memory_from_the_command_line_says_where_it_is(team):
    (team.repo / ".memdeck").mkdir()
    (team.repo / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes")
    listed = {m["title"]: m for m in json.loads(team.run("ana", "list", "--json").stdout)}
    in_file = listed["Deploy window"]["id"]
    before = dump(team.owner_url)
    for args in (("edit", in_file, "--title", "Deploys on Fridays"), ("delete", in_file), ("accept", in_file)):
        result = team.run("ana", *args)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines() == [
            f"memdeck: memory {in_file} is in the file layer, read-only here: the team file changes through "
            "a pull request; nothing was changed"]
    result = team.run("ana", "edit", theirs, "--title", "Deploys on Fridays")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert f"memory {theirs} is in the team layer, not your own store" in result.stderr
    assert (team.repo / ".memdeck" / "team.yaml").read_text(encoding="utf-8") == TEAM_YAML
    assert dump(team.owner_url) == before
    # An id no layer holds is still "no memory", exit 4.
    assert team.run("ana", "edit", "mem-0-none", "--title", "x").returncode == 4


def test_a_team_store_busy_past_the_lock_wait_leaves_the_use_unrecorded_and_the_prime_goes_on(team):
    from store.backends.postgres import WRITE_LOCK

    theirs = _team_memory(team, "Deploys go out on Tuesdays after the release notes")
    own = team.own("ana")
    try:
        with Layers.open(own, file=False) as layers, psycopg.connect(team.owner_url) as other:
            other.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))  # a long import holds it
            result = prime(own, InjectionContext(task="when do deploys go out", project="demo"), record=True,
                           layers=layers)
            other.rollback()
            assert theirs in [r.memory.id for r in result.included]
            assert len(layers.unrecorded) == 1 and layers.unrecorded[0][0] == "team"
            assert "write lock is held by another writer" in layers.unrecorded[0][1]
            # The next prime, with the lock free, records as usual (the lock wait was reset).
            prime(own, InjectionContext(task="when do deploys go out", project="demo"), record=True, layers=layers)
            # (back to the team connection's own: store.backends.postgres.TEAM_LOCK_TIMEOUT_MS)
            assert layers.store("team").db.execute_sql("SHOW lock_timeout").fetchone()[0] == "1s"
    finally:
        own.close()
    assert _team_row(team, theirs)[2] == 1
