"""What ranking hands on: each candidate memory with its score, signals, the gate's verdict and
why it is out; the whole ranking of a context; and whether the relevance gate applies to it.
Ranking (`store.retrieval.ranking`) builds these, the gate (`store.retrieval.gate`) judges them,
injection packs them: each depends on this module, not on the other."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from store.engine.errors import ConfigError
from store.engine.records import InjectionContext, Memory
from store.retrieval.words import keywords

if TYPE_CHECKING:
    from store.engine.core import Store
    from store.retrieval.chance import WordChance


@dataclass(frozen=True)
class RankedMemory:
    """One candidate memory: its score, the signals behind it, the gate's verdict, and why it is
    out (if it is)."""

    memory: Memory
    score: float
    signals: dict[str, float] = field(default_factory=dict)
    reason: str = ""  # empty while it may be injected; else why not
    gate: str = ""  # the relevance gate's verdict, in or out, with its numbers
    filler: bool = False  # let in with relevance 0, to fill the room left (`injection.gate.fill`)
    evidence: float = 0.0  # its own evidence on an on-topic task (`gate.memory_evidence`); 0 without

    @property
    def relevance(self) -> float:
        return self.signals.get("relevance", 0.0)

    def with_reason(self, reason: str) -> "RankedMemory":
        return replace(self, reason=reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.memory.id, "layer": self.memory.layer, "type": self.memory.type, "title": self.memory.title,
            "status": self.memory.status, "confidence": self.memory.confidence,
            "score": round(self.score, 4),
            "signals": {k: round(v, 4) for k, v in self.signals.items()},
            "gate": self.gate,
            "filler": self.filler,
            "reason": self.reason,
        }


UNTARGETED_POLICIES = ("trusted", "critical")


def is_targeted(context: InjectionContext) -> bool:
    """Whether the context says what the memories should be about."""
    return bool(keywords(context.task) or any(p.strip() for p in context.paths)
                or any(t.strip() for t in context.tags))


def gate_applies(store: "Store", context: InjectionContext) -> bool:
    policy = store.config.injection.untargeted
    if policy not in UNTARGETED_POLICIES:
        raise ConfigError(f"injection.untargeted must be one of {', '.join(UNTARGETED_POLICIES)}, not {policy!r}")
    return is_targeted(context) or policy == "critical"


@dataclass(frozen=True)
class Ranking:
    """Every candidate of a context, best first, with what the gate needs to judge them."""

    items: list[RankedMemory]
    specific_words: tuple[str, ...]  # the task's words that can show relevance
    semantic: bool  # the semantic signal was on
    weights: dict[str, float] = field(default_factory=dict)  # the signals' weights in the scores
    # The rarity (idf) of the task's specific words together, and that of a word found in one
    # memory of the store: a memory's word evidence is how many such rare words its share of
    # the task's words is worth (`word_evidence`), the same scale in a store of 50 or 50,000.
    word_weight: float = 0.0
    rare_word: float = 1.0
    typical_cosine: float = 0.0  # the project's median cosine with the task (0 without the signal)
    compared: int = 0  # the project's memories the task's vector was compared with
    cosine_spread: float = 0.0  # the standard deviation of the project's cosines with the task
    targeted: bool = True  # the relevance gate applied (`gate_applies`), as `rank` found it
    chance: "WordChance | None" = None  # what chance gives the task's words here (`store.retrieval.chance`)
    evidence: Any = None  # the gate's `Evidence` for the task (`store.retrieval.gate.task_evidence`)
    # With layers: the layer whose evidence this is (the strongest), and each layer's confidence.
    layer: str = "own"
    by_layer: dict[str, float] = field(default_factory=dict)

    def word_evidence(self, item: RankedMemory) -> float:
        return item.signals.get("words", 0.0) * self.word_weight / self.rare_word if self.rare_word > 0 else 0.0
