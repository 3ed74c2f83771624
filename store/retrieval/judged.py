"""What agents' `not_relevant` / `helpful` feedback teaches prime (`store.engine.feedback` keeps it).

A memory judged not relevant keeps the task (`meta["not_relevant"]`, the newest 20), with the
relevance and cosine it had for it; a memory judged helpful keeps the same (`meta["helpful"]`).
Three lessons are drawn (strengths in `config.injection.feedback`), and none moves a confidence:

- the same task again: a prime for a task nearly the same as one the memory was judged not
  relevant for (the two tasks' cosine, or on words alone the share of the new task's specific
  words the judged one uses, at least `SIMILAR`) leaves the memory out;
- tasks like the new one (with the semantic signal): the memory's not_relevant judgments, each
  weighted by how much nearer its task is to the new one than chance (the new task's median
  cosine with every task the candidates were judged for), less its helpful ones, at least
  `similar_evidence`, leave it out; a judgment made when the memory had a lower relevance or
  cosine than it has now counts for nothing;
- the floor: the relevance below which the project's memories (a task's candidates) were
  judged not relevant clearly more often than helpful (`floor_gain` more times, a helpful one
  counting `floor_helpful`) is the bar for its memories on any task (critical ones excepted);
  off with the semantic signal, `words_floor_gain` on words alone.

What an agent did with a listed memory (`store.engine.openings`) is kept in the same shape:
`meta["opened"]` counts as a helpful judgment at `opened_weight`, `meta["unopened"]` as a
not_relevant one at `unopened_weight` once there are `unopened_after` of them; in
`similar_evidence` only (never the same-task rule), both off by default.

Everything is read from the candidates prime has fetched anyway (in a small project, all of
them), so it costs no query and is never stale. The strengths were chosen by
leave-one-project-out over both labelled sets at 2,000 tokens (`python -m
store.evaluation.feedback_folds`, docs/mcp.md): held-out tasks share little with the judged ones,
so little carries over.

A memory of another layer (the team store, the team file) is judged by this person too, but
those judgments are kept in their own store, not on the memory (`store.layers.judgments`):
while that layer is ranked, `KEPT` holds what reads them for its candidates, and they count as
if they were in the memory's meta.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Sequence

from store.engine.records import Memory

if TYPE_CHECKING:
    from store.retrieval.words import TaskWords

# A new task this similar to a judged one is the same task.
SIMILAR = {"semantic": 0.8, "words": 0.8}


# The project's learned floor: the relevance below which its memories were judged not relevant
# at least `FLOOR_GAIN` more times than helpful, a helpful one counting `FLOOR_HELPFUL` times
# (the defaults of `injection.feedback.floor_gain` and `floor_helpful`).
FLOOR_HELPFUL = 30.0
FLOOR_GAIN = 0.0  # no floor: see `injection.feedback.floor_gain`
WORDS_FLOOR_GAIN = 64.0  # without the semantic signal (`words_floor_gain`)

# Tasks like the new one: a memory's not_relevant judgments, each weighted by how much more similar
# its task is to the new one than chance, less its helpful ones (each counting `SIMILAR_HELPFUL`),
# at least `SIMILAR_EVIDENCE` leave it out (the defaults of `injection.feedback.similar_evidence`,
# 0 is off, and `similar_helpful`); with the semantic signal only.
SIMILAR_EVIDENCE = 0.1
SIMILAR_HELPFUL = 1.0

# Opening is a use (`store.engine.openings`): an opening of a listed memory counts `OPENED_WEIGHT`
# of a helpful judgment (here and in the floor); a line left unopened `UNOPENED_WEIGHT` of a
# not_relevant one, once the memory has `UNOPENED_AFTER` of them (the defaults of
# `injection.feedback.opened_weight`, `unopened_weight`, 0 is off, and `unopened_after`): both
# off, as no weight tried moved a held-out figure but to lose one (docs/injection.md).
OPENED_WEIGHT = 0.0
UNOPENED_WEIGHT = 0.0
UNOPENED_AFTER = 2


# What the lessons read of a memory's meta (or of the judgments kept apart, `KEPT`).
JUDGED_KEYS = ("not_relevant", "helpful", "opened", "unopened")

# How the reason of a memory left out by its judgments begins (`store.layers.prime` reads it).
JUDGED_OUT = "judged not relevant"


# While another layer's candidates are ranked: what reads this person's own judgments of them
# (memories -> {id: {"not_relevant": [...], "helpful": [...]}}, each list in the shape of the meta's),
# set by `store.layers.prime`. None: the judgments are the memories' meta alone.
KEPT: ContextVar[Callable[[Sequence[Memory]], dict[str, dict]] | None] = ContextVar("kept_judgments", default=None)


@dataclass(frozen=True)
class Judgment:
    task: str
    relevance: float | None
    cosine: float | None


def judgments(memory: Memory, key: str = "not_relevant") -> list[Judgment]:
    return _judgments(memory.meta, key)


def _judgments(meta: dict, key: str) -> list[Judgment]:
    found = []
    for j in meta.get(key, ()) if isinstance(meta, dict) else ():
        if isinstance(j, dict) and isinstance(j.get("task"), str) and j["task"].strip():
            found.append(Judgment(j["task"], _number(j.get("relevance")), _number(j.get("cosine"))))
    return found


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class Judged:
    """The new task, against the judgments of the candidates."""

    def __init__(self, task: str, task_words: "TaskWords", semantic: bool, floor: float = 0.0,
                 candidates: Sequence[Memory] = (), lesson: Any = None) -> None:
        self.floor = floor
        self.task = task
        self.task_words = task_words
        self.semantic = semantic
        self.candidates = candidates
        self.similar_evidence = float(getattr(lesson, "similar_evidence", SIMILAR_EVIDENCE))
        self.similar_helpful = float(getattr(lesson, "similar_helpful", SIMILAR_HELPFUL))
        self.opened_weight = float(getattr(lesson, "opened_weight", OPENED_WEIGHT))
        self.unopened_weight = float(getattr(lesson, "unopened_weight", UNOPENED_WEIGHT))
        self.unopened_after = int(getattr(lesson, "unopened_after", UNOPENED_AFTER))
        self._above_chance: dict[str, float] | None = None
        self.chance = 0.0
        self.kept: dict[str, Memory] = {}  # candidates with this person's judgments kept apart (`KEPT`)

    @classmethod
    def from_candidates(cls, task: str, task_words: "TaskWords", semantic: bool, candidates: Sequence[Memory],
                        lesson: Any = None) -> "Judged":
        """What prime's ranking builds (the one hook in `store.retrieval.ranking`): the floor and
        the judged tasks from the candidates it fetched (with this person's judgments kept
        apart, `KEPT`), the strengths from `lesson` (`config.injection.feedback`)."""
        reader = KEPT.get()
        kept = reader(candidates) if reader is not None and candidates else {}
        if kept:
            candidates = [with_kept(m, kept[m.id]) if m.id in kept else m for m in candidates]
        judged = cls(task, task_words, semantic, floor(candidates, lesson, semantic), candidates, lesson)
        judged.kept = {m.id: m for m in candidates if m.id in kept}
        return judged

    def similarity(self, tasks: Sequence[str]) -> list[float]:
        if self.semantic:
            from store.index import embedding

            if embedding.embedder() is not None:
                new = _task_vector(self.task)
                return [float(new @ _task_vector(task)) for task in tasks]
        return [self.task_words.share(_text_only(task)) for task in tasks]

    def above_chance(self) -> dict[str, float]:
        """Each task the candidates were judged for -> how much more similar the new task is to it
        than chance: the new task's median similarity with all of them (most judged tasks are
        about something else), so only a task nearer than the project's usual is any evidence."""
        if self._above_chance is None:
            tasks = list(dict.fromkeys(j.task for m in self.candidates if m.status == "active" and m.meta
                                       for key in JUDGED_KEYS for j in _judgments(m.meta, key)))
            scores = self.similarity(tasks) if tasks and self.task.strip() else []
            ordered = sorted(scores)
            self.chance = ordered[len(ordered) // 2] if ordered else 0.0
            self._above_chance = {t: max(0.0, s - self.chance) for t, s in zip(tasks, scores)}
        return self._above_chance

    def lesson_against(self, memory: Memory, signals: dict[str, float] | None = None) -> float:
        """The evidence that `memory` (scored with `signals` for the new task) is not for the new
        task: its not_relevant judgments, each at how much more similar than chance its task is
        to the new one, less its helpful ones (each counting `similar_helpful`). A not_relevant
        judgment made when the memory had a lower relevance or cosine than it has now is none:
        the new task says more for it than the judged one did. An unopened line of an index
        counts `unopened_weight` of a not_relevant judgment (once there are `unopened_after`),
        an opening `opened_weight` of a helpful one."""
        near = self.above_chance()
        memory = self.kept.get(memory.id, memory)
        now = signals or {}

        def nearness(key: str, checked: bool = False) -> float:
            return sum(near.get(j.task, 0.0) for j in judgments(memory, key)
                       if not checked or (not _more_now(now.get("relevance"), j.relevance)
                                          and not _more_now(now.get("cosine"), j.cosine)))

        against = nearness("not_relevant", checked=True)
        if self.unopened_weight > 0 and len(judgments(memory, "unopened")) >= max(1, self.unopened_after):
            against += self.unopened_weight * nearness("unopened", checked=True)
        wanted = nearness("helpful") + self.opened_weight * nearness("opened")
        return against - self.similar_helpful * wanted

    def reason(self, memory: Memory, signals: dict[str, float]) -> str:
        """Why `memory` (scored with `signals` for the new task) is out, or '' if it may stay."""
        relevance = signals.get("relevance", 0.0)
        if relevance < self.floor and not signals.get("critical"):
            return (f"relevance {relevance:.2f} below {self.floor:.2f}, where agents judged this "
                    "project's memories not relevant")
        memory = self.kept.get(memory.id, memory)
        found = judgments(memory)
        unopened = self.unopened_weight > 0 and bool(judgments(memory, "unopened"))
        if not (found or unopened) or not self.task.strip():
            return ""
        if found:
            scores = self.similarity([j.task for j in found])
            best = max(range(len(found)), key=scores.__getitem__)
            if scores[best] >= SIMILAR["semantic" if self.semantic else "words"]:
                return f"{JUDGED_OUT} to a similar task ({scores[best]:.2f}): {_short(found[best].task)}"
        if self.similar_evidence > 0 and self.semantic and not signals.get("critical"):
            evidence = self.lesson_against(memory, signals)
            if evidence >= self.similar_evidence:
                lines = ", its index lines left unopened counted" if unopened else ""
                return (f"{JUDGED_OUT} to tasks nearer this one than chance ({evidence:.2f} above "
                        f"{self.chance:.2f}{lines})")
        return ""


def with_kept(memory: Memory, kept: dict) -> Memory:
    """`memory` with judgments kept apart (`KEPT`) added after those in its meta, as if there."""
    meta = dict(memory.meta) if isinstance(memory.meta, dict) else {}
    for key, found in kept.items():
        before = meta.get(key)
        meta[key] = [*[j for j in before if isinstance(j, dict)], *found] if isinstance(before, list) else list(found)
    return replace(memory, meta=meta)


def _more_now(now: float | None, then: float | None) -> bool:
    return now is not None and then is not None and now > then + 1e-4  # judged values are kept to 4 places


@lru_cache(maxsize=4096)
def _task_vector(task: str):
    from store.index import embedding

    return embedding.embedder().embed([task])[0]


def _short(task: str) -> str:
    task = " ".join(task.split())
    return repr(task if len(task) <= 60 else task[:59] + "…")


def _text_only(text: str) -> Memory:
    """A task's text in the shape `TaskWords.share` reads."""
    return Memory(id="", project="", type="", title="", content=text, confidence=0.0)


# -- the floor ----------------------------------------------------------------------------------

def floor(memories: Sequence[Memory], lesson: Any = None, semantic: bool = True) -> float:
    """The relevance below which these memories (a task's candidates) have been judged not
    relevant (by agents' feedback, with the relevance each had) clearly more often than
    helpful: 0 when the judgments say nothing. Read from the candidates prime has fetched
    anyway, so it costs no query. `lesson` is `config.injection.feedback` (its `floor_gain`,
    or without the semantic signal `words_floor_gain`, 0 for no floor, and `floor_helpful`);
    without it the defaults."""
    gain = float(getattr(lesson, "floor_gain", FLOOR_GAIN) if semantic
                 else getattr(lesson, "words_floor_gain", WORDS_FLOOR_GAIN))
    helpful_weight = float(getattr(lesson, "floor_helpful", FLOOR_HELPFUL))
    opened_weight = float(getattr(lesson, "opened_weight", OPENED_WEIGHT))
    if gain <= 0:
        return 0.0
    # (relevance, what the judgment weighs: 1 against, a helpful one or an opening for)
    pairs: list[tuple[float, float]] = []
    for memory in memories:
        if memory.status != "active" or not memory.meta:
            continue
        pairs += [(j.relevance, 1.0) for j in _judgments(memory.meta, "not_relevant") if j.relevance is not None]
        pairs += [(j.relevance, -helpful_weight) for j in _judgments(memory.meta, "helpful") if j.relevance is not None]
        pairs += [(j.relevance, -helpful_weight * opened_weight) for j in _judgments(memory.meta, "opened")
                  if j.relevance is not None]
    found, best = 0.0, gain - 1e-9
    for mark in sorted({r for r, weight in pairs if weight > 0}):
        margin = sum(weight for r, weight in pairs if r <= mark)
        if margin > best:
            found, best = mark + 1e-4, margin  # the judged level itself (stored to 4 places) is below
    return found
