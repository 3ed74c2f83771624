"""The relevance gate: which ranked memories are about the task enough to be injected.

Calibrated per task, not one number fitted to a few queries:

1. Evidence that anything here is about the task. A memory is evidence when its cosine with the
   task reaches `injection.gate.semantic_evidence` (a similarity on the embedding model's own
   scale, the same in every project), or, on words alone (without the semantic extra), when it
   uses `injection.gate.word_evidence` of the task's specific words (weighted by rarity: a share,
   the same for a short or a long task); or when a file ref or tag of the context names it.
   Generic task verbs ("fix", "add") are never evidence. The best evidence of the task decides:
   none (below `injection.gate.weak` of the mark): nothing is injected; weak (that much, not the
   whole mark): only the best candidate; enough: step 2.
2. Relative to the best candidate: a memory goes in when its relevance is at least
   `injection.gate.ratio` of the best one's, so a relevant memory ranked below a strong one
   still passes, and the tail of barely related ones does not.

Critical memories (seed 003) pass whatever the task. With no task, paths or tags the gate is
lifted (`injection.untargeted`). Every candidate carries the gate's verdict with its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from store.ranking import Ranking, RankedMemory, gate_applies

if TYPE_CHECKING:
    from store.core import Store
    from store.injection import InjectionContext


@dataclass(frozen=True)
class GateSettings:
    ratio: float
    semantic_evidence: float
    word_evidence: float
    weak: float

    @classmethod
    def from_store(cls, store: "Store") -> "GateSettings":
        cfg = store.config
        return cls(float(cfg.get("injection.gate.ratio")), float(cfg.get("injection.gate.semantic_evidence")),
                   float(cfg.get("injection.gate.word_evidence")), float(cfg.get("injection.gate.weak")))


def evidence(item: RankedMemory, settings: GateSettings, semantic: bool) -> float:
    """How strongly one memory shows the task is about something here; 1 is enough."""
    signals = item.signals
    marks = [signals.get("path", 0.0), 1.0 if signals.get("tag", 0.0) >= 1.0 else 0.0]
    if semantic:
        # The cosine reads the words too: the word share adds no evidence beside it.
        marks.append(signals.get("cosine", 0.0) / settings.semantic_evidence if settings.semantic_evidence > 0 else 1.0)
    else:
        marks.append(signals.get("words", 0.0) / settings.word_evidence if settings.word_evidence > 0 else 1.0)
    return max(marks)


def _describe(item: RankedMemory, settings: GateSettings, semantic: bool) -> str:
    if semantic:
        return f"cosine {item.signals.get('cosine', 0.0):.2f}, evidence from {settings.semantic_evidence:.2f}"
    return f"word share {item.signals.get('words', 0.0):.2f}, evidence from {settings.word_evidence:.2f}"


def apply_gate(store: "Store", context: "InjectionContext", ranking: Ranking) -> list[RankedMemory]:
    """The ranking's candidates, each with the gate's verdict; those it keeps out get it as their
    reason (an ineligible one keeps its own reason)."""
    if not gate_applies(store, context):
        return [item if item.reason else _verdict(item, "in: no task, paths or tags (the gate is lifted)")
                for item in ranking.items]
    judge = _judge(GateSettings.from_store(store), context, ranking)
    gated = []
    for item in ranking.items:
        if item.signals.get("critical"):
            gated.append(_verdict(item, "in: critical (always surfaced)"))
            continue
        kept, verdict = judge(item)
        gated.append(_verdict(item, verdict) if kept or item.reason else _verdict(item, verdict).with_reason(verdict))
    return gated


def _judge(settings: GateSettings, context: "InjectionContext", ranking: Ranking):
    """The verdict for one candidate, (kept, why), by the evidence the task has here."""
    eligible = [item for item in ranking.items if not item.reason]
    strongest, strength = None, 0.0  # a task of generic verbs only has nothing to be about
    if eligible and (ranking.specific_words or context.paths or context.tags):
        strongest = max(eligible, key=lambda item: evidence(item, settings, ranking.semantic))
        strength = evidence(strongest, settings, ranking.semantic)
    best = max(eligible, key=lambda item: (item.relevance, item.score), default=None)

    if strength >= 1.0:
        top = best.relevance

        def relative(item: RankedMemory) -> tuple[bool, str]:
            if item.relevance > 0 and item.relevance >= settings.ratio * top:
                return True, f"in: relevance {item.relevance:.2f} >= {settings.ratio:.2f} x the best {top:.2f}"
            return False, f"below the gate: relevance {item.relevance:.2f} < {settings.ratio:.2f} x the best {top:.2f}"

        return relative
    if strength >= settings.weak:
        weak = f"weak evidence (best {_describe(strongest, settings, ranking.semantic)})"

        def only_the_best(item: RankedMemory) -> tuple[bool, str]:
            if item is best:
                return True, f"in: the best candidate; {weak}"
            return False, f"below the gate: {weak}, only the best candidate goes in"

        return only_the_best
    if strongest is None:
        nothing = "below the gate: the task has no specific word (generic verbs are no evidence)"
    else:
        nothing = f"below the gate: nothing here is about the task (best {_describe(strongest, settings, ranking.semantic)})"
    return lambda item: (False, nothing)


def _verdict(item: RankedMemory, verdict: str) -> RankedMemory:
    return replace(item, gate=verdict)
