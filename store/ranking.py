"""Relevance ranking: which memories matter for an injection context, and why.

Owns the candidate search (done in SQL, so a 100,000-memory store is not scored row by row in
Python), the signals, their weights from `injection.weights` in config, the relevance gate and
the eligibility rules. Each ranked memory carries its score, its per-signal breakdown (each
signal 0..1, before weighting) and, when it cannot be injected, the reason.

Signals:
- `text`: BM25 of the task's words (and the paths' names) over title, content and tags, from the
  FTS5 index (porter stemming), scaled by the corpus's log size so it means the same at 20 or
  100,000 memories.
- `path`: a file ref glob covers a path in play (seed 000), or the text names one.
- `tag`: a memory tag is one of the context's tags, or a word of the task.
- `hat`: same hat 1, related hat (seed 000's relations, configurable) `injection.hat_related`.
- `confidence`, `recency` (seed 000: last use within `injection.recency_days`), and `critical`:
  high-confidence constraints and architecture, always considered and always surfaced (seed 003).

A memory is injected only if its relevance (text, path and tag, weighted) reaches
`injection.min_relevance`, or it is critical: when nothing is about the task, nothing is injected.
A context with no task, paths or tags has nothing to be relevant to; under the default
`injection.untargeted: trusted` the gate is then lifted and the score (confidence, hat, recency)
alone orders the memories.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from store import dialect
from store.core import MEMORY_SELECT, Store, memory_from_row
from store.records import Memory

if TYPE_CHECKING:
    from store.injection import InjectionContext

SIGNALS = ("text", "path", "tag", "hat", "confidence", "recency", "critical")
RELEVANCE_SIGNALS = ("text", "path", "tag")

# Words too common to say what a task is about; FTS5 would match them everywhere.
STOP_WORDS = frozenset("""
a about above after again against all also an and any are as at be because been before being
below between both but by can could did do does doing done down during each else even ever every
few for from further get gets getting go had has have having he her here hers him his how i if in
into is it its itself just let like make makes made many may me might more most much must my need
needs new no nor not now of off on once one only or other our out over own per same see she should
so some still such than that the their them then there these they this those through to too under
until up upon us use used uses using very via want was we were what when where whether which while
who why will with within without would yet you your instead already again always never
""".split())

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class RankedMemory:
    """One candidate memory: its score, the signals behind it, and why it is out (if it is)."""

    memory: Memory
    score: float
    signals: dict[str, float] = field(default_factory=dict)
    reason: str = ""  # empty while it may be injected; else why not

    @property
    def relevance(self) -> float:
        return self.signals.get("relevance", 0.0)

    def with_reason(self, reason: str) -> "RankedMemory":
        return RankedMemory(self.memory, self.score, self.signals, reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.memory.id, "type": self.memory.type, "title": self.memory.title,
            "status": self.memory.status, "confidence": self.memory.confidence,
            "score": round(self.score, 4),
            "signals": {k: round(v, 4) for k, v in self.signals.items()},
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Settings:
    """The `injection` section of config, read once per ranking."""

    weights: dict[str, float]
    min_relevance: float
    confidence_floor: float
    hat_related: float
    recency_days: float
    text_saturation: float
    critical_types: tuple[str, ...]
    critical_confidence: float
    critical_limit: int
    text_candidates: int
    confident_candidates: int
    common_word: int
    path_candidates: int

    @classmethod
    def from_store(cls, store: Store) -> "Settings":
        cfg = store.config
        return cls(
            weights={name: float(cfg.get(f"injection.weights.{name}", 0.0)) for name in SIGNALS},
            min_relevance=float(cfg.get("injection.min_relevance")),
            confidence_floor=float(cfg.get("injection.confidence_floor")),
            hat_related=float(cfg.get("injection.hat_related")),
            recency_days=float(cfg.get("injection.recency_days")),
            text_saturation=float(cfg.get("injection.text_saturation")),
            critical_types=tuple(cfg.get("injection.critical.types")),
            critical_confidence=float(cfg.get("injection.critical.min_confidence")),
            critical_limit=int(cfg.get("injection.critical.limit")),
            text_candidates=int(cfg.get("injection.candidates.text")),
            confident_candidates=int(cfg.get("injection.candidates.confident")),
            common_word=int(cfg.get("injection.candidates.common_word")),
            path_candidates=int(cfg.get("injection.candidates.path")),
        )


def keywords(text: str) -> list[str]:
    """The words of a task worth searching for: no stop words, no single letters, in order."""
    words = (w.lower() for w in _WORD.findall(text))
    return list(dict.fromkeys(w for w in words if len(w) > 1 and w not in STOP_WORDS and not w.isdigit()))


def normalise_path(path: str) -> str:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


def path_words(paths: Iterable[str]) -> list[str]:
    """The file names in play, as a memory's text would name them. Folder names are left out:
    every memory about a project mentions its main folders."""
    words: list[str] = []
    for path in paths:
        name = normalise_path(path).rsplit("/", 1)[-1]
        words.extend(keywords(name.rsplit(".", 1)[0] if "." in name[1:] else name))
    return list(dict.fromkeys(words))


def or_query(words: Sequence[str]) -> str | None:
    return " OR ".join(dialect.quote_fts_term(w) for w in words) or None


# -- the candidate search ---------------------------------------------------------------------

def _text_hits(store: Store, project_id: int, query: str | None, limit: int,
               only: Sequence[str] | None = None) -> dict[str, float]:
    """Memory id -> BM25 (positive, higher is better) for the best `limit` full-text matches
    (among `only`, when given)."""
    if not query or (only is not None and not only):
        return {}
    fields = store.config.section("injection.field_weights")
    rank = dialect.fts_rank_sql(fields["title"], fields["content"], fields["tags"])
    sql = dialect.FTS_MATCH_SQL.format(rank=rank) + " AND memory.project_id = ?"
    args: list[Any] = [query, project_id]
    if only is not None:
        sql += f" AND memory.id IN ({','.join('?' * len(only))})"
        args.extend(only)
    rows = store.db.execute_sql(sql + " ORDER BY rank LIMIT ?", (*args, limit))
    return {row[0]: -row[1] for row in rows}


def _path_refs(store: Store, project_id: int, paths: Sequence[str], limit: int) -> set[str]:
    """The most confident active memories (at most `limit`) with a file ref glob covering a path
    in play, or inside a folder in play. Walking the confidence index and stopping at `limit`
    keeps this quick in a store where thousands of memories name files."""
    if not paths:
        return set()
    tests = []
    args: list[Any] = [project_id]
    for path in paths:
        # ref matches the path; the path is inside the ref's folder; the ref is inside the path.
        tests.append("(? GLOB ref.value OR ? GLOB rtrim(ref.value, '/') || '/*' OR ref.value GLOB ? || '/*')")
        args.extend((path, path, path))
    sql = ("SELECT memory.id FROM memory WHERE memory.project_id = ? AND memory.status = 'active' "
           "AND memory.file_refs != '[]' AND EXISTS (SELECT 1 FROM json_each(memory.file_refs) AS ref WHERE "
           + " OR ".join(tests) + ") ORDER BY memory.confidence DESC LIMIT ?")
    return {row[0] for row in store.db.execute_sql(sql, (*args, limit))}


def _confident(store: Store, project_id: int, settings: Settings) -> list[str]:
    """Seed 000's pool: the most confident active memories, and seed 003's critical ones."""
    rows = store.db.execute_sql(
        "SELECT id FROM memory WHERE project_id = ? AND status = 'active' "
        "ORDER BY confidence DESC LIMIT ?", (project_id, settings.confident_candidates)).fetchall()
    ids = [r[0] for r in rows]
    if settings.critical_types and settings.critical_limit > 0:
        marks = ",".join("?" * len(settings.critical_types))
        rows = store.db.execute_sql(
            f"SELECT id FROM memory WHERE project_id = ? AND status = 'active' AND confidence >= ? "
            f"AND type IN ({marks}) ORDER BY confidence DESC LIMIT ?",
            (project_id, settings.critical_confidence, *settings.critical_types, settings.critical_limit),
        ).fetchall()
        ids.extend(r[0] for r in rows)
    return ids


def _fetch(store: Store, ids: Sequence[str]) -> list[Memory]:
    memories = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start:start + 500])
        marks = ",".join("?" * len(chunk))
        memories.extend(memory_from_row(r) for r in
                        store.db.execute_sql(MEMORY_SELECT + f" WHERE memory.id IN ({marks})", chunk))
    return memories


def specific_words(store: Store, words: Sequence[str], cap: int) -> list[str]:
    """The words found in fewer than `cap` memories. A word in thousands of memories says little
    about any one of them, and scoring every memory it is in would cost the whole index."""
    kept = []
    for word in words:
        found = store.db.execute_sql(
            "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)",
            (dialect.quote_fts_term(word), cap)).fetchone()[0]
        if found < cap:
            kept.append(word)
    return kept


def corpus_size(store: Store) -> int:
    """Rows in the full-text index (every project): BM25's idf is relative to this."""
    return store.db.execute_sql("SELECT count(*) FROM memory").fetchone()[0]


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


