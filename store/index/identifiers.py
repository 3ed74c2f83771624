"""Words as code uses them: `camelCase`, `PascalCase`, `snake_case`, `kebab-case`, paths and
dotted names split into the words a person would type ("useSearchParams" -> use, search, params).

The full-text index holds these parts beside the text (`index_words`, the `words` column of
`memory_fts`, computed by SQLite through the `memdeck_words` function), and a task's words are
split the same way (`split_words`), so "search params" finds `useSearchParams` and
`restaurant.router.ts` finds "restaurant router".
"""

from __future__ import annotations

import json
import re
from itertools import chain

# A run of word characters and the joints code puts inside names.
_TOKEN = re.compile(r"[^\W_][\w.\-/:]*[^\W_]|[^\W_]", re.UNICODE)
_JOINT = re.compile(r"[_.\-/:]+")


def _case_parts(piece: str) -> list[str]:
    """camelCase and acronym boundaries, in any script with case: "parseJSONBody" -> parse,
    JSON, Body; digits stand apart ("v2Api" -> v, 2, Api)."""
    if piece.isalpha() and (piece.islower() or piece.isupper() or piece[1:].islower()):
        return [piece]  # most words: one part (the character walk below costs 20x more)
    parts: list[str] = []
    start = 0
    for i in range(1, len(piece)):
        before, here = piece[i - 1], piece[i]
        after = piece[i + 1] if i + 1 < len(piece) else ""
        if (before.isdigit() != here.isdigit()
                or (before.islower() and here.isupper())
                or (before.isupper() and here.isupper() and after.islower())):
            parts.append(piece[start:i])
            start = i
    parts.append(piece[start:])
    return parts


def split_identifier(token: str) -> list[str]:
    """The lower-case words of one identifier; a plain word gives itself."""
    return [p.lower() for piece in _JOINT.split(token) if piece for p in _case_parts(piece)]


# `split_identifier` of an ASCII token in one scan: digit runs, an upper-case run before a
# capitalised word ("JSON" of "JSONBody"), a word with at most one capital, an upper-case run.
_ASCII_PARTS = re.compile(r"[0-9]+|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


def _long_parts(token: str) -> tuple[str, ...]:
    """The parts longer than one letter of an identifier that splits, else nothing."""
    if token.isascii():
        parts = [p.lower() for p in _ASCII_PARTS.findall(token)]
    else:
        parts = split_identifier(token)
    return tuple(p for p in parts if len(p) > 1) if len(parts) > 1 else ()


class _RunParts(dict):
    """`_long_parts` of a run's token (the run without the joints at either end), by run: a bulk
    import meets the same identifiers in memory after memory, and a hit is a lookup in C."""

    LIMIT = 1 << 17

    def __missing__(self, run: str) -> tuple[str, ...]:
        if len(self) >= self.LIMIT:
            self.clear()
        token = run.strip(_JOINTS)
        parts = self[run] = _long_parts(token) if token else ()
        return parts


# In ASCII text, a run of the characters tokens are made of that holds a character an identifier
# splits at (a joint, a digit, an upper-case letter): one scan in C finds them, so most words of
# a text (plain lower-case ones) never reach Python. A token is its run without the joints at
# either end (as `_TOKEN` finds it); `_RUN_PARTS` tells whether it splits, once per run.
# (In ASCII, the characters of a run before its first such character are lower-case letters.) A
# match starts only where a run starts: tried from inside a run as well, a long lower-case run
# would be scanned again from each of its letters (quadratic: 120,000 letters took 8 s).
_MAY_SPLIT = re.compile(r"(?<![\w.\-/:])[a-z]*+[\dA-Z_.\-/:][\w.\-/:]*")
_JOINTS = "_.-/:"
_RUN_PARTS = _RunParts()


def _plain(token: str) -> bool:
    return token.isalpha() and (token.islower() or token.isupper() or token[1:].islower())


def identifier_parts(text: str) -> list[str]:
    """The parts of every identifier in `text` that splits into more than one word, each once."""
    if text.isascii():
        return list(dict.fromkeys(chain.from_iterable(map(_RUN_PARTS.__getitem__, _MAY_SPLIT.findall(text)))))
    # Case changes outside ASCII: each token is looked at.
    found: dict[str, None] = {}
    for token in _TOKEN.findall(text):
        if not _plain(token) and (parts := _RUN_PARTS[token]):
            found.update(dict.fromkeys(parts))
    return list(found)


def split_words(text: str) -> list[str]:
    """Every word of `text`, lower case, identifiers split into their parts as well as whole
    (`useSearchParams` gives usesearchparams, use, search, params), in order, each once."""
    found: dict[str, None] = {}
    for token in _TOKEN.findall(text):
        for whole in _JOINT.split(token):
            if whole:
                found[whole.lower()] = None
            parts = split_identifier(whole)
            if len(parts) > 1:
                found.update(dict.fromkeys(parts))
    return list(found)


_TAG_TEXT: dict[str, str] = {}  # a tags column (JSON) as text; an import repeats a few hundred


def _tag_text(tags: str) -> str:
    if (text := _TAG_TEXT.get(tags)) is None:
        try:
            text = " ".join(json.loads(tags))
        except (ValueError, TypeError):
            text = tags
        if len(_TAG_TEXT) >= 1 << 14:
            _TAG_TEXT.clear()
        _TAG_TEXT[tags] = text
    return text


def index_words(title: str | None, content: str | None, tags: str | None) -> str:
    """The `words` column of the full-text index: identifier parts of a memory's title, content
    and tags (a JSON list), space-separated. Registered with SQLite as `memdeck_words`."""
    return " ".join(identifier_parts(f"{title or ''}\n{content or ''}\n{_tag_text(tags) if tags else ''}"))
