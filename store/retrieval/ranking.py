"""Relevance ranking: which memories matter for an injection context, and why.

Owns the candidate search (done in SQL, the back-end's `store.backends.ranking_rows`, and, for
the semantic signal, one matrix product, so a 100,000-memory store is not scored row by row in
Python), the signals, their weights from
`injection.weights` in config, and the eligibility rules. Each ranked memory carries its score,
its per-signal breakdown (each signal 0..1 whatever the stored values, before weighting) and,
when it cannot be injected, the reason. Whether a memory is about the task enough to be
injected is the relevance gate's call (`store.retrieval.gate`).

Signals:
- `text`: BM25 of the task's words (identifiers split, generic verbs left out) and the paths'
  names over title, content, tags and identifier words (FTS5, porter stemming), relative to the
  best match of this task (1 for the best).
- `semantic`: cosine of the task's and the memory's embedding vectors (the `semantic` extra,
  `store.index.embedding`), placed between the project's typical cosine with this task (0) and the
  best one (1); `cosine` keeps the plain value.
  Without the extra both are 0 and `text` carries the weight of both.
- `path`: a file ref glob covers a path in play (seed 000), or the text names one.
- `tag`: a memory tag is one of the context's tags, or a word of the task.
- `hat`: same hat 1, related hat (seed 000's relations, configurable) `injection.hat_related`.
- `confidence`, `recency` (seed 000: last use within `injection.recency_days`), and `critical`:
  high-confidence constraints and architecture, always considered and always surfaced (seed 003).
- `words`: the share of the task's specific words (weighted by their rarity) the memory uses:
  evidence for the gate, not part of the score.

The score is the weighted sum of the signals; `relevance` (0..1) is how surely a memory is about
the task: the text and semantic signals at their weights, and path and tag as further signs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any, Sequence

from store.backends import ranking_rows
from store.backends.base import quote_fts_term
from store.engine.core import Store, memory_from_row
from store.retrieval.judged import Judged
from store.engine.records import InjectionContext, Memory
from store.retrieval.chance import word_chance
from store.retrieval.gate import apply_gate, task_evidence
from store.retrieval.personal import personal_cosines, personal_ids
from store.retrieval.ranked import RankedMemory, Ranking, gate_applies, is_targeted  # noqa: F401 (re-exported)
from store.retrieval.word_statistics import (  # noqa: F401 (re-exported)
    BM25_B, BM25_K1, bm25_scores, corpus_size, idf, text_candidates, word_counts, word_hits, word_scores,
)
from store.retrieval.words import (  # noqa: F401 (re-exported)
    STOP_WORDS, TaskWords, keywords, normalise_path, path_words, root, specific,
)


SIGNALS = ("text", "semantic", "path", "tag", "hat", "confidence", "recency", "critical")


@dataclass(frozen=True)
class Settings:
    """The `injection` section of config, read once per ranking."""

    weights: dict[str, float]
    confidence_floor: float
    hat_related: float
    recency_days: float
    critical_types: tuple[str, ...]
    critical_confidence: float
    critical_limit: int
    text_candidates: int
    semantic_candidates: int
    confident_candidates: int
    common_word: int
    unseen: int
    path_candidates: int
    generic_words: frozenset[str]
    semantic: bool  # the semantic signal is wanted and the extra is installed

    @classmethod
    def from_store(cls, store: Store) -> "Settings":
        from store.index import embedding

        cfg = store.config
        weights = {name: float(getattr(cfg.injection.weights, name, 0.0)) for name in SIGNALS}
        settings = cls(
            weights=weights,
            confidence_floor=float(cfg.injection.confidence_floor),
            hat_related=float(cfg.injection.hat_related),
            recency_days=float(cfg.injection.recency_days),
            critical_types=tuple(cfg.injection.critical.types),
            critical_confidence=float(cfg.injection.critical.min_confidence),
            critical_limit=int(cfg.injection.critical.limit),
            text_candidates=int(cfg.injection.candidates.text),
            semantic_candidates=int(cfg.injection.candidates.semantic),
            confident_candidates=int(cfg.injection.candidates.confident),
            common_word=int(cfg.injection.candidates.common_word),
            unseen=int(cfg.injection.candidates.unseen),
            path_candidates=int(cfg.injection.candidates.path),
            generic_words=frozenset(root(str(w).lower()) for w in cfg.injection.generic_words),
            semantic=True,
        )
        return settings if cfg.injection.semantic and embedding.available() else settings.words_alone()

    def words_alone(self) -> "Settings":
        """Without the semantic signal the text signal carries what the two carried together."""
        weights = {**self.weights, "text": self.weights["text"] + self.weights["semantic"], "semantic": 0.0}
        return replace(self, weights=weights, semantic=False)


def or_query(words: Sequence[str]) -> str | None:
    return " OR ".join(quote_fts_term(w) for w in words) or None


def unit(value: Any) -> float:
    """A signal as a number within 0..1, whatever was stored (NaN, negative, above 1, text)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(number):
        return 0.0
    return min(1.0, max(0.0, number))