def _stem(word: str) -> str:
    # A plural or third-person "s" first, so "fails" meets "fail" and "starts" meets "start".
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:5]


def coverage(memory: Memory, task_words: Sequence[str]) -> float:
    """The share of the task's words the memory uses (crudely stemmed). BM25's idf is near zero
    in a store of a handful of memories; coverage still sees a memory that says what the task says."""
    if not task_words:
        return 0.0
    stems = {_stem(w.lower()) for w in _WORD.findall(f"{memory.title} {memory.content} {' '.join(memory.tags)}")}
    return sum(1 for w in task_words if _stem(w) in stems) / len(task_words)


def _tag_signal(memory: Memory, context_tags: set[str], task_words: Sequence[str]) -> float:
    tags = {t.lower() for t in memory.tags}
    if tags & context_tags:
        return 1.0
    words = set(task_words)
    hits = sum(1 for t in tags if t in words or t.rstrip("s") in words)
    return min(1.0, 0.5 * hits)


def _recency(memory: Memory, now: float, days: float) -> float:
    if memory.last_used_at is None or days <= 0:
        return 0.0
    return max(0.0, 1.0 - (now - memory.last_used_at) / 86400.0 / days)


def relevance(signals: dict[str, float], weights: dict[str, float]) -> float:
    """How surely a memory is about the task, 0..1: any one strong sign is enough, and signs add
    up (a noisy-OR of the text, path and tag signals, each counted at its weight relative to
    the text's)."""
    unit = weights["text"] or 1.0
    doubt = 1.0
    for name in RELEVANCE_SIGNALS:
        doubt *= 1.0 - min(1.0, signals[name] * weights[name] / unit)
    return 1.0 - doubt


