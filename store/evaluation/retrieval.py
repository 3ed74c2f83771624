"""The retrieval eval: how well a ranker picks the memories an agent needs for a hat and a task.

Owns the eval file format (a YAML file naming memory files as corpora, one project each: Ralph
files, or memdeck's own JSON export, told apart by their content,
and labelled queries; see `../shared/eval/README.md`), loading the corpora into a temporary store
through the Ralph parser, the metrics, and the rankers run side by side:

- `memdeck`: `prime` itself (ranking order: the memories above the relevance gate, best first).
- `bm25`: the strongest plain full-text baseline: FTS5 BM25 (porter stemming) of the task's and
  the paths' words, any of them, over title, content and tags, best first, nothing gated.
- `dex`: seed 000's `GetRelevantMemories`: the 50 most confident (> 0.3), scored by confidence,
  hat, path overlap, tag-keyword match and recency; score > 0.25; top 8.
- `claude-ops`: seed 001: every active memory with confidence >= 0.3, by confidence.
- `ralph`: seed 002: the memories file in file order, cut at budget x 4 characters.
- `nova26`: seed 003: critical constraints, the hat's own memories, then the keyword filter
  (task words longer than 3 letters, substring match), top 5 each.

Every ranker but Ralph's is packed into the budget by memdeck's packer, so budget recall compares
choices, not formatting. Metrics (mean over labelled queries; noise probes only count for
`noise_tokens`): `ndcg@8` (gain 2^grade - 1) of the block's order, `order_ndcg@8` of the
ranker's whole order (memdeck's: the block, then every candidate only the gate or the budget
kept out; the others' orders are not cut), `recall@8`, `mrr`, `budget_recall` (the share of
relevant memories in the packed block) and `noise_tokens` (tokens injected on noise probes).
Each is also reported per project, per difficulty and per hat (`by`), with the signals that were
on (`signals`: without the semantic extra the ranker works on words alone, and says so).

`cross_validate` is the two-fold cross-validation of the gate's settings: each set tunes them
(a small grid, the best sum of nDCG@8 and budget recall less a noise penalty), and the other
set is reported with what was tuned.

`pool` (`memdeck eval --pool`) gives every project every other corpus of the set as well, as
memories of its own (`<id>@<n>`), and asks each query in its own project as before: the
same labels in a project several times larger and on more topics, to see whether the ranking
and the gate hold as a project grows (the gate's evidence is a best match, and chance finds
better matches among more memories).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Sequence


from store.engine.clock import FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.retrieval.injection import InjectionContext, prime
from store.interop.detect import detect_format
from store.interop.ralph import parse_ralph
from store.retrieval.packing import CharTokenizer, render_item
from store.retrieval.ranking import SIGNALS
from store.backends.choice import backend_class
from store.evaluation.eval_set import K, Corpus, EvalSet, Outcome, Query, load_eval, pooled  # noqa: F401
from store.evaluation.rankers import (  # noqa: F401 (re-exported for the eval's callers)
    Ranker, bm25_ranker, claude_ops_ranker, dex_ranker, make_ralph_ranker, memdeck_ranker, nova26_ranker,
)

# The dev corpora hold 10-20 memories (1,000-2,300 tokens): at the 2,000-token default nearly
# everything fits and budget recall measures nothing. 500 tokens is about 8 memories, the k of
# nDCG@8. An eval file's `budget:` or `memdeck eval --budget` overrides it.
EVAL_BUDGET = 500
METRICS = ("ndcg@8", "order_ndcg@8", "recall@8", "mrr", "budget_recall", "block_recall", "reachable_recall",
           "index_tokens", "block_precision", "noise_tokens")
# What cross-project probes report (`cross_probes`), and the alone/with-neighbours comparison.
CROSS_METRICS = ("cross_probes", "cross_injecting", "cross_tokens", "cross_over_500")
NEIGHBOUR_METRICS = ("alone_differs", "noise_tokens_alone")
# A cross-project probe block above this many tokens is counted apart (`cross_over_500`).
CROSS_LARGE = 500
DIFFICULTIES = ("easy", "hard")


def _created(text: str, fallback: float) -> float:
    try:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return fallback


def load_corpora(store: Store, corpora: Sequence[Corpus]) -> dict[str, list[str]]:
    """Import each corpus into its project; returns each project's memory ids in file order."""
    order: dict[str, list[str]] = {}
    for corpus in corpora:
        try:
            text = corpus.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"{corpus.path}: cannot read the corpus: {exc.strerror}") from None
        ids = order.setdefault(corpus.project, [])
        if detect_format(text, str(corpus.path)) == "json":
            _load_export(store, corpus, text, ids)
            continue
        parsed = parse_ralph(text, str(corpus.path), vocabulary=store.vocabulary)
        with store.transaction():
            for memory in parsed.memories:
                created = _created(memory.created, float(memory.id_timestamp or store.now()))
                store.add(memory.content, type=memory.type, tags=memory.tags, source="imported",
                          project=corpus.project, memory_id=memory.id + corpus.suffix, created_at=created,
                          reinforce=False, actor="eval", meta={"ralph_section": memory.section})
                ids.append(memory.id + corpus.suffix)
    return order


