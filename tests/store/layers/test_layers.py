"""Memory in layers (docs/team.md): the own store, the team store (`team.db`, a real PostgreSQL)
and the repository's team file (`team.file`), read together by one read path, every record
marked with its layer; writes stay in the own store."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_support import run_in_process
from store.engine.config import Config
from store.engine.core import Store
from store.engine.errors import ConfigError, InvalidInput, NotFound
from store.layers.layers import Layers, checked_team_url, team_file_path
from store.engine.records import InjectionContext
from store.retrieval.injection import prime

TEAM_YAML = """\
format: memdeck
version: 1
memories:
- type: pitfall
  content: The staging database resets every night at 02:00 UTC; never keep test data there.
  tags: [staging]
- type: convention
  title: Deploy window
  content: Deploys happen on Tuesday mornings only, after the release notes are out.
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A project folder (its own git root) with an own store, an isolated cache; `run(...)` runs
    memdeck there."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    own = tmp_path / "own.db"

    def run(*args: str, env: dict | None = None, check: bool = True):
        full = {**os.environ, "MEMDECK_DB": str(own), **(env or {})}
        result = run_in_process([*args], env=full, cwd=root)
        if check and result.returncode != 0:
            raise AssertionError(f"memdeck {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
        return result

    run.root = root
    run.own = own
    return run


def _user_config(tmp_path: Path, text: str) -> None:
    folder = tmp_path / "config-home" / "memdeck"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yml").write_text(text, encoding="utf-8")


def _json(result) -> list | dict:
    return json.loads(result.stdout)


# -- the file layer (SQLite own store + the repository's file) ---------------------------------------


def test_the_file_layer_is_read_beside_the_own_store_and_marked(repo):
    mine = _json(repo("add", "Release notes live in docs/releases", "--type", "convention", "--json"))["id"]
    (repo.root / ".memdeck").mkdir()
    (repo.root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    listed = _json(repo("list", "--json"))
    assert {m["layer"] for m in listed} == {"own", "file"}
    assert {m["id"]: m["layer"] for m in listed}[mine] == "own"
    assert sorted(m["title"] for m in listed if m["layer"] == "file")[0] == "Deploy window"
    assert [m["layer"] for m in _json(repo("list", "--json", "--layer", "own"))] == ["own"]
    hits = _json(repo("search", "staging database", "--json"))
    assert hits and hits[0]["layer"] == "file"
    shown = _json(repo("show", hits[0]["id"], "--json"))
    assert shown["layer"] == "file" and shown["content"].startswith("The staging database")
    primed = _json(repo("prime", "--task", "when do deploys go out after release notes", "--format", "json"))
    layers = {item["layer"] for item in primed["included"]}
    assert "file" in layers
    # The same file read again gives the same ids (the cache is the file's, not the run's).
    assert _json(repo("list", "--json", "--layer", "file")) == [m for m in listed if m["layer"] == "file"]


def test_writes_stay_in_the_own_store_and_the_file_is_untouched(repo):
    (repo.root / ".memdeck").mkdir()
    team_file = repo.root / ".memdeck" / "team.yaml"
    team_file.write_text(TEAM_YAML, encoding="utf-8")
    added = _json(repo("add", "Never run migrations by hand on staging", "--type", "pitfall", "--json"))
    assert added["layer"] == "own"
    assert team_file.read_text(encoding="utf-8") == TEAM_YAML
    with Store.open(repo.own, project="demo", config=Config.defaults()) as own:
        assert [m.id for m in own_list(own)] == [added["id"]]


def own_list(store):
    from store.browse.search import MemoryFilter, list_memories

    return list_memories(store, MemoryFilter())


def test_a_team_file_outside_the_repository_is_refused(repo, tmp_path):
    (tmp_path / "elsewhere.yaml").write_text(TEAM_YAML, encoding="utf-8")
    (repo.root / ".memdeck.yml").write_text("team:\n  file: ../elsewhere.yaml\n", encoding="utf-8")
    result = repo("list", "--json")
    assert _json(result) == []
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "outside the project" in lines[0] and "file layer is not read" in lines[0]


def test_a_damaged_team_file_is_one_line_and_the_own_store_still_reads(repo):
    mine = _json(repo("add", "Use the staging VPN", "--type", "context", "--json"))["id"]
    (repo.root / ".memdeck").mkdir()
    (repo.root / ".memdeck" / "team.yaml").write_text("memories: [ {", encoding="utf-8")
    result = repo("list", "--json")
    assert [m["id"] for m in _json(result)] == [mine]
    assert len(result.stderr.strip().splitlines()) == 1 and "not valid YAML" in result.stderr


def test_a_ralph_markdown_file_is_a_file_layer_too(repo):
    (repo.root / "MEMORY.md").write_text(
        "# Memories\n\n## Patterns\n\n### mem-1-abcd\n> Wrap every handler in the retry decorator.\n"
        "<!-- tags: retries | created: 2026-01-01 -->\n", encoding="utf-8")
    (repo.root / ".memdeck.yml").write_text("team:\n  file: MEMORY.md\n", encoding="utf-8")
    listed = _json(repo("list", "--json"))
    assert [(m["layer"], m["content"]) for m in listed] == [("file", "Wrap every handler in the retry decorator.")]


def test_team_urls_from_a_repository_may_not_name_files(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / ".memdeck.yml").write_text("team:\n  db: /home/me/other.db\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a PostgreSQL URL"):
        checked_team_url(Config.load(project))
    for url in ("postgresql://me@db.example/team?passfile=/home/me/.pgpass",
                "postgresql://me@db.example/team?sslkey=/etc/key",
                "postgresql://me@%2Ftmp%2Fsock/team",
                "postgresql://me@/team?host=/run/postgresql"):
        (project / ".memdeck.yml").write_text(f"team:\n  db: '{url}'\n", encoding="utf-8")
        with pytest.raises(ConfigError):
            checked_team_url(Config.load(project))
    (project / ".memdeck.yml").write_text("team:\n  db: 'postgresql://me@db.example/team?sslmode=require'\n",
                                          encoding="utf-8")
    # A server the person's own config does not allow (team.servers) is not connected to.
    with pytest.raises(ConfigError, match="team.servers"):
        checked_team_url(Config.load(project))
    _user_config(tmp_path, "team:\n  servers: other.example, db.example\n")
    assert checked_team_url(Config.load(project)).endswith("sslmode=require")
    # The person's own config may name a socket folder.
    (project / ".memdeck.yml").unlink()
    _user_config(tmp_path, "team:\n  db: 'postgresql://me@/team?host=/run/postgresql'\n")
    assert checked_team_url(Config.load(project)) == "postgresql://me@/team?host=/run/postgresql"


def test_team_file_path_stays_inside_the_root(tmp_path):
    root = tmp_path / "root"
    (root / ".memdeck").mkdir(parents=True)
    (root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    assert team_file_path(Config.defaults(), root) == (root / ".memdeck" / "team.yaml").resolve()
    (root / "out.yaml").symlink_to(tmp_path / "x.yaml")
    (tmp_path / "x.yaml").write_text(TEAM_YAML, encoding="utf-8")
    config = Config.defaults().with_overrides({"team.file": "out.yaml"})
    with pytest.raises(ConfigError, match="outside the project"):
        team_file_path(config, root)


# -- the team layer (SQLite own store + a real PostgreSQL team store) -------------------------------


@pytest.fixture
def team_url(postgres_server, tmp_path):
    url = postgres_server.fresh_database()
    _user_config(tmp_path, f"team:\n  db: '{url}'\n")
    return url


def test_the_team_store_is_read_beside_the_own_store(repo, team_url):
    theirs = _json(repo("add", "Deploys go out on Tuesdays after the release notes", "--type", "convention",
                        "--json", env={"MEMDECK_DB": team_url}))["id"]
    mine = _json(repo("add", "I prefer small commits for deploy changes", "--type", "preference", "--json"))
    assert mine["layer"] == "own"
    listed = {m["id"]: m["layer"] for m in _json(repo("list", "--json"))}
    assert listed == {theirs: "team", mine["id"]: "own"}
    assert _json(repo("show", theirs, "--json"))["layer"] == "team"
    hits = _json(repo("search", "deploys", "--json"))
    assert {h["id"]: h["layer"] for h in hits} == listed
    primed = _json(repo("prime", "--task", "when do deploys go out", "--format", "json", "--record",
                        "--session", "s1"))
    assert {i["id"]: i["layer"] for i in primed["included"]}[theirs] == "team"
    # The add went to the own store only; recording the prime counted the team memory's use in
    # the team store (feedback on a team memory is the team's: docs/team.md).
    team_list = _json(repo("list", "--json", env={"MEMDECK_DB": team_url}))
    assert [m["id"] for m in team_list] == [theirs]
    assert team_list[0]["use_count"] == 1
    assert [m["id"] for m in _json(repo("list", "--json", "--layer", "team"))] == [theirs]


def test_an_unreachable_team_store_is_one_line_and_prime_still_works(repo, tmp_path):
    _user_config(tmp_path, "team:\n  db: 'postgresql://nobody@/nothing?host=/nonexistent-socket-dir'\n")
    repo("add", "Deploys go out on Tuesdays", "--type", "convention")
    result = repo("prime", "--task", "when do deploys go out")
    assert "Deploys go out on Tuesdays" in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "the team layer is not read" in lines[0]


def test_a_layer_never_changes_how_the_own_memories_score(postgres_server, tmp_path, monkeypatch):
    """Ranking statistics are per layer: a team store full of other memories with the task's
    words leaves the own memories' scores and gate verdicts as they were."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url = postgres_server.fresh_database()
    with Store.open(url, project="demo", config=Config.defaults()) as team:
        for n in range(40):
            team.add(f"Deploy note {n}: the deploy pipeline caches wheels for service {n}", type="context")
    own = Store.open(tmp_path / "own.db", project="demo", config=Config.defaults())
    try:
        own.add("Deploys go out on Tuesdays; the deploy pipeline needs a green main", type="convention")
        own.add("Wheels are cached by the CI runner", type="context")
        context = InjectionContext(task="how does the deploy pipeline cache wheels")
        alone = prime(own, context)
        config = own.config.with_overrides({"team.db": url})
        own.config = config
        with Layers.open(own, file=False) as layers:
            assert layers.names == ("own", "team") and not layers.problems
            both = prime(own, context, layers=layers)
        # The scores and the own store's verdicts; only the block's cap counts every layer together.
        scores = {r.memory.id: (r.score, r.gate) for r in both.included + both.excluded if r.memory.layer == "own"
                  and not r.gate.startswith("below the cap")}
        assert scores == {r.memory.id: (r.score, r.gate) for r in alone.included + alone.excluded if r.memory.id in scores}
        assert len(scores) >= 1
        assert any(r.memory.layer == "team" for r in both.included)
    finally:
        own.close()


def test_the_blocks_cap_counts_the_memories_of_every_layer_together(repo, tmp_path, monkeypatch):
    """`injection.gate.most_memories` caps the merged block, not each layer: with four memories
    about the task in the own store and four in the team file, a cap of 5 lets the best five of
    the eight in, best score first; the others say why."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (repo.root / ".memdeck").mkdir()
    lines = ["format: memdeck", "version: 1", "memories:"]
    for n in range(4):
        lines += ["- type: pitfall", f"  content: The staging database reset {n} wipes the fixtures loaded before it."]
    (repo.root / ".memdeck" / "team.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = Config.defaults().with_overrides({"injection.gate.most_memories": 5, "injection.gate.full_strength": 1.0},
                                              "test")
    own = Store.open(repo.own, project="repo", config=config, project_root=repo.root)
    try:
        for n in range(4):
            own.add(f"After a staging database reset {n}, load the fixtures again.", type="pattern", reinforce=False)
        context = InjectionContext(task="the staging database reset wipes the fixtures", budget=4000, project="repo")
        with Layers.open(own, team=False) as layers:
            assert layers.names == ("own", "file")
            result = prime(own, context, layers=layers)
        assert result.gate["on_topic"]
        assert len(result.included) == 5 and {r.memory.layer for r in result.included} == {"own", "file"}
        capped = [r for r in result.excluded if r.reason.startswith("below the cap")]
        assert len(capped) == 3 and "of every layer" in capped[0].reason
        assert min(r.score for r in result.included) >= max(r.score for r in capped)
    finally:
        own.close()


# -- MCP: search, context and get read every layer ---------------------------------------------------


def test_mcp_search_context_and_get_show_the_layer(tmp_path, monkeypatch):
    from tui.mcp_server.agent_session import AgentSession

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    (root / ".memdeck").mkdir(parents=True)
    (root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    store = Store.open(tmp_path / "own.db", project="demo", project_root=root, config=Config.load(root))
    mine = store.add("Staging deploys need the VPN up first", type="pitfall").memory.id
    agent = AgentSession(lambda: store)
    try:
        found = agent.search("staging")
        layers = {m["id"]: m["layer"] for m in found["memories"]}
        assert layers[mine] == "own" and "file" in layers.values()
        theirs = next(i for i, layer in layers.items() if layer == "file")
        got = agent.get(theirs)
        assert got["layer"] == "file" and got["history"][0]["kind"] == "imported"
        context = agent.context("how do deploys to staging go")
        assert set(context["layers"].values()) == {"own", "file"}
        assert set(context["layers"]) == set(context["ids"])
        # A verdict that would change a file memory is refused by name (not_relevant and helpful are
        # kept for you: tests/store/layers/test_team_judgments.py); on an unknown id it is "no memory".
        with pytest.raises(InvalidInput, match=f"memory {theirs} is in the file layer, read-only here"):
            agent.feedback(theirs, "wrong")
        with pytest.raises(NotFound):
            agent.feedback("mem-0-none", "helpful")
        # Remembering writes to the own store, never the file's.
        made = agent.remember("Staging resets nightly, so seed data in the setup step", type="pitfall")
        assert store.get(made["id"]).layer == "own"
    finally:
        agent.close()  # closes the store and its layers


# -- the table output and the session-start hook -------------------------------------------------------


def test_the_table_names_each_rows_layer_when_there_are_several(repo):
    repo("add", "Release notes live in docs/releases", "--type", "convention")
    plain = repo("list").stdout
    assert "layer" not in plain.splitlines()[0]
    (repo.root / ".memdeck").mkdir()
    (repo.root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    lines = repo("list").stdout.splitlines()
    assert lines[0].split()[-1] == "layer"
    assert sorted(line.split()[-1] for line in lines[1:]) == ["file", "file", "own"]
    found = repo("search", "deploy window").stdout.splitlines()
    assert found[0].split()[-2:] == ["match", "layer"] and found[1].split()[-1] == "file"


def test_the_session_start_block_without_a_task_holds_no_layers_ordinary_memories(repo):
    """With no task, the session-start block holds only always-on memories in every layer: the
    team file's pitfall stays out (the file's store would otherwise inject its most trusted
    memories), and its convention is in as a standing rule (`injection.session_start`)."""
    from tests.transcript_support import hook_input

    (repo.root / ".memdeck").mkdir()
    (repo.root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    payload = hook_input("SessionStart", "sess-8", repo.root / "t.jsonl", repo.root, source="startup")
    started = run_in_process(["hook", "session-start"], input=payload, cwd=repo.root,
                             env={**os.environ, "MEMDECK_DB": str(repo.own)})
    assert started.returncode == 0, started.stderr
    assert "staging database" not in started.stdout and "Tuesday" in started.stdout


def test_the_session_start_hook_injects_the_file_layers_memories_and_records_only_its_own(repo):
    from tests.transcript_support import hook_input

    mine = _json(repo("add", "Deploys after the release notes go out in small commits", "--type", "convention",
                      "--json"))["id"]
    (repo.root / ".memdeck").mkdir()
    (repo.root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    payload = hook_input("SessionStart", "sess-9", repo.root / "t.jsonl", repo.root, source="startup")
    started = run_in_process(["hook", "session-start", "--task", "deploys after release notes"], input=payload,
                             cwd=repo.root, env={**os.environ, "MEMDECK_DB": str(repo.own)})
    assert started.returncode == 0, started.stderr
    assert "Deploys happen on Tuesday mornings" in started.stdout and "small commits" in started.stdout
    with Store.open(repo.own, project="demo", config=Config.defaults()) as own:
        assert own.get(mine).use_count == 1
        injected = own.sessions.activities("sess-9")[-1].detail["ids"]
        assert mine in injected and any(i.startswith("file-") for i in injected)


def test_explain_with_an_empty_own_store_says_the_team_layers_evidence_let_its_memory_in(repo):
    """Issue 43 item 8: the own store knows nothing of the task, the team file does; the block
    holds the file's memory, and the explanation said "confidence 0.00 (not on topic)… spend: up
    to 0%". The task's verdict is the layer's with the strongest evidence, and says so."""
    (repo.root / ".memdeck").mkdir()
    (repo.root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    task = ("prime", "--task", "keep test data on the staging database")
    shown = _json(repo(*task, "--json"))
    assert [r["layer"] for r in shown["included"]] == ["file"]
    assert shown["gate"]["layer"] == "file" and shown["gate"]["on_topic"] and shown["gate"]["spend"] > 0
    assert shown["gate"]["layers"]["own"] == 0
    explained = repo(*task, "--explain").stdout
    verdict = next(line for line in explained.splitlines() if line.startswith("gate:"))
    assert "(on topic) by the file layer's evidence (own 0.00)" in verdict
    assert "not on topic" not in explained and "up to 0%" not in explained