def is_critical(memory: Memory, settings: Settings) -> bool:
    return memory.type in settings.critical_types and memory.confidence >= settings.critical_confidence


def score_memory(memory: Memory, *, bm25: float, ref_match: bool, context: "InjectionContext",
                 settings: Settings, vocabulary, now: float, idf_scale: float,
                 context_tags: set[str], task_words: Sequence[str]) -> RankedMemory:
    signals = {
        # Saturating, never flat: better matches keep outranking good ones.
        "text": max(bm25 / (bm25 + idf_scale * settings.text_saturation) if bm25 > 0 else 0.0,
                    coverage(memory, task_words) if bm25 > 0 else 0.0),
        "path": 1.0 if ref_match else _mentions(memory, context.paths),
        "tag": _tag_signal(memory, context_tags, task_words),
        "hat": {"same": 1.0, "related": settings.hat_related}.get(
            vocabulary.hat_alignment(memory.hat, context.hat), 0.0),
        "confidence": memory.confidence,
        "recency": _recency(memory, now, settings.recency_days),
        "critical": 1.0 if is_critical(memory, settings) else 0.0,
    }
    w = settings.weights
    score = sum(w[s] * signals[s] for s in SIGNALS)
    signals["relevance"] = relevance(signals, w)
    return RankedMemory(memory, score, signals)