# -- the candidate search ---------------------------------------------------------------------

def _path_refs(store: Store, project_id: int, paths: Sequence[str], limit: int) -> set[str]:
    """The most confident active memories (at most `limit`) with a file ref glob covering a path
    in play, or inside a folder in play (`ranking_rows.covering_paths`)."""
    if not paths:
        return set()
    return ranking_rows.covering_paths(store.backend, project_id, paths, limit)


def _confident(store: Store, project_id: int, settings: Settings) -> list[str]:
    """Seed 000's pool: the most confident active memories, and seed 003's critical ones."""
    ids = ranking_rows.most_confident(store.backend, project_id, settings.confident_candidates)
    if settings.critical_types and settings.critical_limit > 0:
        ids.extend(ranking_rows.critical(store.backend, project_id, settings.critical_confidence,
                                         settings.critical_types, settings.critical_limit))
    return ids


def _fetch(store: Store, ids: Sequence[str]) -> list[tuple[Memory, str]]:
    """The memories, each with its identifier words (`memory.words`)."""
    return [(memory_from_row(row), words or "") for row, words in ranking_rows.with_words(store.backend, ids)]


# -- scoring ------------------------------------------------------------------------------------

def _mentions(memory: Memory, paths: Sequence[str]) -> float:
    """How directly the memory's text names a path in play: whole path, file name, or stem."""
    text = memory.content.lower()
    best = 0.0
    for path in paths:
        lowered = path.lower()
        name = lowered.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
        if lowered in text:
            return 1.0
        if name in text:
            best = max(best, 0.8)
        elif len(stem) >= 4 and re.search(rf"\b{re.escape(stem)}\b", text):
            best = max(best, 0.6)
    return best


def _between(value: float, low: float, high: float) -> float:
    """`value` placed from `low` (0) to `high` (1); when they meet (a project of one memory, or
    of equals), the best is 1."""
    if high > low:
        return unit((value - low) / (high - low))
    return 1.0 if value >= high and value > 0 else 0.0


def _tag_signal(memory: Memory, context_tags: set[str], task_words: Sequence[str]) -> float:
    tags = {str(t).lower() for t in memory.tags}
    if tags & context_tags:
        return 1.0
    words = set(task_words)
    hits = sum(1 for t in tags if t in words or t.rstrip("s") in words)
    return min(1.0, 0.5 * hits)


def _recency(memory: Memory, now: float, days: float) -> float:
    """1 for a memory used just now, fading to 0 over `days`. A last use stored in the future
    (a clock that was wrong) counts as now, never as more."""
    if memory.last_used_at is None or days <= 0:
        return 0.0
    return unit(1.0 - max(0.0, now - unit_time(memory.last_used_at, now)) / 86400.0 / days)


