"""The trie-shaped word search (`store.engine.word_trie`) finds a word exactly where the plain
alternation of the words does, and redaction's hint look-ups built on it pick the same rules as
checking each rule's hints in turn (the slow way they replaced)."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings, strategies as st

from store.engine import redaction
from store.engine.word_trie import trie_pattern

# Words that start, end and hold one another, with characters `re` must escape.
WORDS = ["sk", "sk-", "sk-ant-", "key", "private key", "pass", "sshpass", "a.b", "a", "ab", "(x)", "x"]


def _alternation(words: list[str]) -> re.Pattern:
    return re.compile("|".join(re.escape(w) for w in words))


@given(st.lists(st.sampled_from(WORDS), min_size=1, unique=True),
       st.text(alphabet="skeyaprivtsh-. b(x)Kİ\u212a\n", max_size=60))
@settings(max_examples=400, deadline=None)
def test_trie_finds_a_word_where_the_alternation_does(words, text):
    trie, plain = re.compile(trie_pattern(words)), _alternation(words)
    found = trie.search(text)
    expected = plain.search(text)
    assert (found is None) == (expected is None)
    if found is not None:
        assert found.start() == expected.start()
        assert found.group() in words


def test_trie_refuses_what_would_match_everywhere():
    with pytest.raises(ValueError):
        trie_pattern([])
    with pytest.raises(ValueError):
        trie_pattern(["key", ""])


def _rules_one_by_one(lower: str) -> list[int]:
    """The rules whose hints are in `lower`, each rule's hints checked in turn (the old way)."""
    return [i for i, (_, hints, _, _) in enumerate(redaction._SECRETS) if any(h in lower for h in hints)]


def _hint_texts() -> list[str]:
    """Texts holding every hint, none, several, and hints run into one another."""
    hints = [h for _, rule_hints, _, _ in redaction._SECRETS for h in rule_hints]
    rng = random.Random(7)
    texts = ["", "nothing to see here", "ask the disk", "TOKEN=abc", "Private Key", "sk-ant-sk-"]
    texts += [f"before {hint} after" for hint in hints]
    texts += ["".join(rng.choice(hints) for _ in range(rng.randint(1, 4))) for _ in range(300)]
    texts += [" ".join(rng.choice(hints + ["word", "x"]) for _ in range(8)) for _ in range(300)]
    return texts


def test_hint_search_and_rule_choice_match_the_plain_ones():
    plain = _alternation([h for _, hints, _, _ in redaction._SECRETS for h in hints])
    for text in _hint_texts():
        lower = text.lower()
        assert bool(redaction._ANY_HINT.search(lower)) == bool(plain.search(lower)), text
        assert redaction._hinted_rules(lower) == _rules_one_by_one(lower), text
