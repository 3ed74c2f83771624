"""`memdeck consolidate`, `proposals`, `resolve` and `eval-pairs` (issue 27): the real command
in subprocesses on real stores; the store side of consolidation on both back-ends; MCP
`remember` and ingest going through the same decision."""

from __future__ import annotations

import json

import pytest

from store import Config, Store
from store.engine.consolidation import consolidate
from tests.data_support import DATA, FIXTURES, needs_shared

PAIRS = DATA / "pairs" / "ralph-pairs.yaml"


def fill(store: Store) -> dict[str, str]:
    """A project as it was before the decision existed: every text stored as its own memory,
    a minute apart (consolidation takes the earlier one as the old one)."""
    texts = {
        "b1": "The changelog boundary is now v0.2.6",
        "b2": "The changelog boundary is now v0.2.7",
        "b3": "The changelog boundary is now v0.2.8",
        "dup1": "Run the tests before committing",
        "dup2": "Before committing, run the tests",
        "never": "Never call the payments API from the web worker",
        "always": "Always call the payments API from the web worker",
        "other": "Deploys go out on Fridays after the standup",
    }
    ids = {}
    for key, text in texts.items():
        ids[key] = store.add(text, type="context", reinforce=False,
                             created_at=store.now() - 3600 + 60 * len(ids)).memory.id
    return ids


@pytest.mark.both_backends
def test_consolidation_proposes_chains_duplicates_and_contradictions_and_changes_nothing_else(store):
    ids = fill(store)
    before = {m.id: (m.status, m.confidence, m.content) for m in store.get_many(list(ids.values()))}
    dry = consolidate(store, dry_run=True)
    found = {(f.kind, f.memory_id, f.other_id) for f in dry.findings}
    # The three boundaries are one chain, held by the newest; the pairs are chains of two.
    assert found == {("update", ids["b3"], ids["b2"]), ("same", ids["dup2"], ids["dup1"]),
                     ("contradiction", ids["always"], ids["never"])}
    chains = {f.memory_id: [link.id for link in f.chain] for f in dry.findings}
    assert chains[ids["b3"]] == [ids["b1"], ids["b2"], ids["b3"]]
    assert chains[ids["dup2"]] == [ids["dup1"], ids["dup2"]]
    assert store.relations.proposals() == []  # the dry run wrote nothing
    report = consolidate(store)
    assert report.proposed == 3 and report.applied == 0
    after = {m.id: (m.status, m.confidence, m.content) for m in store.get_many(list(ids.values()))}
    assert after == before  # proposals only: no status, confidence or text changed
    assert {m.id for m, _ in store.relations.proposals()} == {ids["b3"], ids["dup2"], ids["always"]}
    assert store.get(ids["b3"]).meta["proposal"]["chain"] == [ids["b1"], ids["b2"], ids["b3"]]
    for older in ("b1", "b2"):  # every memory of the chain has it in its history
        assert store.events(ids[older])[-1].kind == "proposed"
        assert store.events(ids[older])[-1].detail["by"] == ids["b3"]
    # A second run proposes nothing new: each memory holds one proposal at a time.
    again = consolidate(store)
    assert again.proposed == 0 and again.skipped == 3
    # A chain a person kept apart is not proposed again, nor any pair of it.
    from store.engine.curation import Curator

    Curator(store).resolve(ids["b3"], "keep-both")
    assert store.get(ids["b3"]).meta["distinct_from"] == sorted([ids["b1"], ids["b2"]])
    assert store.get(ids["b1"]).meta["distinct_from"] == sorted([ids["b2"], ids["b3"]])
    assert {f.kind for f in consolidate(store, dry_run=True).findings} == {"same", "contradiction"}


@pytest.mark.both_backends
def test_with_consolidate_apply_duplicates_merge_and_sure_updates_supersede(db_path, clock):
    config = Config.defaults().with_overrides({"consolidate.apply": True})
    with Store.open(db_path, project="demo", clock=clock, config=config) as store:
        ids = fill(store)
        report = consolidate(store)
        assert report.applied == 2  # the chain (its every link a sure update), one duplicate
        assert store.get(ids["b1"]).status == "inactive" and store.get(ids["b2"]).status == "inactive"
        assert store.get(ids["b1"]).meta["superseded_by"] == store.get(ids["b2"]).meta["superseded_by"] == ids["b3"]
        assert store.get(ids["b3"]).status == "active"
        assert store.get(ids["dup2"]).status == "deleted" and store.get(ids["dup1"]).status == "active"
        # The contradiction still waits for a person.
        assert [m.id for m, _ in store.relations.proposals()] == [ids["always"]]