# The fields of a memdeck export's memory an eval corpus keeps: what ranking reads. Its
# history, anchors and sessions are left out: the eval's store is made for the queries alone.
EXPORT_FIELDS = ("title", "tags", "hat", "scope", "file_refs", "confidence", "status", "created_at", "updated_at")


def _load_export(store: Store, corpus: Corpus, text: str, ids: list[str]) -> None:
    """A corpus kept in memdeck's own JSON export (the lossless format): its memories with their
    ids, titles and fields, so a labelled set names them as the export does."""
    from store.interop.memdeck_json import loads

    document = loads(text, str(corpus.path))
    with store.transaction():
        for n, incoming in enumerate(document.memories):
            fields = incoming.fields
            memory_id = str(fields.get("id") or f"{corpus.path.stem}-{n + 1}") + corpus.suffix
            kept = {k: fields[k] for k in EXPORT_FIELDS if fields.get(k) is not None}
            kept.setdefault("created_at", store.now())
            store.add(fields["content"], type=fields["type"], source="imported", project=corpus.project,
                      memory_id=memory_id, reinforce=False, actor="eval", **kept)
            ids.append(memory_id)


# -- metrics ------------------------------------------------------------------------------------

def ndcg(ranking: Sequence[str], relevant: dict[str, int], k: int = K) -> float:
    gains = [2 ** relevant.get(i, 0) - 1 for i in ranking[:k]]
    dcg = sum(g / math.log2(n + 2) for n, g in enumerate(gains))
    ideal = sorted((2 ** g - 1 for g in relevant.values()), reverse=True)[:k]
    best = sum(g / math.log2(n + 2) for n, g in enumerate(ideal))
    return dcg / best if best else 0.0


def recall(selected: Sequence[str], relevant: dict[str, int]) -> float:
    return len(set(selected) & set(relevant)) / len(relevant) if relevant else 0.0


def reciprocal_rank(ranking: Sequence[str], relevant: dict[str, int]) -> float:
    return next((1.0 / (n + 1) for n, i in enumerate(ranking) if i in relevant), 0.0)


def block_precision(labelled: Sequence[tuple[Query, Outcome]]) -> float:
    """The share of the memories injected on labelled on-topic tasks that are labelled relevant
    (over every injected memory of those tasks together; 0 when nothing was injected)."""
    injected = sum(len(o.packed) for _, o in labelled)
    hits = sum(len(set(o.packed) & set(q.relevant)) for q, o in labelled)
    return round(hits / injected, 4) if injected else 0.0


def cross_probes(spec: EvalSet) -> list[Query]:
    """Every labelled on-topic task of the set asked in each other project of the set: nothing
    there is about it, so whatever is injected is noise."""
    projects = list(dict.fromkeys(corpus.project for corpus in spec.corpora))
    return [replace(q, id=f"{q.id}>{other}", project=other, relevant={}, noise_probe=True)
            for q in spec.queries if not q.noise_probe and q.relevant
            for other in projects if other != q.project]


