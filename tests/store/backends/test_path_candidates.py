"""A prime's path candidates and corpus size, on SQLite and on PostgreSQL: the memories whose
file ref globs cover a path in play (or lie inside it) are the same whether the back-end tests
every memory with file refs or first narrows them by its index of the refs' keys (PostgreSQL,
migration 13), and a project's size follows every memory added or removed."""

from __future__ import annotations

import json
import random
from fnmatch import fnmatchcase

import pytest

from store.engine.config import Config
from store.engine.core import Store
from store.retrieval.ranking import _path_refs, corpus_size

pytestmark = pytest.mark.both_backends

REFS = ["src/app/*.py", "src/", "src", "*", "*.md", "docs/**", "lib/[ab]c.py", "src/app/main.py",
        "other/x.py", "src/app/sub/deep.py", "sr*", "src/app/", "?rc/app/main.py", "src/ap?/main.py",
        "docs/guide.md", "src/application/x.py", "lib/", "tests/test_*.py"]
PATHS = ["src/app/main.py", "src/app", "lib/bc.py", "docs/x/y.md", "nothing/here.go", "src", "src/app/*.py",
         "tests/store/retrieval/test_ranking.py", "src/application", "lib"]


def covers(ref: str, path: str) -> bool:
    """The three tests of a prime (SQLite's GLOB; no `[!...]` in these refs): the ref matches
    the path, the path is inside the ref's folder, the ref is inside the path."""
    return fnmatchcase(path, ref) or fnmatchcase(path, ref.rstrip("/") + "/*") or fnmatchcase(ref, path + "/*")


def _stored(store, refs_of_each):
    ids = {}
    for n, refs in enumerate(refs_of_each):
        result = store.add(f"memory number {n} about its files", type="context", file_refs=refs,
                           title=f"memory {n}", reinforce=False)
        ids[result.memory.id] = refs
    return ids


def test_the_path_candidates_are_the_memories_whose_refs_cover_a_path(store):
    ids = _stored(store, [[ref] for ref in REFS] + [["other/x.py", "src/app/"], ["lib/[ab]c.py", "*.md"]])
    project_id = store.project_id()
    for path in PATHS:
        expected = {i for i, refs in ids.items() if any(covers(ref, path) for ref in refs)}
        assert _path_refs(store, project_id, [path], 100) == expected, path
    both = ["src/app/main.py", "docs/x/y.md"]
    assert _path_refs(store, project_id, both, 100) == {
        i for i, refs in ids.items() if any(covers(ref, path) for ref in refs for path in both)}


def test_random_refs_and_paths_give_the_same_candidates_as_testing_every_ref(store):
    rng = random.Random(29)
    parts = ["a", "b", "ab", "src", "x.py", "*", "?", "*.py", "[ab]", ""]

    def name() -> str:
        return "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))

    ids = _stored(store, [[name() for _ in range(rng.randint(1, 3))] for _ in range(120)])
    project_id = store.project_id()
    for _ in range(60):
        path = "/".join(rng.choice(["a", "b", "ab", "src", "x.py", "c"]) for _ in range(rng.randint(1, 4)))
        expected = {i for i, refs in ids.items() if any(covers(ref, path) for ref in refs)}
        assert _path_refs(store, project_id, [path], 1000) == expected, path


def test_only_the_most_confident_come_out_in_the_order_of_confidence(store):
    for n in range(12):
        store.add(f"a rule about the worker number {n}", type="convention", file_refs=["internal/billing/*.go"],
                  confidence=0.5 + n / 100, reinforce=False)
    store.add("the unrelated one", type="convention", file_refs=["web/*.ts"], confidence=0.99, reinforce=False)
    found = _path_refs(store, store.project_id(), ["internal/billing/worker.go"], 3)
    assert {store.get(i).confidence for i in found} == {0.61, 0.60, 0.59}


def test_a_project_size_follows_what_is_added_and_removed(store):
    project_id = store.project_id()
    assert corpus_size(store, project_id) == 0
    added = [store.add(f"fact number {n} of the project", type="context", reinforce=False).memory.id
             for n in range(3)]
    assert corpus_size(store, project_id) == 3
    store.trash.delete_rows(added[:1])
    assert corpus_size(store, project_id) == 2


def test_postgresql_keys_each_ref_by_its_literal_part_and_the_folders_it_names(postgres_server, clock):
    with Store.open(postgres_server.fresh_database(), project="demo", clock=clock, config=Config.defaults()) as store:
        _keys_of_refs(store)


def _keys_of_refs(store):
    def keys(refs) -> list[str]:
        return store.db.execute_sql("SELECT memdeck_ref_keys(%s)", (refs,)).fetchone()[0]

    assert sorted(keys(json.dumps(["a/b/*.go", "*", "x/[ab]/"]))) == [
        "d:a", "d:a/b", "d:x", "d:x/[ab]", "p:", "p:a/b", "p:x"]
    assert keys("not json") == ["p:"]  # a candidate for every path: its test says what it always said
    assert keys(json.dumps("a string")) == ["p:"]
    indexes = {r[0] for r in store.db.execute_sql("SELECT indexname FROM pg_indexes WHERE tablename = 'memory'")}
    assert "memory_ref_keys" in indexes


def test_a_copy_to_postgresql_leaves_the_memories_vacuumed_and_analyzed(tmp_path, postgres_server, clock):
    from store.interop.copying import copy_store

    source = tmp_path / "own.db"
    with Store.open(source, project="demo", clock=clock, config=Config.defaults()) as own:
        ids = [own.add(f"fact number {n} about the worker", type="context", file_refs=[f"src/part{n}/*.py"],
                       reinforce=False).memory.id for n in range(30)]
    url = postgres_server.fresh_database()
    copy_store(source, url)
    with Store.open(url, project="demo", clock=clock, config=Config.defaults()) as team:
        # The planner's row count: -1 until a VACUUM or ANALYZE has counted the table.
        counted = team.db.execute_sql("SELECT reltuples FROM pg_class WHERE relname = 'memory'").fetchone()[0]
        assert counted == 30
        assert _path_refs(team, team.project_id(), ["src/part7/x.py"], 10) == {ids[7]}