def test_cli_consolidate_then_resolve_and_the_history_says_so(run_cli, db_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        ids = fill(store)
    dry = json.loads(run_cli("consolidate", "--dry-run", "--json", check=True).stdout)
    assert dry["dry_run"] and len(dry["findings"]) == 3 and dry["proposed"] == 0
    done = run_cli("consolidate", check=True)
    assert "proposed 3" in done.stderr and "comparing memories: 8/8" in done.stderr
    assert f"chain of 3 held by {ids['b3']}" in done.stdout
    assert "3 open proposals: memdeck proposals" in run_cli("inbox", check=True).stderr
    listed = run_cli("proposals", check=True)
    assert f"{ids['always']}  contradiction of {ids['never']}" in listed.stdout
    assert "old: Never call the payments API" in listed.stdout
    assert f"chain (oldest first; supersede retires all before {ids['b3']}): {ids['b1']} -> {ids['b2']}" in listed.stdout
    proposals = json.loads(run_cli("proposals", "--json", check=True).stdout)
    assert len(proposals) == 3
    run_cli("resolve", ids["always"], "wrong-new", check=True)
    run_cli("resolve", ids["b3"], "supersede", check=True)
    run_cli("resolve", ids["dup2"], "merge", "--text", "Run the tests before every commit", check=True)
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert store.get(ids["always"]).status == "deleted"
        assert store.get(ids["b2"]).meta["superseded_by"] == store.get(ids["b1"]).meta["superseded_by"] == ids["b3"]
        assert store.get(ids["dup1"]).content == "Run the tests before every commit"
        assert [e.kind for e in store.events(ids["dup1"])][-3:] == ["edited", "merged", "resolved"]
        assert store.relations.proposals() == []


def test_cli_resolve_refuses_bad_input_with_one_line(run_cli, db_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        plain = store.add("A plain memory", type="context").memory.id
    result = run_cli("resolve", plain, "merge")
    assert result.returncode != 0 and f"{plain} holds no proposal" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    result = run_cli("resolve", "mem-nope", "merge")
    assert result.returncode != 0 and "no memory with id" in result.stderr


def test_cli_add_says_what_the_decision_did(run_cli):
    run_cli("add", "Use Node 18 for the build image", "--type", "decision", check=True)
    updated = run_cli("add", "Use Node 20 for the build image", "--type", "decision", check=True)
    assert updated.stderr.startswith("updated ") and "supersedes" in updated.stderr and "18 -> 20" in updated.stderr
    run_cli("add", "Never call the payments API from the web worker", "--type", "pitfall", check=True)
    flagged = run_cli("add", "Always call the payments API from the web worker", "--type", "pitfall",
                      "--json", check=True)
    answer = json.loads(flagged.stdout)
    assert answer["action"] == "proposed" and answer["status"] == "pending"
    assert answer["decided"]["kind"] == "contradiction"
    shown = run_cli("show", answer["id"], check=True).stdout
    assert f"proposal:   contradiction of {answer['decided']['other']}: contradiction;" in shown
    assert "proposed" in shown and "polarity negated -> plain" in shown
    run_cli("add", "Run the tests before committing", "--type", "pattern", check=True)
    again = run_cli("add", "Before committing, run the tests", "--type", "pattern", check=True)
    assert "(as: Before committing, run the tests)" in run_cli("show", again.stdout.strip(), check=True).stdout


def test_cli_eval_pairs_reports_each_class_and_refuses_a_bad_file(run_cli, tmp_path):
    result = run_cli("eval-pairs", str(PAIRS), "--half", "test", check=True)
    for kind in ("same", "update", "contradiction", "distinct"):
        assert kind in result.stdout
    assert "silent losses (update or contradiction decided same): 0" in result.stdout
    report = json.loads(run_cli("eval-pairs", str(PAIRS), "--json", check=True).stdout)
    assert report["pairs"] >= 120 and report["silent_losses"] == []
    bad = tmp_path / "bad.yaml"
    bad.write_text("pairs: [", encoding="utf-8")
    failed = run_cli("eval-pairs", str(bad))
    assert failed.returncode != 0 and "not a YAML pairs file" in failed.stderr
    missing = run_cli("eval-pairs", str(tmp_path / "none.yaml"))
    assert missing.returncode != 0 and "cannot read" in missing.stderr


@pytest.mark.both_backends
def test_mcp_remember_goes_through_the_same_decision(store):
    from tui.mcp_server.agent_session import AgentSession

    agent = AgentSession(lambda: store)
    try:
        first = agent.remember("Use Node 18 for the build image", "decision")
        second = agent.remember("Use Node 20 for the build image", "decision")
        flagged = agent.remember("Use Node 20 for the build image, never 18", "decision")
    finally:
        agent.close()
    assert first["action"] == "created" and second["action"] == "updated"
    assert store.get(first["id"]).meta["superseded_by"] == second["id"]
    assert flagged["action"] in ("proposed", "created")
    assert store.get(second["id"]).content == "Use Node 20 for the build image"


@pytest.mark.both_backends
def test_ingest_goes_through_the_same_decision(store, tmp_path):
    from store.capture.ingest import ingest_file

    def said(n: int, text: str) -> str:
        return json.dumps({"type": "assistant", "sessionId": "s27", "uuid": f"u{n}",
                           "timestamp": "2026-02-01T10:00:00Z",
                           "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}})

    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([
        said(0, "[MEMORY:decision] Use Node 18 for the build image"),
        said(1, "[MEMORY:decision] Use Node 20 for the build image"),
        said(2, "[MEMORY:pitfall] Never call the payments API from the web worker"),
        said(3, "[MEMORY:pitfall] Always call the payments API from the web worker"),
    ]) + "\n", encoding="utf-8")
    report = ingest_file(store, path)
    node18, node20, never, always = store.get_many(report.created)
    assert node18.status == "inactive" and node18.meta["superseded_by"] == node20.id
    assert node20.content == "Use Node 20 for the build image" and node20.status == "active"
    assert never.status == "active" and always.status == "pending"
    assert always.meta["proposal"] == {**always.meta["proposal"], "kind": "contradiction", "other": never.id}


# Issue 40: a chain of four successive statements of one fact, with two failure records of
# different tests and one failure recorded again with new advice, as Ralph writes them.
CHAIN_FILE = """# Memories

## Context

### mem-1771000400-d004
> v0.2.9 changelog boundary is now 96a7691..d4e5f60
<!-- tags: release | created: 2026-02-13 -->

### mem-1771000300-c003
> v0.2.9 changelog boundary is now 96a7691..c0ffee1
<!-- tags: release | created: 2026-02-13 -->

### mem-1771000200-b002
> v0.2.9 changelog boundary is now 96a7691..b81e0d4
<!-- tags: release | created: 2026-02-13 -->

### mem-1771000100-a001
> v0.2.9 changelog boundary is now 96a7691..3f2c1ab
<!-- tags: release | created: 2026-02-13 -->

## Fixes

### mem-1771000600-f003
> failure: cmd=cargo test --test lexer_smoke, exit=101, error='unexpected token in src/lexer.rs', next=run cargo fmt then fix the lexer
<!-- tags: | created: 2026-02-13 -->

### mem-1771000500-f002
> failure: cmd=cargo test --test parser_smoke, exit=101, error='unexpected token in src/parser.rs', next=run cargo fmt then fix the parser
<!-- tags: | created: 2026-02-13 -->

### mem-1771000700-f004
> failure: cmd=cargo test --test parser_smoke, exit=101, error='unexpected token in src/parser.rs', next=regenerate the grammar tables before fixing the parser
<!-- tags: | created: 2026-02-13 -->
"""
CHAIN = ["mem-1771000100-a001", "mem-1771000200-b002", "mem-1771000300-c003", "mem-1771000400-d004"]


def test_cli_consolidate_finds_a_chain_of_four_keeps_the_newest_and_shows_the_chain(run_cli, db_path, tmp_path):
    ralph = tmp_path / "memories.md"
    ralph.write_text(CHAIN_FILE, encoding="utf-8")
    run_cli("import", str(ralph), check=True)
    dry = json.loads(run_cli("consolidate", "--dry-run", "--json", check=True).stdout)
    by_memory = {f["memory"]: f for f in dry["findings"]}
    chain = by_memory[CHAIN[-1]]
    assert (chain["kind"], chain["other"]) == ("update", CHAIN[2])
    assert [link["id"] for link in chain["chain"]] == CHAIN  # oldest first, the newest (kept) last
    assert chain["chain"][0] == {"id": CHAIN[0], "title": "v0.2.9 changelog boundary is now 96a7691..3f2c1ab",
                                 "created_at": "2026-02-13T16:28:20Z"}
    assert not set(CHAIN[:-1]) & set(by_memory)  # one proposal for the chain, not one per link
    # Two failures of different tests are not updates of each other; the same failure recorded
    # again with new advice is.
    assert by_memory["mem-1771000700-f004"]["other"] == "mem-1771000500-f002"
    assert "mem-1771000600-f003" not in by_memory and len(by_memory) == 2
    text = run_cli("consolidate", "--dry-run", check=True).stdout
    assert f"chain of 4 held by {CHAIN[-1]}" in text and "the 3 before it would be proposed for retirement" in text
    listed = text[text.index("chain of 4 held by"):]
    assert [line.split()[0] for line in listed.splitlines()[1:5]] == CHAIN
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert store.relations.proposals() == []  # a dry run proposes, never writes
    # Without --dry-run: the proposal names the chain, every history says so, nothing retired yet.
    run_cli("consolidate", check=True)
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert store.get(CHAIN[-1]).meta["proposal"]["chain"] == CHAIN
        assert all(store.get(i).status == "active" for i in CHAIN)
        assert all(store.events(i)[-1].kind == "proposed" for i in CHAIN)
        # Superseding retires the three older ones at once; undone, all four are as they were.
        from store.engine.curation import Curator

        curator = Curator(store)
        curator.resolve(CHAIN[-1], "supersede")
        assert [store.get(i).status for i in CHAIN] == ["inactive"] * 3 + ["active"]
        assert {store.get(i).meta["superseded_by"] for i in CHAIN[:-1]} == {CHAIN[-1]}
        assert all(store.events(i)[-1].kind == "resolved" for i in CHAIN)
        curator.undo()
        assert [store.get(i).status for i in CHAIN] == ["active"] * 4
        assert not any("superseded_by" in store.get(i).meta for i in CHAIN)
        assert store.get(CHAIN[-1]).meta["proposal"]["chain"] == CHAIN


RALPH = FIXTURES / "ralph"


@needs_shared
@pytest.mark.parametrize("name, proposed, not_proposed", [
    # tonic: the same failure recorded twice, and once again with new advice, are proposed; two
    # rustfmt failures in different files, and failing runs of two different tests, are not.
    ("mikeyobrien__tonic__.ralph__agent__memories.md",
     [("mem-1771630585-350e", "mem-1771629989-15a7"), ("mem-1771641807-a2cd", "mem-1771638936-2cb7")],
     [("mem-1771630828-9a03", "mem-1771630585-350e"), ("mem-1771646345-190f", "mem-1771645922-fdbe")]),
    # pinch_n_print: "TASK-013 is complete once commit ... is verified" is another task's record.
    ("AdelinoGP__pinch_n_print_cli__.ralph__agent__memories.md", [],
     [("mem-1773559208-a365", "mem-1773557896-e363"), ("mem-1773560097-0ad9", "mem-1773559208-a365")]),
])
def test_on_real_ralph_files_consolidate_proposes_repeats_not_other_failures_or_tasks(
        run_cli, tmp_path, name, proposed, not_proposed):
    run_cli("import", str(RALPH / name), check=True)
    findings = json.loads(run_cli("consolidate", "--dry-run", "--json", check=True).stdout)["findings"]
    pairs = {(link["id"], f["memory"]) for f in findings for link in f["chain"][:-1]}
    for newer, older in proposed:
        assert (older, newer) in pairs
    for newer, older in not_proposed:
        assert (older, newer) not in pairs