def cross_metrics(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """Cross-project probes: how many, the share injecting anything, mean tokens, the share over
    `CROSS_LARGE` tokens."""
    count = len(outcomes)
    return {
        "cross_probes": float(count),
        "cross_injecting": _mean([1.0 if o.packed else 0.0 for o in outcomes]),
        "cross_tokens": _mean([float(o.tokens) for o in outcomes]),
        "cross_over_500": _mean([1.0 if o.tokens > CROSS_LARGE else 0.0 for o in outcomes]),
    }


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _metrics(pairs: Sequence[tuple[Query, Outcome]]) -> dict[str, float]:
    labelled = [(q, o) for q, o in pairs if not q.noise_probe and q.relevant]
    metrics = {
        "ndcg@8": _mean([ndcg(o.ranking, q.relevant) for q, o in labelled]),
        "order_ndcg@8": _mean([ndcg(o.ranking if o.order is None else o.order, q.relevant) for q, o in labelled]),
        "recall@8": _mean([recall(o.ranking[:K], q.relevant) for q, o in labelled]),
        "mrr": _mean([reciprocal_rank(o.ranking, q.relevant) for q, o in labelled]),
        "budget_recall": _mean([recall(o.packed, q.relevant) for q, o in labelled]),
        # The same as budget_recall, by the name the index gives it: what the block holds whole.
        "block_recall": _mean([recall(o.packed, q.relevant) for q, o in labelled]),
        # In the block or a line of its index: what the agent is handed or can open.
        "reachable_recall": _mean([recall([*o.packed, *o.indexed], q.relevant) for q, o in labelled]),
        "index_tokens": _mean([float(o.index_tokens) for q, o in labelled]),
        "block_precision": block_precision(labelled),
    }
    probes = [float(o.tokens) for q, o in pairs if q.noise_probe]
    if probes:
        metrics["noise_tokens"] = _mean(probes)
    return metrics


def summarise(queries: Sequence[Query], outcomes: Sequence[Outcome]) -> dict[str, float]:
    """The metrics over all queries, and by difficulty (`ndcg@8:hard`, ...)."""
    pairs = list(zip(queries, outcomes))
    summary = _metrics(pairs)
    summary.setdefault("noise_tokens", 0.0)
    for difficulty in DIFFICULTIES:
        subset = [(q, o) for q, o in pairs if q.difficulty == difficulty]
        if subset:
            summary.update({f"{name}:{difficulty}": value for name, value in _metrics(subset).items()
                            if name != "noise_tokens"})
    return summary


BREAKDOWNS = ("project", "difficulty", "hat")


def _group(query: Query, by: str) -> str:
    if by == "difficulty":
        return "noise probe" if query.noise_probe else (query.difficulty or "-")
    return str(getattr(query, by) or "-")


def breakdown(queries: Sequence[Query], outcomes: Sequence[Outcome]) -> dict[str, dict[str, dict[str, float]]]:
    """The metrics per project, per difficulty (noise probes a group of their own) and per hat,
    each with its number of queries."""
    pairs = list(zip(queries, outcomes))
    groups: dict[str, dict[str, dict[str, float]]] = {}
    for by in BREAKDOWNS:
        groups[by] = {}
        for value in sorted({_group(q, by) for q in queries}):
            members = [(q, o) for q, o in pairs if _group(q, by) == value]
            groups[by][value] = {"queries": float(len(members)), **_metrics(members)}
    return groups


def signals_on(config: Config) -> dict[str, Any]:
    """Which signals the memdeck ranker used (with their weights), and the gate's settings.
    Without the semantic extra the ranker works on words alone, and this says why."""
    from store.index import embedding

    weights = {name: float(getattr(config.injection.weights, name, 0.0)) for name in SIGNALS}
    if not config.injection.semantic:
        semantic = "off (injection.semantic is false): words alone"
    elif not embedding.available():
        semantic = "off (the semantic extra is not installed: pip install 'memdeck[semantic]'): words alone"
    else:
        semantic = f"on ({embedding.MODEL_ID})"
    if not semantic.startswith("on"):
        weights["text"] += weights.pop("semantic")
    return {"semantic": semantic, "weights": {k: v for k, v in weights.items() if v > 0},
            "gate": asdict(config.injection.gate)}


@dataclass(frozen=True)
class Loss:
    """A relevant memory memdeck's block left out, and where it was lost."""

    query: str
    memory: str
    grade: int
    kind: str  # LOSS_KINDS
    rank: int | None  # among the candidates, by score (None: not a candidate)
    tokens: int  # its item's cost in the block
    bm25: bool  # plain BM25's block holds it


# Where a relevant memory is lost, from retrieval to packing.
LOSS_KINDS = ("not a candidate", "ineligible", "gate: nothing here", "gate: weak evidence",
              "gate: relevance 0", "gate: own evidence 0", "gate: below the floor", "gate: below the cap",
              "over budget")


def losses(store: Store, query: Query, budget: int, bm25_packed: Sequence[str]) -> list[Loss]:
    """Each relevant memory that memdeck's block for `query` leaves out, and why: never a
    candidate (retrieval), kept out by the gate (the task's evidence weak, or nothing said it
    was about an on-topic task), or ranked too low for the budget (ranking and packing)."""
    result = prime(store, InjectionContext(hat=query.hat, task=query.task, paths=query.paths,
                                           budget=budget, project=query.project))
    included = {r.memory.id for r in result.included}
    candidates = sorted([*result.included, *result.excluded], key=lambda r: (-r.score, r.memory.id))
    rank = {r.memory.id: n for n, r in enumerate(candidates)}
    found = {r.memory.id: r for r in candidates}
    tokenizer = CharTokenizer()
    lost = []
    for memory_id, grade in query.relevant.items():
        if memory_id in included:
            continue
        item = found.get(memory_id)
        if item is None:
            kind = "not a candidate"
        elif item.reason == "over budget":
            kind = "over budget"
        elif item.reason and item.reason == item.gate:
            kind = ("gate: below the cap" if item.gate.startswith("below the cap") else
                    "gate: below the floor" if item.gate.startswith("below the floor") else
                    "gate: weak evidence" if "weak evidence" in item.gate else
                    "gate: relevance 0" if item.gate.startswith("below the gate: relevance 0,") else
                    "gate: own evidence 0" if item.gate.startswith("below the gate: own evidence 0") else
                    "gate: nothing here")
        else:
            kind = "ineligible"
        memory = item.memory if item is not None else next(iter(store.get_many([memory_id])), None)
        tokens = tokenizer.count(render_item(memory, "type")) if memory is not None else 0
        lost.append(Loss(query.id, memory_id, grade, kind, rank.get(memory_id), tokens,
                         memory_id in bm25_packed))
    return lost


@dataclass(frozen=True)
class EvalReport:
    results: dict[str, dict[str, float]]  # ranker -> metric -> value
    per_query: dict[str, dict[str, Outcome]]  # ranker -> query id -> outcome
    budget: int
    queries: int
    by: dict[str, dict[str, dict[str, dict[str, float]]]] = field(default_factory=dict)  # ranker -> breakdown
    signals: dict[str, Any] = field(default_factory=dict)
    losses: list[Loss] = field(default_factory=list)  # with `explain_losses`: memdeck's, per query
    pool: bool = False  # every project held every other corpus too


@contextmanager
def _scratch_store(server: str | None) -> Iterator[Path | str]:
    """Where an eval's corpora are loaded: a file in a temporary folder, or, given a PostgreSQL
    URL, a temporary database on that server (dropped afterwards)."""
    with backend_class(server or "").scratch(server) as location:
        yield location


@contextmanager
def _loaded(spec: EvalSet, config: Config, server: str | None) -> Iterator[tuple[Store, dict[str, list[str]]]]:
    """A temporary store holding the set's corpora, on the eval's frozen clock."""
    with _scratch_store(server) as location:
        clock = FrozenClock(datetime(2026, 3, 1, tzinfo=timezone.utc))
        with Store.open(location, project=spec.corpora[0].project if spec.corpora else "eval",
                        config=config, clock=clock) as store:
            yield store, load_corpora(store, spec.corpora)


# The rankers whose cross-project probes and alone/with-neighbours comparison are reported.
COMPARED = ("memdeck", "bm25")


def _every_ranker(order: dict[str, list[str]]) -> dict[str, Ranker]:
    return {"memdeck": memdeck_ranker, "bm25": bm25_ranker, "dex": dex_ranker,
            "claude-ops": claude_ops_ranker, "ralph": make_ralph_ranker(order), "nova26": nova26_ranker}


def neighbour_comparison(spec: EvalSet, config: Config, budget: int, server: str | None,
                         per_query: dict[str, dict[str, Outcome]]) -> dict[str, dict[str, Any]]:
    """Each project alone in a store, its queries asked again: how many blocks hold another set
    of memories than with every corpus beside it (`per_query`), and the noise probes' tokens alone."""
    names = [name for name in COMPARED if name in per_query]
    alone: dict[str, dict[str, Outcome]] = {name: {} for name in names}
    for project in dict.fromkeys(corpus.project for corpus in spec.corpora):
        own = EvalSet(tuple(c for c in spec.corpora if c.project == project),
                      tuple(q for q in spec.queries if q.project == project), spec.budget)
        if not own.queries:
            continue
        with _loaded(own, config, server) as (store, order):
            rankers = _every_ranker(order)
            for name in names:
                alone[name].update({q.id: rankers[name](store, q, budget) for q in own.queries})
    result: dict[str, dict[str, Any]] = {}
    for name in names:
        differs = sorted(qid for qid, outcome in alone[name].items()
                         if set(outcome.packed) != set(per_query[name][qid].packed))
        probes = [float(alone[name][q.id].tokens) for q in spec.queries if q.noise_probe and q.id in alone[name]]
        result[name] = {"alone_differs": float(len(differs)), "noise_tokens_alone": _mean(probes),
                        "differing": differs}
    return result


def run_eval(path: Path, *, config: Config | None = None, budget: int | None = None,
             rankers: Sequence[str] | None = None, server: str | None = None,
             explain_losses: bool = False, pool: bool = False, cross: bool = True,
             neighbours: bool = False) -> EvalReport:
    """Load the eval file's corpora into a temporary store, run every ranker (or those named)
    on every query. `server`: a PostgreSQL URL to build that store in, instead of SQLite.
    `explain_losses`: say where each relevant memory memdeck's block leaves out was lost.
    `pool`: every project holds every other corpus too (`pooled`). `cross`: memdeck's and
    BM25's cross-project probes (`cross_probes`). `neighbours`: each project alone in a store
    as well, compared with the blocks beside every corpus (`neighbour_comparison`)."""
    spec = pooled(load_eval(path)) if pool else load_eval(path)
    config = config or Config.defaults()
    budget = budget or spec.budget or EVAL_BUDGET
    # Pooled, every project holds every corpus: a task asked in another project is not noise there.
    probes = cross_probes(spec) if cross and not pool else []
    with _loaded(spec, config, server) as (store, order):
        every = _every_ranker(order)
        chosen = {name: every[name] for name in (rankers or every)}
        per_query = {name: {q.id: ranker(store, q, budget) for q in spec.queries}
                     for name, ranker in chosen.items()}
        crossed = {name: [chosen[name](store, q, budget) for q in probes]
                   for name in COMPARED if name in chosen and probes}
        lost = []
        if explain_losses:
            for q in spec.queries:
                if q.noise_probe:
                    continue
                plain = per_query["bm25"][q.id].packed if "bm25" in per_query else bm25_ranker(store, q, budget).packed
                lost.extend(losses(store, q, budget, plain))
    outcomes = {name: [per_query[name][q.id] for q in spec.queries] for name in chosen}
    results = {name: summarise(spec.queries, outcomes[name]) for name in chosen}
    for name, found in crossed.items():
        results[name].update(cross_metrics(found))
    if neighbours and not pool:
        for name, compared in neighbour_comparison(spec, config, budget, server, per_query).items():
            results[name].update({k: v for k, v in compared.items() if k in NEIGHBOUR_METRICS})
    by = {name: breakdown(spec.queries, outcomes[name]) for name in chosen}
    return EvalReport(results, per_query, budget, len(spec.queries), by, signals_on(config), lost, pool)


def as_json(report: EvalReport) -> dict[str, Any]:
    return report.results


# -- cross-validation -------------------------------------------------------------------------

# The gate's settings tried when tuning (how far above chance the words must stand, and the
# per-memory floor: 0, the default, or the floor used before the block's cap), with the
# semantic signal or on words alone: few, so two small sets cannot be fitted query by query.
TUNING_GRID = {
    "semantic": {"injection.gate.word_surprise": (0.5, 1.0, 1.5), "injection.gate.floor": (0.0, 0.5)},
    "words": {"injection.gate.word_surprise": (0.5, 1.0, 1.5), "injection.gate.floor": (0.0, 0.5)},
}


# The injection issue's goals (issue 25), each a floor or a ceiling: what tuning comes nearest to.
GOALS_AT_LEAST = {"block_precision": 0.35, "budget_recall": 0.85, "ndcg@8": 0.68}
GOALS_AT_MOST = {"cross_tokens": 150.0, "cross_over_500": 0.05, "noise_tokens": 100.0}


def objective(metrics: dict[str, float]) -> float:
    """What tuning (and each leave-one-project-out fold) maximises: minus the shortfall from the
    issue's goals (`GOALS_AT_LEAST`, `GOALS_AT_MOST`), each relative to its goal, so no one
    figure can be bought with another past its goal; among settings that meet every goal, the
    higher nDCG@8, budget recall and block precision (a tie-break)."""
    short = sum(max(0.0, goal - metrics.get(key, 0.0)) / goal for key, goal in GOALS_AT_LEAST.items())
    short += sum(max(0.0, metrics.get(key, 0.0) - goal) / goal for key, goal in GOALS_AT_MOST.items())
    return -short + 0.01 * sum(metrics.get(key, 0.0) for key in GOALS_AT_LEAST)


@dataclass(frozen=True)
class Fold:
    tuned_on: str
    reported_on: str
    settings: dict[str, float]
    tuned: dict[str, float]  # the tuning set's metrics with those settings
    reported: dict[str, float]  # the other set's


def _with(config: Config, values: dict[str, Any]) -> Config:
    return config.with_overrides(values, "tuning")


def cross_validate(first: Path, second: Path, *, config: Config | None = None,
                   budget: int | None = None, server: str | None = None, pool: bool = False) -> list[Fold]:
    """Tune the gate on each set and report the other with what was tuned."""
    import itertools

    base = config or Config.defaults()
    grid = TUNING_GRID["semantic" if signals_on(base)["semantic"].startswith("on") else "words"]
    names = list(grid)
    runs: dict[Path, list[tuple[dict[str, Any], dict[str, float]]]] = {first: [], second: []}
    for values in itertools.product(*grid.values()):
        settings = dict(zip(names, values))
        for path in runs:
            report = run_eval(path, config=_with(base, settings), budget=budget, rankers=("memdeck",),
                              server=server, pool=pool)
            runs[path].append((settings, report.results["memdeck"]))
    folds = []
    for tune, other in ((first, second), (second, first)):
        settings, tuned = max(runs[tune], key=lambda run: objective(run[1]))
        reported = next(metrics for s, metrics in runs[other] if s == settings)
        folds.append(Fold(tune.name, other.name, settings, tuned, reported))
    return folds
