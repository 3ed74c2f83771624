"""A memory's text as the store compares and shows it: normalised for equality, hashed, a title
derived from the content, lists of tags and file refs cleaned."""

from __future__ import annotations

import hashlib
import re
from typing import Iterable

def normalize_text(text: str) -> str:
    # As `_SPACE.sub(" ", text).strip().lower()` (`\s` is `str.isspace`), without the regex.
    return " ".join(text.split()).lower()


def content_hash(text: str) -> str:
    return hashlib.sha1(normalize_text(text).encode("utf-8")).hexdigest()


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def derive_title(content: str, limit: int = 100) -> str:
    """Seed 000: the first sentence or line of the content, at most `limit` characters."""
    first = content.strip().splitlines()[0] if content.strip() else ""
    match = _SENTENCE_END.search(first)
    if match:
        first = first[: match.start()]
    first = first.strip().rstrip(".").rstrip()  # "it works  ." must not end in blanks
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first


def clean_list(values: Iterable[str] | str | None) -> tuple[str, ...]:
    """Tags and file refs: from a list or a comma-separated string, trimmed, unique, in order."""
    if values is None:
        return ()
    if isinstance(values, str):
        values = values.split(",")
    return tuple(dict.fromkeys(v.strip() for v in values if v and v.strip()))


def quote_fts_term(term: str) -> str:
    """One term of a full-text query as a quoted string: whatever the user typed, it is matched as
    text. memdeck's full-text queries are FTS5's syntax on both back-ends (quoted terms, a trailing
    `*`, AND/OR/NOT, parentheses, a `{columns}:` filter); PostgreSQL's back-end parses them."""
    return '"' + term.replace('"', '""') + '"'
