"""`memdeck eval --feedback-folds`: whether an agent's feedback makes the next blocks better.
Each project's labelled tasks split in two halves; feedback given on one half as an agent that
knew the labels would (helpful on the relevant memories a block holds, not relevant on the
others), block precision and budget recall measured on the other half, before and after.

`choose_by_projects` picks the feedback lesson's settings (`injection.feedback`) by
leave-one-project-out over every project of the files, and reports each project only under the
setting the others chose (`python -m store.evaluation.feedback_folds FILE...`)."""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from store.engine.clock import FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.evaluation.eval_set import Query, load_eval
from store.evaluation.retrieval import EVAL_BUDGET, _mean, _scratch_store, load_corpora, recall
from store.retrieval.injection import InjectionContext, prime
from store.evaluation.rankers import memdeck_ranker


@dataclass(frozen=True)
class FeedbackFold:
    """One fold of `feedback_folds`: feedback given on one half of each project's tasks, the
    other half measured before and after."""

    fed: tuple[str, ...]  # the query ids feedback was given on
    measured: tuple[str, ...]  # the query ids measured
    before: dict[str, float]
    after: dict[str, float]
    verdicts: dict[str, int]  # verdict -> how many were given
    # query id -> {project, precision_before/after (None: empty block), recall_before/after}
    by_query: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Of the measured tasks' labelled relevant memories: how many, and how many of them the fed
    # half judged not relevant / helpful (a lesson about the memory alone would hit the first).
    relevant_judged: dict[str, int] = field(default_factory=dict)


def one_block_precision(packed: Sequence[str], relevant: dict[str, int]) -> float | None:
    """The share of one block's memories labelled relevant; None for an empty block (the mean
    of these is `feedback_folds`' precision; `block_precision` pools every block's memories)."""
    return len(set(packed) & set(relevant)) / len(packed) if packed else None


def _block_metrics(store: Store, queries: Sequence[Query], budget: int,
                   by_query: dict[str, dict[str, Any]] | None = None, when: str = "") -> dict[str, float]:
    outcomes = [memdeck_ranker(store, q, budget) for q in queries]
    for q, o in zip(queries, outcomes):
        if by_query is not None:
            record = by_query.setdefault(q.id, {"project": q.project})
            record[f"precision_{when}"] = one_block_precision(o.packed, q.relevant)
            record[f"recall_{when}"] = recall(o.packed, q.relevant)
            record[f"reachable_{when}"] = recall([*o.packed, *o.indexed], q.relevant)
    precisions = [p for p in (one_block_precision(o.packed, q.relevant) for q, o in zip(queries, outcomes))
                  if p is not None]
    injected = sum(len(o.packed) for o in outcomes)
    hits = sum(len(set(o.packed) & set(q.relevant)) for q, o in zip(queries, outcomes))
    return {"precision": _mean(precisions), "pooled_precision": round(hits / injected, 4) if injected else 0.0,
            "budget_recall": _mean([recall(o.packed, q.relevant) for q, o in zip(queries, outcomes)]),
            "reachable_recall": _mean([recall([*o.packed, *o.indexed], q.relevant) for q, o in zip(queries, outcomes)]),
            "memories": round(injected / len(queries), 2) if queries else 0.0, "queries": float(len(queries))}


def _give_fold_feedback(store: Store, queries: Sequence[Query], budget: int,
                        judged: dict[str, set[tuple[str, str]]] | None = None, *, verdicts: bool = True,
                        openings: bool = True) -> dict[str, int]:
    """What an agent that knew the labels would do with each block, each task its own session:
    with `verdicts`, say helpful on its labelled relevant memories, not relevant on the others;
    with `openings` (and the index on), open the lines of its index labelled relevant and leave
    the rest, which count as unopened only when it opened one (`store.engine.openings`: an agent
    that opens nothing says nothing of the lines). Kept as the MCP session keeps them: the task,
    no evidence (the session log does not keep a line's relevance)."""
    from store.engine.feedback import give_feedback, keep_judgment
    from store.engine.openings import OPENED, UNOPENED

    given = {"helpful": 0, "not_relevant": 0, OPENED: 0, UNOPENED: 0}
    for q in queries:
        result = prime(store, InjectionContext(hat=q.hat, task=q.task, paths=q.paths, budget=budget,
                                               project=q.project))
        lines = [item.memory.id for item in result.index] if openings else []
        opened = [m for m in lines if m in q.relevant]
        for memory_id in lines if opened else ():
            key = OPENED if memory_id in q.relevant else UNOPENED
            keep_judgment(store, store.get(memory_id), key, q.task, None, f"eval-{q.id}")
            given[key] += 1
        for item in result.included if verdicts else ():
            verdict = "helpful" if item.memory.id in q.relevant else "not_relevant"
            give_feedback(store, item.memory.id, verdict, task=q.task, actor="eval",
                          evidence={k: item.signals.get(k, 0.0) for k in ("relevance", "cosine")})
            given[verdict] += 1
            if judged is not None:
                judged.setdefault(verdict, set()).add((q.project, item.memory.id))
    return given


