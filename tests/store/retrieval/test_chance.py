"""What chance looks like in a project (store/retrieval/chance.py)."""

from __future__ import annotations

import math

from store.retrieval.chance import WordChance


def test_a_memory_holding_every_word_is_as_rare_as_chance_makes_it():
    # Four words, each in half of two memories: one memory in sixteen holds all four by chance.
    weight = math.log(2)
    chance = WordChance(tuple((0.5, weight) for _ in range(4)), size=2)
    assert math.isclose(chance.expected_at_least(4 * weight), 2 / 16, rel_tol=1e-6)
    assert math.isclose(chance.surprise(4 * weight), -math.log10(2 / 16), rel_tol=1e-6)
    # One word is what chance gives anyway: at least one of the two memories is expected to hold it.
    assert chance.expected_at_least(weight) >= 1 and chance.surprise(weight) == 0.0


def test_rarer_words_held_together_stand_further_above_chance():
    common = WordChance(((0.5, 0.7), (0.5, 0.7)), size=100)
    rare = WordChance(((0.02, 3.9), (0.02, 3.9)), size=100)
    assert rare.surprise(7.8) > common.surprise(1.4) >= 0
    assert math.isclose(rare.expected_at_least(7.8), 100 * 0.02 * 0.02, rel_tol=1e-6)
    assert common.expected_at_least(0) == 100  # everything scores at least nothing
