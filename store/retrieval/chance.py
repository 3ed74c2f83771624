"""What chance looks like in a project: how many of its memories would hold as much of a task's
words as the best one does if the words were scattered over the project's memories at random.

Each of the task's searched words is found in some of the project's N memories (its document
frequency, `df`). Were the words independent of one another, a memory would hold word w with
probability p = df/N, and its word score (the sum of the rarities, idf, of the words it holds)
would follow the distribution of a sum of independent weighted coin flips. `expected_at_least`
is N times the chance that a memory scores at least s under that distribution: the number of
memories expected to reach s by chance alone. A task about the project finds memories holding
several of its words together, which chance makes rare (expected count far below 1); an
unrelated task's best memory is what chance gives anyway (about 1 or more).

Everything here is the project's own: the same task in the same project gets the same numbers
whatever else the store holds.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

# Scores are summed on a grid of this step (rarities are a few units): exact enough, and the
# distribution of a dozen words stays a few hundred points.
_STEP = 0.01
# Beyond this many grid points a task's distribution is summed with numpy (`_tail_array`).
_ARRAY_POINTS = 4000


@dataclass(frozen=True)
class WordChance:
    """The task's searched words in a project: (probability a memory holds it, its rarity)."""

    odds: tuple[tuple[float, float], ...]
    size: int  # the project's memories

    @cached_property
    def _tail(self) -> tuple[list[int], list[float]]:
        """The distribution of a chance memory's score on the grid, once per task: its points in
        order, and the probability of scoring at least each."""
        if sum(round(w / _STEP) for p, w in self.odds if p > 0) > _ARRAY_POINTS:
            return self._tail_array()
        dist = {0: 1.0}
        for p, weight in self.odds:
            if p <= 0:
                continue
            step = round(weight / _STEP)
            grown: dict[int, float] = {}
            for at, prob in dist.items():
                grown[at] = grown.get(at, 0.0) + prob * (1.0 - p)
                grown[at + step] = grown.get(at + step, 0.0) + prob * p
            dist = grown
        points = sorted(dist)
        at_least, total = [], 0.0
        for at in reversed(points):
            total += dist[at]
            at_least.append(total)
        return points, at_least[::-1]

    def _tail_array(self) -> tuple[range, list[float]]:
        """`_tail` for a long task (a pasted log: hundreds of words, a grid of many thousand
        points), with numpy arrays over the whole grid: the same sums in the same order (a point
        no sum reaches holds 0, which changes no total), in milliseconds rather than seconds."""
        import numpy as np

        top = sum(round(w / _STEP) for p, w in self.odds if p > 0)
        dist = np.zeros(top + 1)
        dist[0], reach = 1.0, 0
        for p, weight in self.odds:
            if p <= 0:
                continue
            step = round(weight / _STEP)
            grown = dist * (1.0 - p)
            grown[step:reach + step + 1] += dist[:reach + 1] * p
            dist, reach = grown, reach + step
        return range(top + 1), np.cumsum(dist[::-1])[::-1].tolist()

    def expected_at_least(self, score: float) -> float:
        """Memories expected to score at least `score` by chance (N x P(S >= score))."""
        if score <= 0 or self.size <= 0:
            return float(self.size)
        points, at_least = self._tail
        # Each word's weight was rounded to the grid: a sum may be off by half a step per word.
        mark = score / _STEP - 0.5 * len(self.odds) - 1e-9
        n = bisect_left(points, mark)
        return self.size * at_least[n] if n < len(points) else 0.0

    def surprise(self, score: float) -> float:
        """How far `score` stands above chance: -log10 of the expected count (0 at one memory
        expected by chance, 2 at one in a hundred), never below 0."""
        expected = self.expected_at_least(score)
        return max(0.0, -math.log10(expected)) if expected > 0 else 6.0


def word_chance(hits: dict[str, set[str]], rarity: dict[str, float], size: int) -> WordChance:
    odds: Sequence[tuple[float, float]] = [(min(1.0, len(hits[w]) / size) if size else 0.0, rarity[w])
                                           for w in rarity if w in hits]
    return WordChance(tuple(odds), size)
