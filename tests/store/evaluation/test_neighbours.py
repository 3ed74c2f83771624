"""Neighbours change nothing: a project's block for a task holds the same memories whether the
project is alone in the store or beside every other dev corpus (word rarity, BM25 and the gate's
statistics are the project's own), on SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from store.engine.clock import FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.evaluation.eval_set import EvalSet, load_eval
from store.evaluation.retrieval import cross_probes, load_corpora
from store.evaluation.rankers import memdeck_ranker
from test_eval import DEV_SET, DEV_SET_2, needs_shared

pytestmark = pytest.mark.both_backends


def _location(tmp_path, backend, request, name):
    if backend == "postgres":
        return request.getfixturevalue("postgres_server").fresh_database()
    return tmp_path / f"{name}.db"


def _blocks(location, corpora, queries):
    clock = FrozenClock(datetime(2026, 3, 1, tzinfo=timezone.utc))
    with Store.open(location, project=corpora[0].project, config=Config.defaults(), clock=clock) as store:
        load_corpora(store, corpora)
        return {q.id: set(memdeck_ranker(store, q, 2000).packed) for q in queries}


@pytest.mark.slow
@needs_shared
def test_a_projects_block_is_the_same_alone_and_beside_every_other_corpus(tmp_path, backend, request):
    sets = [load_eval(DEV_SET), load_eval(DEV_SET_2)]
    corpora = [c for spec in sets for c in spec.corpora]
    # Each project's labelled tasks and noise probes, and every task of its set asked in it.
    queries = [q for spec in sets for q in (*spec.queries, *cross_probes(spec))]
    together = _blocks(_location(tmp_path, backend, request, "all"), corpora, queries)
    injected = 0
    for corpus in corpora:
        own = [q for q in queries if q.project == corpus.project]
        alone = _blocks(_location(tmp_path, backend, request, corpus.project), [corpus], own)
        differing = {q.id: (sorted(alone[q.id]), sorted(together[q.id])) for q in own if alone[q.id] != together[q.id]}
        assert not differing, (corpus.project, differing)
        injected += sum(len(ids) for ids in alone.values())
    assert injected, "the blocks compared are not all empty"


def test_cross_probes_ask_each_labelled_task_in_every_other_project():
    from pathlib import Path

    from store.evaluation.eval_set import Corpus, Query

    spec = EvalSet((Corpus("a", Path("a.md")), Corpus("b", Path("b.md")), Corpus("c", Path("c.md"))), (
        Query("q1", "a", "task one", relevant={"m1": 2}),
        Query("q2", "b", "noise", noise_probe=True),
    ))
    probes = cross_probes(spec)
    assert [(p.id, p.project) for p in probes] == [("q1>b", "b"), ("q1>c", "c")]
    assert all(p.noise_probe and not p.relevant for p in probes)
