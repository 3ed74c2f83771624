"""The confidence rules a single write applies: re-learning (reinforcement), use (the usage
boost) and replacement (supersession). Pure functions of the config and the numbers, so the
store applies them without depending on the lifecycle operations (`store.engine.lifecycle`:
decay, contradiction, cleanup), which depend on the store."""

from __future__ import annotations

from store.engine.config import Config


def reinforced_confidence(config: Config, before: float, incoming: float) -> float:
    """Re-learning a memory (seeds 001, 003, 004): the higher of the two confidences plus
    `confidence.reinforce_boost`, capped at `confidence.max`; never lower than before."""
    cap = float(config.confidence.max)
    boost = float(config.confidence.reinforce_boost)
    return round(max(before, min(cap, max(before, incoming) + boost)), 6)


def used_confidence(config: Config, before: float) -> float:
    """Seed 000's usage boost: a memory put into a prompt gains `confidence.usage_boost`, never
    above `confidence.usage_max` and never lowered by it."""
    ceiling = float(config.confidence.usage_max)
    return before if before >= ceiling else round(min(ceiling, before + float(config.confidence.usage_boost)), 6)


def superseded_state(config: Config, confidence: float, status: str) -> tuple[float, str]:
    """Seeds 001 and 004's contradiction by a successor: confidence drops to
    `confidence.superseded_to` (never raised), and an active memory becomes inactive, kept and
    visible, never injected beside the memory that replaces it."""
    return (min(confidence, float(config.confidence.superseded_to)),
            "inactive" if status == "active" else status)