def feedback_folds(path: Path, *, config: Config | None = None, budget: int | None = None,
                   server: str | None = None, seed: int | None = None, verdicts: bool = True,
                   openings: bool = True) -> list[FeedbackFold]:
    """Two folds: each project's labelled tasks split in two halves (alternately, in file order;
    with `seed`, in an order shuffled by it); feedback given on one half, block precision and
    budget recall measured on the other, before and after; then the halves swapped, each fold in
    a fresh store. `verdicts`, `openings`: what the simulated agent does (`_give_fold_feedback`)."""
    spec = load_eval(path)
    config = config or Config.defaults()
    budget = budget or spec.budget or EVAL_BUDGET
    labelled = [q for q in spec.queries if not q.noise_probe and q.relevant]
    halves: tuple[list[Query], list[Query]] = ([], [])
    for project in dict.fromkeys(q.project for q in labelled):
        mine = [q for q in labelled if q.project == project]
        if seed is not None:
            random.Random(f"{seed}:{project}").shuffle(mine)
        halves[0].extend(mine[0::2])
        halves[1].extend(mine[1::2])
    folds = []
    for fed, measured in (halves, halves[::-1]):
        with _scratch_store(server) as location:
            clock = FrozenClock(datetime(2026, 3, 1, tzinfo=timezone.utc))
            with Store.open(location, project=spec.corpora[0].project if spec.corpora else "eval",
                            config=config, clock=clock) as store:
                load_corpora(store, spec.corpora)
                by_query: dict[str, dict[str, Any]] = {}
                before = _block_metrics(store, measured, budget, by_query, "before")
                judged: dict[str, set[tuple[str, str]]] = {}
                given = _give_fold_feedback(store, fed, budget, judged, verdicts=verdicts, openings=openings)
                after = _block_metrics(store, measured, budget, by_query, "after")
        pairs = [(q.project, m) for q in measured for m in q.relevant]
        relevant_judged = {"relevant": len(pairs), **{f"judged_{verdict}": sum(p in judged.get(verdict, ()) for p in pairs)
                                                      for verdict in ("not_relevant", "helpful")}}
        folds.append(FeedbackFold(tuple(q.id for q in fed), tuple(q.id for q in measured), before, after, given,
                                  by_query, relevant_judged))
    return folds


# -- choosing the lesson's settings by leave-one-project-out --------------------------------------

# The settings tried: no lesson but the same task again; the floor at several strengths and
# helpful weights; tasks like the new one at several strengths, without the floor.
_OFF = {"injection.feedback.floor_gain": 0, "injection.feedback.similar_evidence": 0}
GRID: tuple[dict[str, float], ...] = (
    _OFF,
    *({**_OFF, "injection.feedback.floor_gain": g, "injection.feedback.floor_helpful": h}
      for g in (4, 8, 16, 32, 64) for h in (10, 30)),
    *({**_OFF, "injection.feedback.similar_evidence": e} for e in (0.02, 0.05, 0.1, 0.2, 0.4)),
)
# The most budget recall a setting may lose (the goal) to be chosen.
RECALL_LOSS = 0.02

# Opening is a use (issue 39): with the index on, the weight of an opening, of an unopened line,
# and how many unopened listings count; the first is off (no unopened lesson, openings as a
# helpful verdict would weigh them at 0).
_OPENINGS_OFF = {"injection.feedback.opened_weight": 0, "injection.feedback.unopened_weight": 0,
                 "injection.feedback.unopened_after": 1}
OPENINGS_GRID: tuple[dict[str, float], ...] = (
    _OPENINGS_OFF,
    *({**_OPENINGS_OFF, "injection.feedback.opened_weight": o} for o in (0.25, 0.5, 1.0)),
    *({"injection.feedback.opened_weight": o, "injection.feedback.unopened_weight": u,
       "injection.feedback.unopened_after": n}
      for o in (0, 0.5, 1.0) for u in (0.1, 0.25, 0.5, 1.0) for n in (1, 2, 3)),
)


