"""A project's word statistics for ranking (`store.retrieval.ranking`): which of the project's
memories hold each of the task's words, a word's rarity among them (BM25's idf), and BM25 over
the candidates with those rarities. Everything is the project's own, so a project's block does
not change with what other projects the store holds. The full-text queries are the back-end's
(`store.backends.word_rows`)."""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

from store.backends import word_rows
from store.engine.core import Store
from store.engine.records import Memory
from store.retrieval.words import root


def word_hits(store: Store, project_id: int | None, words: Sequence[str], cap: int,
              only: Sequence[str] | None = None) -> dict[str, set[str]]:
    """The project's memories (up to `cap`) each word is found in (the index's stemming; among
    `only` wherever they are when the project is None): every statistic of a word is the
    project's own, so a project's blocks do not change with what other projects the store holds.
    Found the back-end's own way where it has one (`word_matches`), else by a full-text query a
    word (`word_rows.first_matches`)."""
    if only is not None and not only:
        return {word: set() for word in words}
    b = store.backend
    if project_id is not None and only is None:  # PostgreSQL: the common words in one pass
        found = b.word_matches(project_id, list(dict.fromkeys(words)), cap)
        if found is not None:
            return found
    return word_rows.first_matches(b, project_id, words, cap, only)


def word_counts(store: Store, project_id: int, words: Sequence[str], cap: int) -> dict[str, int]:
    """How many of the project's memories (up to `cap`) each word is found in."""
    return {word: len(found) for word, found in word_hits(store, project_id, words, cap).items()}


def idf(size: int, found: int) -> float:
    """BM25's rarity of a word found in `found` of `size` memories."""
    return math.log((size - found + 0.5) / (found + 0.5) + 1.0)


def corpus_size(store: Store, project_id: int) -> int:
    """The project's memories (every status, as the full-text index holds them): idf is relative
    to this, not to the whole store."""
    return store.backend.project_size(project_id)


# BM25's usual constants (FTS5's own): term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75


def word_scores(hits: dict[str, set[str]], weights: dict[str, float]) -> dict[str, float]:
    """Memory id -> the sum of the rarities of the task's words it holds (as the index finds them)."""
    found: dict[str, float] = {}
    for word, ids in hits.items():
        for memory_id in ids:
            found[memory_id] = found.get(memory_id, 0.0) + weights.get(word, 0.0)
    return found


def text_candidates(found: dict[str, float], limit: int, only: Sequence[str] | None = None) -> list[str]:
    """The `limit` memories holding the most of the task's words, each word at its rarity (ties
    by id): the text signal's candidates, chosen from the project's own statistics."""
    if only is not None:
        wanted = set(only)
        found = {k: v for k, v in found.items() if k in wanted}
    return [k for k, _ in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def bm25_scores(memories: Sequence[tuple[Memory, str]], hits: dict[str, set[str]], weights: dict[str, float],
                fields: Any) -> dict[str, float]:
    """BM25 of the task's words over each memory's title, content, tags and identifier words
    (each field's matches counted at its weight, `injection.field_weights`), with the project's
    own idf (`weights`) and the candidates' own mean length: nothing from another project."""
    if not memories or not weights:
        return {}
    lengths = {m.id: len(f"{m.title} {m.content}".split()) + len(m.tags) for m, _ in memories}
    mean = sum(lengths.values()) / len(lengths) or 1.0
    roots = {word: root(word) for word in weights}
    pattern = re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, sorted(set(roots.values()), key=len, reverse=True)))
                         + r")[^\W_]*") if roots else None
    scores: dict[str, float] = {}
    for memory, identifier_words in memories:
        tf: dict[str, float] = {}
        for text, weight in ((memory.title, fields.title), (memory.content, fields.content),
                             (" ".join(memory.tags), fields.tags), (identifier_words, fields.words)):
            for form in (pattern.findall(text.lower()) if pattern else ()):
                form_root = root(form)
                for word, word_root in roots.items():
                    if form == word or form_root == word_root:
                        tf[word] = tf.get(word, 0.0) + float(weight)
        for word, found in hits.items():
            if memory.id in found and word not in tf:
                tf[word] = 1.0  # found by the index's stemming, not by the root
        for word, count in tf.items():
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths[memory.id] / mean)
            scores[memory.id] = scores.get(memory.id, 0.0) + weights[word] * count * (BM25_K1 + 1.0) / (count + norm)
    return scores
