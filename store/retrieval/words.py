"""The words of a task and of the paths in play, as ranking searches for them: stop words and
generic verbs left out, identifiers split, a crude root to tell a word's forms apart."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Sequence

from store.engine.records import Memory
from store.index.identifiers import split_words


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


_SUFFIX = re.compile(r"(?:ing|ed|es|s)$")


@lru_cache(maxsize=65536)
def root(word: str) -> str:
    """A crude common root of a word's forms: "fixes", "fixed", "fixing" -> "fix";
    "update", "updated" -> "updat". Enough to tell a generic verb in any of its forms."""
    stripped = _SUFFIX.sub("", word) if len(word) > 4 else word
    stripped = stripped if len(stripped) >= 3 else word
    return stripped[:-1] if stripped.endswith("e") and len(stripped) > 3 else stripped


def keywords(text: str) -> list[str]:
    """The words of a task worth searching for: no stop words, no single letters, identifiers
    split into their words as well as whole, in order."""
    return list(_keywords(text))


@lru_cache(maxsize=32)
def _keywords(text: str) -> tuple[str, ...]:
    # A prime asks for its task's words once a layer and again to tell whether it is targeted:
    # split once (a prompt's 16,000 characters took 10 ms a time).
    return tuple(w for w in split_words(text) if len(w) > 1 and w not in STOP_WORDS and not w.isdigit())


def specific(words: Sequence[str], generic: frozenset[str], project: str = "") -> list[str]:
    """The words that say what a task is about: generic task verbs ("fix", "add", "update", in
    any form) are not evidence of relevance on their own, so they are left out; so are the words
    of the project's own name ("tonic" in the tonic project): every memory of a project is about
    it, so naming it says nothing about which."""
    own = {root(w) for w in split_words(project) if len(w) > 2}
    return [w for w in words if root(w) not in generic and root(w) not in own]


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


class TaskWords:
    """The task's specific words with their weights (their rarity), and one pattern that finds
    any form of them in a memory's text: a form starts with its word's root ("timeouts" and
    "timeout" meet at "timeout"), so only the words the pattern finds are rooted."""

    def __init__(self, weights: dict[str, float]) -> None:
        self.weights = weights
        self.total = sum(weights.values())
        self.roots = {word: root(word) for word in weights}
        # The task's words (their places among the weights) by root: a memory's share adds up
        # the words of the roots it holds, not every word of a long task for every memory.
        self._by_root: dict[str, list[int]] = {}
        for place, word in enumerate(weights):
            self._by_root.setdefault(self.roots[word], []).append(place)
        self._weights = list(weights.values())
        stems = sorted(set(self.roots.values()), key=len, reverse=True)
        self.pattern = (re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, stems)) + r")[^\W_]*")
                        if stems else None)

    def share(self, memory: Memory, identifier_words: str = "") -> float:
        """The share of the task's words the memory uses (its words, and the parts of its
        identifiers), each word counted at its weight."""
        if self.total <= 0 or self.pattern is None:
            return 0.0
        text = f"{memory.title} {memory.content} {' '.join(memory.tags)} {identifier_words}".lower()
        found = set(self.pattern.findall(text))
        # A word found has its own root among the roots found: the words of those roots, summed
        # in the task's order (the same sum, term by term, as over every word).
        places = sorted(place for r in {root(w) for w in found} for place in self._by_root.get(r, ()))
        return sum(self._weights[place] for place in places) / self.total