@dataclass(frozen=True)
class Measured:
    """One held-out task under one setting, split and fold: block precision (None: empty block)
    and budget recall, before and after the feedback."""

    file: str
    project: str
    query: str
    split: str
    precision_before: float | None
    precision_after: float | None
    recall_before: float
    recall_after: float
    reachable_before: float = 0.0
    reachable_after: float = 0.0


def _summary(rows: Sequence[Measured]) -> dict[str, float]:
    def mean(values: Iterable[float | None]) -> float:
        kept = [v for v in values if v is not None]
        return sum(kept) / len(kept) if kept else 0.0

    return {"precision_before": mean(r.precision_before for r in rows),
            "precision_after": mean(r.precision_after for r in rows),
            "recall_before": mean(r.recall_before for r in rows),
            "recall_after": mean(r.recall_after for r in rows),
            "reachable_before": mean(r.reachable_before for r in rows),
            "reachable_after": mean(r.reachable_after for r in rows), "tasks": float(len(rows))}


def _gain(summary: dict[str, float]) -> tuple[float, float]:
    return (summary["precision_after"] - summary["precision_before"],
            summary["recall_after"] - summary["recall_before"])


def measure_grid(paths: Sequence[Path], *, grid: Sequence[dict[str, float]] = GRID, budget: int | None = None,
                 seeds: Sequence[int | None] = (None,), config: Config | None = None,
                 server: str | None = None, words_only: bool = False, verdicts: bool = True,
                 openings: bool = True) -> dict[int, list[Measured]]:
    """Every setting of `grid` (by its index) -> every held-out task's figures, over the files,
    the splits (`seeds`; None: alternate tasks) and both folds of each. `words_only`: without
    the semantic signal, where `floor_gain` is `words_floor_gain`."""
    base = config or Config.defaults()
    if words_only:
        base = base.with_overrides({"injection.semantic": False})
    found: dict[int, list[Measured]] = {}
    for number, overrides in enumerate(grid):
        if words_only:
            overrides = {k.replace(".floor_gain", ".words_floor_gain"): v for k, v in overrides.items()}
        settings = base.with_overrides(overrides, "feedback-folds grid")
        rows = found.setdefault(number, [])
        for path in paths:
            for seed in seeds:
                for fold, result in enumerate(feedback_folds(path, config=settings, budget=budget, server=server,
                                                             seed=seed, verdicts=verdicts, openings=openings)):
                    for query, r in result.by_query.items():
                        rows.append(Measured(path.name, r["project"], query, f"{seed}/{fold}",
                                             r["precision_before"], r["precision_after"],
                                             r["recall_before"], r["recall_after"],
                                             r["reachable_before"], r["reachable_after"]))
    return found


def choose(summaries: dict[int, dict[str, float]], recall_loss: float = RECALL_LOSS, reachable: bool = False) -> int:
    """The setting with the most precision gained among those losing at most `recall_loss` of
    budget recall; if none does, the one losing least. Ties: the earlier (the grid starts with
    no floor). `reachable` (the index on): reachable recall may lose no more either, and what
    it gains counts as precision gained does (the index is there to reach memories)."""
    def reach(n: int) -> float:
        s = summaries[n]
        return s["reachable_after"] - s["reachable_before"] if reachable else 0.0

    feasible = [n for n, s in summaries.items() if _gain(s)[1] >= -recall_loss - 1e-12
                and reach(n) >= -recall_loss - 1e-12]
    if feasible:
        return max(feasible, key=lambda n: (round(_gain(summaries[n])[0] + reach(n), 9), -n))
    return max(summaries, key=lambda n: (_gain(summaries[n])[1], -n))


