"""`memdeck eval --folds project`: leave-one-project-out, each project's settings chosen on the
others by the goals' pessimistic figures, and only held-out figures reported."""

from __future__ import annotations

import pytest

from store.engine.config import Config
from store.evaluation.retrieval import _loaded, _with, cross_probes, load_eval, objective
from store.evaluation.project_folds import _fold_metrics, fold_objective, pessimistic, project_folds
from store.evaluation.rankers import memdeck_ranker
from tests.data_support import SHARED, needs_shared

DEV_SET = SHARED / "eval" / "dev-retrieval.yaml"


def test_a_figure_that_clears_a_goal_only_on_average_counts_as_short_of_it():
    """Two settings with the same pooled figures: the one whose projects spread far on either
    side of the precision goal scores lower, by the standard error of that spread."""
    pooled = {"block_precision": 0.40, "budget_recall": 0.85, "ndcg@8": 0.70,
              "cross_tokens": 100.0, "cross_over_500": 0.0, "noise_tokens": 0.0}
    steady = [{**pooled, "block_precision": p} for p in (0.39, 0.40, 0.41)]
    spread = [{**pooled, "block_precision": p} for p in (0.10, 0.40, 0.70)]
    assert pessimistic(pooled, steady)["block_precision"] == pytest.approx(0.40 - 0.01 / 3 ** 0.5 * 1.0, abs=1e-3)
    assert pessimistic(pooled, spread)["block_precision"] == pytest.approx(0.40 - 0.3 / 3 ** 0.5, abs=1e-3)
    assert fold_objective(pooled, steady) > fold_objective(pooled, spread)
    # A ceiling moves up: tokens spread around 100 count as more than 100.
    tokens = [{**pooled, "cross_tokens": t} for t in (20.0, 100.0, 180.0)]
    assert pessimistic(pooled, tokens)["cross_tokens"] > 100.0
    # With fewer than two projects there is no spread to read: the figures as they are.
    assert fold_objective(pooled, steady[:1]) == fold_objective(pooled) == objective(pooled)


@needs_shared
@pytest.mark.slow
def test_each_project_is_reported_with_settings_chosen_on_the_others_only():
    """Each fold's settings come from the grid and win on the other projects; the held-out
    figures are the held-out project's own queries run with them, nothing else."""
    grid = {"injection.gate.most_memories": (2, 0)}
    folds, report = project_folds([DEV_SET], budget=2000, grid=grid)
    spec = load_eval(DEV_SET)
    projects = list(dict.fromkeys(c.project for c in spec.corpora))
    assert [f.held_out for f in folds] == projects
    assert set(report) == {DEV_SET.name, "all"}
    base = Config.defaults()
    probes = cross_probes(spec)
    held_pairs, held_crossed = [], []
    with _loaded(spec, base, None) as (store, _):
        for fold in folds:
            assert set(fold.settings) == set(grid) and fold.settings["injection.gate.most_memories"] in (2, 0)
            store.config = _with(base, fold.settings)
            held_pairs += [(q, memdeck_ranker(store, q, 2000)) for q in spec.queries if q.project == fold.held_out]
            held_crossed += [memdeck_ranker(store, q, 2000) for q in probes if q.project == fold.held_out]
            # The fold's `chosen` figures are the other projects', never the held-out one's.
            others = [(q, memdeck_ranker(store, q, 2000)) for q in spec.queries if q.project != fold.held_out]
            crossed = [memdeck_ranker(store, q, 2000) for q in probes if q.project != fold.held_out]
            assert fold.chosen == _fold_metrics(others, crossed)
    # The held-out report is exactly the held-out projects' own outcomes, pooled.
    assert report[DEV_SET.name] == report["all"] == _fold_metrics(held_pairs, held_crossed)