def ineligible(memory: Memory, context: "InjectionContext", settings: Settings) -> str:
    """Why this memory can never be injected in this context, or '' if it can."""
    if memory.status != "active":
        if memory.status == "inactive" and memory.meta.get("superseded_by"):
            return f"inactive (superseded by {memory.meta['superseded_by']})"
        return {"pending": "pending review", "inactive": "inactive", "deleted": "deleted (in the trash)"}.get(
            memory.status, memory.status)
    if context.session_id and memory.session_id == context.session_id:
        return "from this session"
    if memory.confidence < settings.confidence_floor:
        return f"confidence {memory.confidence:.2f} below the floor {settings.confidence_floor:.2f}"
    return ""


UNTARGETED_POLICIES = ("trusted", "critical")


def is_targeted(context: "InjectionContext") -> bool:
    """Whether the context says what the memories should be about."""
    return bool(keywords(context.task) or any(p.strip() for p in context.paths)
                or any(t.strip() for t in context.tags))


def gate_applies(store: Store, context: "InjectionContext") -> bool:
    policy = store.config.get("injection.untargeted")
    if policy not in UNTARGETED_POLICIES:
        from store.errors import ConfigError

        raise ConfigError(f"injection.untargeted must be one of {', '.join(UNTARGETED_POLICIES)}, not {policy!r}")
    return is_targeted(context) or policy == "critical"


def rank(store: Store, context: "InjectionContext", *, only: set[str] | None = None) -> list[RankedMemory]:
    """Every candidate for `context`, best first; those that may not be injected carry a reason.

    `only`, when given, makes exactly these ids the candidates (`prime --since`).
    """
    settings = Settings.from_store(store)
    project_id = store.project_id(context.project)
    paths = [normalise_path(p) for p in context.paths if p.strip()]
    task_words = keywords(context.task)
    query_words = list(dict.fromkeys([*task_words, *path_words(paths), *(t.lower() for t in context.tags)]))
    limited = None if only is None else sorted(only)
    query = or_query(specific_words(store, query_words, settings.common_word))
    bm25 = _text_hits(store, project_id, query, settings.text_candidates, limited)
    refs = _path_refs(store, project_id, paths, settings.path_candidates)
    if limited is None:
        ids = list(dict.fromkeys([*bm25, *refs, *_confident(store, project_id, settings)]))
    else:
        ids = limited  # a handful since a recent time: every one is a candidate
    idf_scale = math.log(corpus_size(store) + 1.0) or 1.0
    context_tags = {t.lower() for t in context.tags}
    now = store.now()
    gated = gate_applies(store, context)
    ranked = []
    for memory in _fetch(store, ids):
        item = score_memory(memory, bm25=bm25.get(memory.id, 0.0), ref_match=memory.id in refs,
                            context=context, settings=settings, vocabulary=store.vocabulary, now=now,
                            idf_scale=idf_scale, context_tags=context_tags, task_words=task_words)
        reason = ineligible(memory, context, settings)
        if gated and not reason and item.relevance < settings.min_relevance and not item.signals["critical"]:
            reason = f"below the relevance threshold ({item.relevance:.2f} < {settings.min_relevance:.2f})"
        ranked.append(item.with_reason(reason) if reason else item)
    ranked.sort(key=lambda r: (-r.score, r.memory.id))
    return ranked
