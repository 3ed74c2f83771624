"""`memdeck eval --feedback-folds`: whether an agent's feedback makes the next blocks better.
Each project's labelled tasks split in two halves; feedback given on one half as an agent that
knew the labels would (helpful on the relevant memories a block holds, not relevant on the
others), block precision and budget recall measured on the other half, before and after."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from store.engine.clock import FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.retrieval.eval_set import Query, load_eval
from store.retrieval.evaluation import EVAL_BUDGET, _mean, _scratch_store, load_corpora, recall
from store.retrieval.injection import InjectionContext, prime
from store.retrieval.rankers import memdeck_ranker


@dataclass(frozen=True)
class FeedbackFold:
    """One fold of `feedback_folds`: feedback given on one half of each project's tasks, the
    other half measured before and after."""

    fed: tuple[str, ...]  # the query ids feedback was given on
    measured: tuple[str, ...]  # the query ids measured
    before: dict[str, float]
    after: dict[str, float]
    verdicts: dict[str, int]  # verdict -> how many were given


def one_block_precision(packed: Sequence[str], relevant: dict[str, int]) -> float | None:
    """The share of one block's memories labelled relevant; None for an empty block (the mean
    of these is `feedback_folds`' precision; `block_precision` pools every block's memories)."""
    return len(set(packed) & set(relevant)) / len(packed) if packed else None


def _block_metrics(store: Store, queries: Sequence[Query], budget: int) -> dict[str, float]:
    outcomes = [memdeck_ranker(store, q, budget) for q in queries]
    precisions = [p for p in (one_block_precision(o.packed, q.relevant) for q, o in zip(queries, outcomes))
                  if p is not None]
    injected = sum(len(o.packed) for o in outcomes)
    hits = sum(len(set(o.packed) & set(q.relevant)) for q, o in zip(queries, outcomes))
    return {"precision": _mean(precisions), "pooled_precision": round(hits / injected, 4) if injected else 0.0,
            "budget_recall": _mean([recall(o.packed, q.relevant) for q, o in zip(queries, outcomes)]),
            "memories": round(injected / len(queries), 2) if queries else 0.0, "queries": float(len(queries))}


def _give_fold_feedback(store: Store, queries: Sequence[Query], budget: int) -> dict[str, int]:
    """What an agent that knew the labels would say of each block: helpful on its labelled
    relevant memories, not relevant on the others."""
    from store.engine.feedback import give_feedback

    given = {"helpful": 0, "not_relevant": 0}
    for q in queries:
        result = prime(store, InjectionContext(hat=q.hat, task=q.task, paths=q.paths, budget=budget,
                                               project=q.project))
        for item in result.included:
            verdict = "helpful" if item.memory.id in q.relevant else "not_relevant"
            give_feedback(store, item.memory.id, verdict, task=q.task, actor="eval",
                          evidence={k: item.signals.get(k, 0.0) for k in ("relevance", "cosine")})
            given[verdict] += 1
    return given


def feedback_folds(path: Path, *, config: Config | None = None, budget: int | None = None,
                   server: str | None = None) -> list[FeedbackFold]:
    """Two folds: each project's labelled tasks split in two halves (alternately, in file order);
    feedback given on one half, block precision and budget recall measured on the other, before
    and after; then the halves swapped, each fold in a fresh store."""
    spec = load_eval(path)
    config = config or Config.defaults()
    budget = budget or spec.budget or EVAL_BUDGET
    labelled = [q for q in spec.queries if not q.noise_probe and q.relevant]
    halves: tuple[list[Query], list[Query]] = ([], [])
    for project in dict.fromkeys(q.project for q in labelled):
        mine = [q for q in labelled if q.project == project]
        halves[0].extend(mine[0::2])
        halves[1].extend(mine[1::2])
    folds = []
    for fed, measured in (halves, halves[::-1]):
        with _scratch_store(server) as location:
            clock = FrozenClock(datetime(2026, 3, 1, tzinfo=timezone.utc))
            with Store.open(location, project=spec.corpora[0].project if spec.corpora else "eval",
                            config=config, clock=clock) as store:
                load_corpora(store, spec.corpora)
                before = _block_metrics(store, measured, budget)
                verdicts = _give_fold_feedback(store, fed, budget)
                after = _block_metrics(store, measured, budget)
        folds.append(FeedbackFold(tuple(q.id for q in fed), tuple(q.id for q in measured), before, after, verdicts))
    return folds