def choose_by_projects(measured: dict[int, list[Measured]], recall_loss: float = RECALL_LOSS, reachable: bool = False
                       ) -> tuple[dict[str, int], list[Measured]]:
    """Leave-one-project-out: for each project, the setting `choose` picks on every other
    project's held-out tasks; then that project's tasks under it (held-out figures only)."""
    projects = list(dict.fromkeys(r.project for rows in measured.values() for r in rows))
    chosen: dict[str, int] = {}
    held: list[Measured] = []
    for project in projects:
        chosen[project] = choose({n: _summary([r for r in rows if r.project != project])
                                  for n, rows in measured.items()}, recall_loss, reachable)
        held += [r for r in measured[chosen[project]] if r.project == project]
    return chosen, held


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m store.evaluation.feedback_folds",
                                     description="Choose injection.feedback by leave-one-project-out over the "
                                                 "files' projects; report held-out figures only.")
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="*", default=[],
                        help="random splits besides the alternate one")
    parser.add_argument("--words-only", action="store_true", help="without the semantic signal")
    parser.add_argument("--openings", choices=("both", "alone"), default=None,
                        help="choose what opening an index line teaches (opened_weight, unopened_weight, "
                             "unopened_after) with the index on; the agent also gives verdicts (both) or only "
                             "opens lines (alone)")
    parser.add_argument("--index-lines", type=int, default=10, help="injection.index_lines with --openings")
    args = parser.parse_args(argv)
    seeds: list[int | None] = [None, *args.seeds]
    grid = OPENINGS_GRID if args.openings else GRID
    config = (Config.defaults().with_overrides({"injection.index_lines": args.index_lines}, "--index-lines")
              if args.openings else None)
    verdicts = args.openings != "alone"
    reachable = args.openings is not None
    measured = measure_grid(args.files, grid=grid, budget=args.budget, seeds=seeds, words_only=args.words_only,
                            config=config, verdicts=verdicts)
    print(f"budget {args.budget}{'; words only' if args.words_only else ''}; splits: alternate" + "".join(f", seed {s}" for s in args.seeds)
          + "; both folds of each"
          + (f"; index {args.index_lines} lines, the agent {'gives verdicts and ' if verdicts else ''}opens "
             "the relevant lines" if args.openings else ""))
    for number, overrides in enumerate(grid):
        cells = []
        for path in args.files:
            s = _summary([r for r in measured[number] if r.file == path.name])
            cells.append(f"{path.name} P {s['precision_before']:.3f}->{s['precision_after']:.3f} "
                         f"R {s['recall_before']:.3f}->{s['recall_after']:.3f}"
                         + (f" reach {s['reachable_before']:.3f}->{s['reachable_after']:.3f}" if reachable else ""))
        print(f"[{number}] {_label(overrides)}: " + "; ".join(cells))
    for path in args.files:
        folds = feedback_folds(path, budget=args.budget, config=config, verdicts=verdicts)
        counts = {k: sum(f.relevant_judged[k] for f in folds) for k in folds[0].relevant_judged}
        given = {k: sum(f.verdicts[k] for f in folds) for k in folds[0].verdicts}
        print(f"{path.name}, alternate split: of {counts['relevant']} relevant memories of held-out tasks, "
              f"{counts['judged_not_relevant']} were judged not relevant and {counts['judged_helpful']} helpful "
              "on the fed half; given: " + ", ".join(f"{k} {v}" for k, v in given.items()))
    every = choose({n: _summary(rows) for n, rows in measured.items()}, reachable=reachable)
    print(f"chosen on every project (the defaults' rule): [{every}] {_label(grid[every])}")
    chosen, held = choose_by_projects(measured, reachable=reachable)
    print("leave-one-project-out, chosen: " + ", ".join(f"{p} [{n}]" for p, n in chosen.items()))
    for path in args.files:
        s = _summary([r for r in held if r.file == path.name])
        d_precision, d_recall = _gain(s)
        print(f"held out, {path.name} ({s['tasks']:.0f} held-out task runs): precision {s['precision_before']:.3f} -> "
              f"{s['precision_after']:.3f} ({d_precision:+.3f}), budget recall {s['recall_before']:.3f} -> "
              f"{s['recall_after']:.3f} ({d_recall:+.3f})"
              + (f", reachable recall {s['reachable_before']:.3f} -> {s['reachable_after']:.3f} "
                 f"({s['reachable_after'] - s['reachable_before']:+.3f})" if reachable else ""))
    for split in dict.fromkeys(r.split for r in held):
        cells = []
        for path in args.files:
            d_precision, d_recall = _gain(_summary([r for r in held if r.file == path.name and r.split == split]))
            cells.append(f"{path.name} {d_precision:+.3f} / {d_recall:+.3f}")
        print(f"  split {split}: " + "; ".join(cells))
    return 0


def _label(overrides: dict[str, float]) -> str:
    off = overrides in (_OFF, _OPENINGS_OFF)
    return " ".join(f"{k.rsplit('.', 1)[1]}={v:g}" for k, v in overrides.items() if v or off) or "off"


if __name__ == "__main__":
    raise SystemExit(main())


