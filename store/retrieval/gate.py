"""The relevance gate: which ranked memories are about the task enough to be injected.

Calibrated per task, not one number fitted to a few queries:

1. Is anything here about the task? Two kinds of evidence, each against its mark:
   - meaning: the best cosine of the task with a candidate, against
     `injection.gate.semantic_evidence` (on the embedding model's own scale, the same in every
     project);
   - words: the most word evidence a candidate holds, counted in rare words (each of the task's
     specific words it uses, at its rarity relative to a word found in one memory of the store,
     so the scale is the same in a store of 50 or 50,000), against `injection.gate.word_evidence`.
   Generic task verbs ("fix", "add", "plan", in any form) and the project's own name are no
   evidence. With the semantic signal the task's evidence is the lesser of the two: a static
   model finds some memory of every project near any task, and one shared word is found by
   chance, so both must say so; unless the best cosine stands `injection.gate.semantic_alone`
   above the project's typical cosine with this task (its median), as no unrelated task's best
   does: that is evidence on its own (a paraphrase sharing no word). That margin holds for a
   project of up to `injection.gate.semantic_alone_size` memories; in a larger one it grows
   with the size (`alone_margin`), as the best of more chance cosines stands further above
   their median. On words alone it is the words'. A file ref or a context tag
   that names a memory is evidence on its own.
2. How much goes in follows the evidence. At the mark or above (on topic) the candidates that
   anything says are about the task (relevance above 0; with `injection.gate.floor` above 0,
   also their own evidence at that share of the mark) go in, best score first, at most
   `injection.gate.most_memories` of them, within the share of the budget the task may spend
   (`spend_share`): below the first few a memory is rarely one the task needs, and the cap
   bounds what one wrong on-topic call costs. Below
   `injection.gate.weak` of the mark, nothing does. In between (weak evidence), only the best
   candidate, and only if it takes at most `injection.gate.weak_budget` of the token budget:
   where it is unsure, the gate spends little.
   With `injection.gate.fill` (on by default) and a sure gate (`fill_strength`), an on-topic
   task's candidates that nothing says are about it (relevance 0) go in too, as filler: packed
   after every memory with evidence, in the room those leave, so they never displace one. An
   on-topic block then uses the budget as plain full-text search's does, so a relevant memory
   nothing pointed at still has its chance; a weak or unrelated task gets no filler.

Critical memories (seed 003) pass whatever the task. With no task, paths or tags the gate is
lifted (`injection.untargeted`). Every candidate carries the gate's verdict with its numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from store.retrieval.packing import CharTokenizer, render_item
from store.retrieval.ranked import Ranking, RankedMemory, gate_applies
# The gate reads its config section as it is typed (`store.engine.settings`).
from store.engine.settings import GateSettings
from store.engine.records import InjectionContext

if TYPE_CHECKING:
    from store.engine.core import Store
    from store.retrieval.chance import WordChance


# The verdict of a candidate let in only to fill the room left on an on-topic task.
FILLER = "in: filler"
# The verdict of a candidate let in on its own evidence (what the block's cap counts).
ADMITTED = "in: own evidence"


def alone_margin(settings: GateSettings, compared: int) -> float:
    """How far the best cosine must stand above the project's median to be evidence on its own,
    in a project of `compared` memories with vectors: `semantic_alone` up to
    `semantic_alone_size` memories, then grown by sqrt(ln N / ln size). Chance alone puts the
    best of N cosines further above their median as N grows, about as sqrt(ln N) for scores
    spread like a normal distribution: among 281 memories on several topics every noise probe
    of the eval stood 0.17-0.24 above the median (0.06-0.15 in its own project of 20-70)."""
    size = settings.semantic_alone_size
    if size < 2 or compared <= size:
        return settings.semantic_alone
    return settings.semantic_alone * math.sqrt(math.log(compared) / math.log(size))


def spend_share(settings: GateSettings, strength: float) -> float:
    """The share of the budget a task may spend, by how sure the gate is that it is about the
    project: all of it from `full_strength` times the mark up, in proportion below that, never
    below `least_share` on topic. One wrong call on a task barely over the mark then costs a few
    hundred tokens, not the whole budget (noise lowers coding agents' success and raises cost)."""
    if strength < 1.0 or settings.full_strength <= 1.0:
        return 1.0  # below the mark the gate's own rule holds (`weak_budget`)
    return min(1.0, max(settings.least_share, (strength - 1.0) / (settings.full_strength - 1.0)))


@dataclass(frozen=True)
class Evidence:
    """How surely the task is about something here: 1 is the mark, with the numbers behind it."""

    strength: float
    cosine: float  # the best cosine of the task with a candidate
    typical: float  # the project's median cosine with the task
    margin: float  # how far over `typical` the best cosine is evidence alone (`alone_margin`)
    words: float  # the most word evidence of a candidate, in rare words
    share: float  # the largest share of the task's words a candidate uses
    named: bool  # a file ref or context tag names a candidate
    semantic: bool
    surprise: float = 0.0  # how far the best candidate's words stand above chance here (`store.retrieval.chance`)

    def to_json(self, settings: GateSettings, chance: "WordChance | None" = None) -> dict[str, Any]:
        """The task-level verdict: the gate's confidence (1 at the mark), what chance gives here,
        and the margins, for `prime --format json`, `--explain` and the preview."""
        return {
            "confidence": round(self.strength, 3),
            "on_topic": self.strength >= 1.0,
            "sure": self.strength >= settings.fill_strength,
            "word_surprise": round(self.surprise, 3),
            "word_surprise_mark": settings.word_surprise,
            "expected_by_chance": round(10.0 ** -self.surprise, 4),
            "cosine": round(self.cosine, 4),
            "chance_cosine": round(self.typical, 4),
            "cosine_margin": round(self.cosine - self.typical, 4),
            "cosine_margin_alone": round(self.margin, 4),
            "named": self.named,
            # What the task may spend: its share on topic; weak, the best candidate within
            # `weak_budget`; below that, nothing.
            "spend": round(spend_share(settings, self.strength) if self.strength >= 1.0 else
                           settings.weak_budget if self.strength >= settings.weak else 0.0, 3),
            # On topic, at most this many memories with evidence (`most_memories`; 0: no cap).
            "most_memories": settings.most_memories,
            "verdict": self.describe(settings),
        }

    def describe(self, settings: GateSettings) -> str:
        """The numbers against their marks: "evidence 0.67: cosine 0.28/0.12, words 0.8/1.25 rare
        or share 0.10/0.50, +0.15 over the typical cosine (alone 0.17)"."""
        parts = [f"cosine {self.cosine:.2f}/{settings.semantic_evidence:.2f}"] if self.semantic else []
        parts.append(f"words {self.surprise:.1f}/{settings.word_surprise:.1f} over chance or share "
                     f"{self.share:.2f}/{settings.word_share:.2f}")
        if self.semantic:
            parts.append(f"{self.cosine - self.typical:+.2f} over the typical cosine (alone {self.margin:.2f})")
        if self.named:
            parts.append("a path or tag names one")
        return f"evidence {self.strength:.2f}: " + ", ".join(parts)


def surprise(item: RankedMemory) -> float:
    """The memory's words' surprise over chance (`store.retrieval.chance`), from its `over_chance` signal."""
    rest = 1.0 - item.signals.get("over_chance", 0.0)
    return max(0.0, -math.log10(rest)) if rest > 1e-6 else 6.0  # never "-0.0"


def _mark(value: float, mark: float) -> float:
    return value / mark if mark > 0 else 1.0


def task_evidence(settings: GateSettings, context: "InjectionContext", ranking: Ranking,
                  eligible: list[RankedMemory]) -> Evidence:
    cosine = max((item.signals.get("cosine", 0.0) for item in eligible), default=0.0)
    words = max((ranking.word_evidence(item) for item in eligible), default=0.0)
    share = max((item.signals.get("words", 0.0) for item in eligible), default=0.0)
    # A memory that uses most of the task's words is word evidence however common they are
    # here (a project all about billing, and a task about billing).
    best_surprise = max((surprise(item) for item in eligible), default=0.0)
    word_mark = max(_mark(best_surprise, settings.word_surprise), _mark(share, settings.word_share))
    named = any(item.signals.get("path", 0.0) >= 1.0 or item.signals.get("tag", 0.0) >= 1.0 for item in eligible)
    margin = alone_margin(settings, ranking.compared)
    if ranking.semantic:
        strength = min(_mark(cosine, settings.semantic_evidence), word_mark)
        if cosine - ranking.typical_cosine >= margin:
            strength = max(strength, 1.0)
    else:
        strength = word_mark
    if not ranking.specific_words:
        strength = 0.0  # a task of generic verbs only has nothing to be about
    if named:
        strength = max(strength, 1.0)
    return Evidence(strength, cosine, ranking.typical_cosine, margin, words, share, named, ranking.semantic,
                    best_surprise)


def memory_evidence(settings: GateSettings, ranking: Ranking, item: RankedMemory, margin: float) -> float:
    """One memory's own evidence that it is about the task, 1 at the task's mark: its words'
    surprise against `word_surprise` (or its share of the task's words against `word_share`), its cosine's rise over the project's typical cosine against
    the semantic margin, or a path or tag naming it (1)."""
    words = max(_mark(surprise(item), settings.word_surprise), _mark(item.signals.get("words", 0.0), settings.word_share))
    # Meaning is held to its own floor (`meaning_floor`): above `floor` it is put on the words'
    # scale; with no floor, a rise short of `meaning_floor` of the margin is no evidence at all
    # (it used to count as 0 and pass a floor of 0: relevance from a cosine at chance got a memory in).
    rise = (_mark(item.signals.get("cosine", 0.0) - ranking.typical_cosine, margin)
            if ranking.semantic and item.signals.get("cosine", 0.0) > 0 else 0.0)
    if settings.floor > 0:
        meaning = rise * _mark(settings.floor, settings.meaning_floor)
    else:
        meaning = rise if rise >= settings.meaning_floor else 0.0
    named = 1.0 if item.signals.get("path", 0.0) >= 1.0 or item.signals.get("tag", 0.0) >= 1.0 else 0.0
    return max(words, meaning, named)


def apply_gate(store: "Store", context: "InjectionContext", ranking: Ranking, *,
               targeted: bool | None = None) -> list[RankedMemory]:
    """The ranking's candidates, each with the gate's verdict; those it keeps out get it as their
    reason (an ineligible one keeps its own reason). `targeted`: `gate_applies`, when the caller knows it."""
    if not (gate_applies(store, context) if targeted is None else targeted):
        return [item if item.reason else _verdict(item, "in: no task, paths or tags (the gate is lifted)")
                for item in ranking.items]
    budget = context.budget if context.budget is not None else store.config.injection.budget
    judge = _judge(store.config.injection.gate, context, ranking, budget if isinstance(budget, int) else 0)
    gated = []
    for item in ranking.items:
        if item.signals.get("critical"):
            gated.append(_verdict(item, "in: critical (always surfaced)"))
            continue
        kept, verdict, own = judge(item)
        item = replace(item, evidence=own, filler=kept and verdict.startswith(FILLER))
        gated.append(_verdict(item, verdict) if kept or item.reason else _verdict(item, verdict).with_reason(verdict))
    return gated


def capped(items: list[RankedMemory], most: int, *, layers: int = 1) -> list[RankedMemory]:
    """The block's cap (`most_memories`): of the candidates let in on their own evidence, best
    score first (`items` come so), the first `most` stay in; the others are out, saying why.
    Critical ones and filler are not counted. Applied once to the candidates prime packs, after
    the anchor check and supersession have had their say and across every layer (each gated in
    its own store: `store.layers.prime`), so the block holds the `most` best that may go in."""
    if most <= 0:
        return items
    where = " of every layer" if layers > 1 else ""

    def out(item: RankedMemory) -> RankedMemory:
        verdict = (f"below the cap: {item.gate.removeprefix('in: ')}, but the block already holds the "
                   f"{most} best memories with evidence{where}")
        return _verdict(item, verdict).with_reason(verdict)

    return _first(items, most, lambda item: item.gate.startswith(ADMITTED), out)


def critical_capped(items: list[RankedMemory], most: int) -> list[RankedMemory]:
    """The critical limit (`injection.critical.limit`): of the critical candidates, best score
    first, the first `most` stay in; the others are out, saying why. The critical search is
    capped too, but the most confident memories reach the ranking by another search as well."""
    why = f"over the limit: the block already holds {most} always-on memories"
    return _first(items, most, lambda item: bool(item.signals.get("critical")), lambda item: item.with_reason(why))


def _first(items: list[RankedMemory], most: int, counted: Callable[[RankedMemory], bool],
           out: Callable[[RankedMemory], RankedMemory]) -> list[RankedMemory]:
    """`items` (best first) with those `counted` past the first `most` of them, still in, put `out`."""
    admitted = 0
    result = []
    for item in items:
        if not item.reason and counted(item):
            admitted += 1
            if admitted > most:
                item = out(item)
        result.append(item)
    return result


def _judge(settings: GateSettings, context: "InjectionContext", ranking: Ranking,
           budget: int) -> Callable[[RankedMemory], tuple[bool, str, float]]:
    """The verdict for one candidate, (kept, why, its own evidence), by the evidence the task has here."""
    eligible = [item for item in ranking.items if not item.reason]
    evidence = task_evidence(settings, context, ranking, eligible)
    why = evidence.describe(settings)
    if evidence.strength >= 1.0:
        sure = evidence.strength >= settings.fill_strength

        def on_topic(item: RankedMemory) -> tuple[bool, str, float]:
            # A memory is in because something says it is about the task (its own evidence, above
            # 0 and at `floor` of the mark), not because room is left; filler only when the gate
            # is sure. How many of these the block holds is the cap's (`capped`, applied by prime).
            own = memory_evidence(settings, ranking, item, evidence.margin)
            if item.relevance > 0 and own > 0 and own >= settings.floor:
                return True, f"{ADMITTED} {own:.2f}, relevance {item.relevance:.2f}", own
            if settings.fill and sure:
                return True, f"{FILLER}: own evidence {own:.2f}, packed after the memories with evidence", own
            if item.relevance > 0 and own <= 0:
                return False, f"below the gate: own evidence 0 (relevance {item.relevance:.2f}, from no word, meaning or path of its own)", own
            if item.relevance > 0:
                return False, f"below the floor: own evidence {own:.2f} < {settings.floor:.2f}", own
            return False, "below the gate: relevance 0, nothing says it is about the task", own

        return on_topic
    if not ranking.specific_words and not evidence.named:
        nothing = "below the gate: the task has no specific word (generic verbs and the project's name are no evidence)"
        return lambda item: (False, nothing, 0.0)
    if not eligible or evidence.strength < settings.weak:
        nothing = f"below the gate: nothing here is about the task ({why})"
        return lambda item: (False, nothing, 0.0)
    best = max(eligible, key=lambda item: (item.relevance, item.score))
    # Where it is unsure, the gate spends little: the best candidate, if it is short.
    allowance = settings.weak_budget * budget
    cost = CharTokenizer().count(render_item(best.memory, "type"))

    def only_the_best(item: RankedMemory) -> tuple[bool, str, float]:
        if item is best and item.relevance > 0 and cost <= allowance:
            return True, f"in: relevance {item.relevance:.2f}, the best candidate; weak {why}", 0.0
        if item is best and item.relevance > 0:
            return False, (f"below the gate: weak {why}; the best candidate, but ~{cost} tokens, "
                           f"more than {settings.weak_budget:.0%} of the budget"), 0.0
        return False, f"below the gate: weak {why}; only the best candidate goes in", 0.0

    return only_the_best


def _verdict(item: RankedMemory, verdict: str) -> RankedMemory:
    return replace(item, gate=verdict)
