"""`memdeck eval --folds project`: leave-one-project-out over every project of the eval files.
The settings are chosen on the other projects and only the held-out project's figures are
reported, so a figure never comes from the data its settings were chosen on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from store.engine.config import Config
from store.evaluation.eval_set import Outcome, Query, load_eval
from store.evaluation.retrieval import (
    EVAL_BUDGET, GOALS_AT_LEAST, GOALS_AT_MOST, _loaded, _metrics, _with, cross_metrics, cross_probes, objective,
)
from store.evaluation.rankers import memdeck_ranker


# The settings `--folds project` chooses among, on nine projects, for the tenth: few, so nine
# projects cannot be fitted query by query. The gate's other settings stay at their defaults: an
# earlier grid (word_surprise 0.5/1.0, full_strength 3/5/8, least_share 0.1/0.15/0.3) chose them
# in 9 or 10 of 10 folds (docs/injection.md).
PROJECT_GRID: dict[str, tuple[Any, ...]] = {
    "injection.gate.floor": (0.0, 0.3, 0.5),
    "injection.gate.most_memories": (6, 8, 0),
    "injection.gate.weak": (0.3, 0.5),
}


def fold_objective(metrics: dict[str, float], per_project: Sequence[dict[str, float]] = ()) -> float:
    """What a fold's choice maximises on its nine projects (`evaluation.objective`), each goal's
    figure taken at the pessimistic end of its standard error over those projects (the figure
    less it for a floor, plus it for a ceiling): a setting whose figure clears a goal only on
    average, with projects far on either side, counts as short of it, as the next project may
    well be. The margin is the projects' own spread, not a constant."""
    return objective(pessimistic(metrics, per_project))


def pessimistic(metrics: dict[str, float], per_project: Sequence[dict[str, float]]) -> dict[str, float]:
    """`metrics` with each goal's figure moved by its standard error over `per_project` (the
    goals' side: down for a floor, up for a ceiling); as they are with fewer than two projects."""
    import math

    moved = dict(metrics)
    if len(per_project) < 2:
        return moved
    for key in (*GOALS_AT_LEAST, *GOALS_AT_MOST):
        values = [each.get(key, 0.0) for each in per_project]
        mean = sum(values) / len(values)
        error = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))
        moved[key] = metrics.get(key, 0.0) + (error if key in GOALS_AT_MOST else -error)
    return moved


@dataclass(frozen=True)
class ProjectFold:
    held_out: str  # the project reported
    eval_set: str  # its eval file
    settings: dict[str, Any]  # chosen on the other projects
    chosen: dict[str, float]  # the other projects' metrics with those settings


def _fold_metrics(pairs: Sequence[tuple[Query, Outcome]], crossed: Sequence[Outcome]) -> dict[str, float]:
    metrics = _metrics(pairs)
    metrics.setdefault("noise_tokens", 0.0)
    if crossed:
        metrics.update(cross_metrics(crossed))
    return metrics


def project_folds(paths: Sequence[Path], *, config: Config | None = None, budget: int | None = None,
                  server: str | None = None, grid: dict[str, tuple[Any, ...]] | None = None
                  ) -> tuple[list[ProjectFold], dict[str, dict[str, float]]]:
    """Leave-one-project-out over every project of the files: for each project, the grid's
    settings that do best (`fold_objective`, each file's other projects counting alike) on all the others, and that project's queries (its
    labelled tasks, noise probes, and the cross-project probes asked in it) with them. Returns
    the folds and the held-out metrics, per eval file and over all (`all`): held-out only."""
    import itertools

    base = config or Config.defaults()
    grid = PROJECT_GRID if grid is None else grid
    settings_list = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    # runs[n] = [(file, query, outcome, is_cross)] for settings n
    runs: list[list[tuple[str, Query, Outcome, bool]]] = [[] for _ in settings_list]
    for path in paths:
        spec = load_eval(path)
        size = budget or spec.budget or EVAL_BUDGET
        probes = cross_probes(spec)
        with _loaded(spec, base, server) as (store, _order):
            for n, settings in enumerate(settings_list):
                store.config = _with(base, settings)
                runs[n].extend((path.name, q, memdeck_ranker(store, q, size), False) for q in spec.queries)
                runs[n].extend((path.name, q, memdeck_ranker(store, q, size), True) for q in probes)
            store.config = base
    projects = list(dict.fromkeys((f, q.project) for f, q, _, _ in runs[0]))

    def metrics(n: int, out: tuple[str, str]) -> dict[str, float]:
        rows = [(q, o, c) for f, q, o, c in runs[n] if (f, q.project) != out]
        return _fold_metrics([(q, o) for q, o, c in rows if not c], [o for _, o, c in rows if c])

    def objective_without(n: int, out: tuple[str, str]) -> float:
        """The objective on each eval file's other projects, the files counting alike (a set of
        16 tasks weighs as much as one of 55)."""
        total = 0.0
        for name in dict.fromkeys(f for f, _ in projects):
            rows = [(q, o, c) for f, q, o, c in runs[n] if f == name and (f, q.project) != out]
            if any(not c for _, _, c in rows):
                each = [_fold_metrics([(q, o) for q, o, c in rows if not c and q.project == project],
                                      [o for q, o, c in rows if c and q.project == project])
                        for project in dict.fromkeys(q.project for q, _, _ in rows)]
                total += fold_objective(_fold_metrics([(q, o) for q, o, c in rows if not c],
                                                      [o for _, o, c in rows if c]), each)
        return total

    folds = []
    held: list[tuple[str, Query, Outcome, bool]] = []
    for eval_file, project in projects:
        scored = [(objective_without(n, (eval_file, project)), -n)
                  for n in range(len(settings_list))]
        best = -max(scored)[1]
        folds.append(ProjectFold(project, eval_file, settings_list[best],
                                 metrics(best, (eval_file, project))))
        held.extend(row for row in runs[best] if (row[0], row[1].project) == (eval_file, project))
    report = {}
    for name in [*dict.fromkeys(f for f, _ in projects), "all"]:
        rows = [(q, o, c) for f, q, o, c in held if name in ("all", f)]
        report[name] = _fold_metrics([(q, o) for q, o, c in rows if not c], [o for _, o, c in rows if c])
    return folds, report