def unit_time(value: Any, now: float) -> float:
    """A stored time as a number no later than now; unreadable as the distant past."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return now if math.isnan(number) or number > now else number


def relevance(signals: dict[str, float], weights: dict[str, float]) -> float:
    """How surely a memory is about the task, 0..1: the text and semantic signals at their
    weights, and path and tag as further signs (a noisy-OR, each at its weight relative to the
    text and semantic weights together)."""
    content_weight = weights["text"] + weights["semantic"]
    unit_weight = content_weight or 1.0
    content = (weights["text"] * signals["text"] + weights["semantic"] * signals["semantic"]) / unit_weight
    doubt = 1.0 - min(1.0, content)
    for name in ("path", "tag"):
        doubt *= 1.0 - min(1.0, signals[name] * weights[name] / unit_weight)
    return unit(1.0 - doubt)


def is_critical(memory: Memory, settings: Settings) -> bool:
    return memory.type in settings.critical_types and unit(memory.confidence) >= settings.critical_confidence


def score_memory(memory: Memory, *, identifier_words: str = "", text: float, cosine: float,
                 cosine_range: tuple[float, float], ref_match: bool,
                 context: "InjectionContext", settings: Settings, vocabulary, now: float,
                 context_tags: set[str], task_words: TaskWords, found_share: float = 0.0) -> RankedMemory:
    # The index's stemming finds forms the crude root misses ("deliveries" for "delivery").
    share = max(task_words.share(memory, identifier_words), found_share)
    signals = {
        # BM25's idf is near zero in a store of a few memories; the share of the task's words
        # still sees a memory that says what the task says.
        "text": max(unit(text), share),
        "semantic": _between(cosine, *cosine_range),
        "path": 1.0 if ref_match else _mentions(memory, context.paths),
        "tag": _tag_signal(memory, context_tags, list(task_words.weights)),
        "hat": {"same": 1.0, "related": unit(settings.hat_related)}.get(
            vocabulary.hat_alignment(memory.hat, context.hat), 0.0),
        "confidence": unit(memory.confidence),
        "recency": _recency(memory, now, settings.recency_days),
        "critical": 1.0 if is_critical(memory, settings) else 0.0,
    }
    w = settings.weights
    score = sum(w[s] * signals[s] for s in SIGNALS)
    signals["cosine"] = unit(cosine)
    signals["words"] = share
    signals["relevance"] = relevance(signals, w)
    return RankedMemory(memory, score, signals)


def ineligible(memory: Memory, context: "InjectionContext", settings: Settings) -> str:
    """Why this memory can never be injected in this context, or '' if it can."""
    if memory.status != "active":
        if memory.status == "inactive" and memory.meta.get("superseded_by"):
            return f"inactive (superseded by {memory.meta['superseded_by']})"
        return {"pending": "pending review", "inactive": "inactive", "deleted": "deleted (in the trash)"}.get(
            memory.status, memory.status)
    if context.session_id and memory.session_id == context.session_id and not context.own_memories:
        return "from this session"
    if unit(memory.confidence) < settings.confidence_floor:
        return f"confidence {memory.confidence:.2f} below the floor {settings.confidence_floor:.2f}"
    return ""


def rank(store: Store, context: "InjectionContext", *, only: set[str] | None = None) -> Ranking:
    """Every candidate for `context`, best first; those that may not be injected carry a reason
    (eligibility, then the relevance gate)."""
    ranking = score_candidates(store, context, only=only)
    targeted = gate_applies(store, context)
    evidence = task_evidence(store.config.injection.gate, context, ranking,
                             [item for item in ranking.items if not item.reason]) if targeted else None
    return replace(ranking, items=apply_gate(store, context, ranking, targeted=targeted), targeted=targeted,
                   evidence=evidence)


def score_candidates(store: Store, context: "InjectionContext", *, only: set[str] | None = None) -> Ranking:
    """Every candidate for `context`, scored, best first; the ineligible carry their reason.

    `only`, when given, makes exactly these ids the candidates (`prime --since`).
    """
    settings = Settings.from_store(store)
    project_id = store.project_id(context.project)
    paths = [normalise_path(p) for p in context.paths if p.strip()]
    task_keywords = keywords(context.task)
    project = context.project or store.project
    wanted = specific([*task_keywords, *path_words(paths)], settings.generic_words, project)
    query_words = list(dict.fromkeys([*wanted, *(t.lower() for t in context.tags)]))
    hits = word_hits(store, project_id, query_words, settings.common_word)
    limited = None if only is None else sorted(only)
    size = corpus_size(store, project_id) + settings.unseen
    # A word's weight is its rarity (BM25's idf) among the project's own memories, so "checkout"
    # counts for more than "page", whatever other projects the store holds.
    rarity = {w: idf(size, len(found)) for w, found in hits.items() if len(found) < settings.common_word}
    searched = {w: found for w, found in hits.items() if w in rarity}
    scores = word_scores(searched, rarity)
    text_ids = text_candidates(scores, settings.text_candidates, limited)
    chance = word_chance(searched, rarity, size)
    task_words = TaskWords({w: idf(size, len(hits[w])) for w in dict.fromkeys(wanted)})
    # The person's `personal` memories from any project are candidates as the project's own are,
    # scored with the project's rarities (their own project's words say nothing about this one).
    personal = personal_ids(store, project_id, settings.confident_candidates) if limited is None else []
    if personal:
        for word, found in word_hits(store, None, list(searched), settings.common_word, personal).items():
            searched[word] = searched[word] | found
        scores = word_scores(searched, rarity)
        text_ids = list(dict.fromkeys([*text_ids, *(i for i in personal if i in scores)]))
    cosines: dict[str, float] = {}
    typical = spread = 0.0
    compared = 0
    if settings.semantic and wanted:
        from store.retrieval.semantic import similar

        similarity = similar(store, project_id, context.task, settings.semantic_candidates, limited)
        cosines, typical, compared = similarity.cosines, similarity.typical, similarity.vectors
        spread = similarity.spread
        cosines.update(personal_cosines(store, context.task, personal))
        if not similarity.vectors:
            settings = settings.words_alone()  # no memory has a vector of this model yet
    refs = _path_refs(store, project_id, paths, settings.path_candidates)
    if limited is None:
        ids = list(dict.fromkeys([*text_ids, *cosines, *refs, *_confident(store, project_id, settings), *personal]))
    else:
        ids = limited  # a handful since a recent time: every one is a candidate
    fetched = _fetch(store, ids)
    chosen = set(text_ids)
    bm25 = bm25_scores([f for f in fetched if f[0].id in chosen], searched, rarity,
                       store.config.injection.field_weights)
    best_text = max(bm25.values(), default=0.0)
    cosine_range = (typical, max(cosines.values(), default=0.0))
    context_tags = {t.lower() for t in context.tags}
    now = store.now()
    # Agents' not_relevant / helpful judgments (store.retrieval.judged): the one hook-in point.
    judged = Judged.from_candidates(context.task, task_words, settings.semantic, [m for m, _ in fetched],
                                    store.config.injection.feedback)
    ranked = []
    for memory, identifier_words in fetched:
        text = bm25.get(memory.id, 0.0) / best_text if best_text > 0 else 0.0
        item = score_memory(memory, identifier_words=identifier_words, text=text,
                            cosine=cosines.get(memory.id, 0.0), cosine_range=cosine_range,
                            ref_match=memory.id in refs, context=context, settings=settings,
                            vocabulary=store.vocabulary, now=now, context_tags=context_tags,
                            task_words=task_words,
                            found_share=sum(weight for word, weight in task_words.weights.items()
                                            if memory.id in hits.get(word, ()) or memory.id in searched.get(word, ())) / task_words.total
                            if task_words.total > 0 else 0.0)
        # How far the memory's words stand above chance in this project (`store.retrieval.chance`),
        # as 1 - 10^-surprise: 0 at chance, 0.9 at one memory in ten expected by chance.
        item.signals["over_chance"] = unit(1.0 - 10.0 ** -chance.surprise(scores.get(memory.id, 0.0)))
        reason = ineligible(memory, context, settings) or judged.reason(memory, item.signals)
        ranked.append(item.with_reason(reason) if reason else item)
    ranked.sort(key=lambda r: (-r.score, r.memory.id))
    return Ranking(ranked, tuple(dict.fromkeys(wanted)), settings.semantic, dict(settings.weights),
                   task_words.total, idf(size, 1), typical if settings.semantic else 0.0,
                   compared if settings.semantic else 0, chance=chance,
                   cosine_spread=spread if settings.semantic else 0.0)
