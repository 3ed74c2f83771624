"""The relevance gate's evidence: the semantic margin grows with the project, as chance's does."""

from __future__ import annotations

import math
from dataclasses import asdict, replace

import pytest

from store.engine.config import Config
from store.retrieval.gate import GateSettings, alone_margin, task_evidence
from store.retrieval.ranking import Ranking, RankedMemory
from store.engine.records import InjectionContext, Memory


def settings(**changes) -> GateSettings:
    return GateSettings(**asdict(replace(Config.defaults().injection.gate, **changes)))


def test_the_margin_holds_up_to_the_size_it_was_fitted_on_then_grows():
    gate = settings()
    assert alone_margin(gate, 0) == alone_margin(gate, 20) == alone_margin(gate, 70) == 0.17
    assert alone_margin(gate, 281) == pytest.approx(0.17 * math.sqrt(math.log(281) / math.log(70)))
    assert 0.19 < alone_margin(gate, 281) < alone_margin(gate, 10_000) < alone_margin(gate, 1_000_000) < 0.35
    assert alone_margin(settings(semantic_alone_size=0), 1_000_000) == 0.17  # 0: it never grows


def test_the_default_settings_carry_the_size():
    assert Config.defaults().injection.gate.semantic_alone_size == 70


def _ranking(compared: int) -> tuple[Ranking, list[RankedMemory]]:
    """One candidate sharing no word with the task, its cosine 0.20 above the project's median."""
    memory = Memory(id="mem-1", project="p", type="pattern", title="t", content="c", confidence=0.5)
    item = RankedMemory(memory, 0.5, {"cosine": 0.30, "words": 0.0, "path": 0.0, "tag": 0.0})
    return Ranking([item], ("bookmarks",), True, typical_cosine=0.10, compared=compared), [item]


@pytest.mark.parametrize("compared, on_topic", [(40, True), (281, True), (10_000, False)])
def test_a_cosine_alone_is_evidence_only_where_chance_would_not_reach_it(compared, on_topic):
    """0.20 over the median is evidence alone in a project of 40 or 281 memories (margins 0.17
    and 0.196); among 10,000 chance's best reaches it (margin 0.25), so it is not."""
    ranking, eligible = _ranking(compared)
    evidence = task_evidence(settings(), InjectionContext(task="bookmarks"), ranking, eligible)
    assert (evidence.strength >= 1.0) is on_topic
    assert f"(alone {alone_margin(settings(), compared):.2f})" in evidence.describe(settings())
