"""A large import's full-text columns (`memory.fts`, `memory.doclen`) computed in Python, so the
COPY of its rows runs without the `memdeck_fts_row` trigger (at a million memories the trigger
was half the server's time of an import: 6 s of 13 per 100,000 rows).

The server still decides everything that depends on it, once per import rather than once per
row: how each character is normalised (`memdeck_fts_text` of each distinct character: lowered in
the database's locale, or a separator) and how each distinct word is parsed and stemmed
(`to_tsvector('memdeck', word)`). From those, `FtsBuilder.row` assembles what the trigger would:
each column's tsvector as `to_tsvector` builds it (positions from 1, at most 255 per lexeme, none
past 16383), weighted and concatenated as `||` does (the right side's positions shifted by the
left side's largest, at most 256 per lexeme). `tests/store/backends/test_postgres_fts.py` compares it with the
trigger on real and fuzzed text.

Whatever it cannot vouch for is computed by the server with the trigger's own expression: a row
holding a character whose lowercase is not one character, or a word whose parse leaves a gap or
two lexemes at one position, or a very long text. And nothing is built unless the database's
functions are the ones this module reproduces and its locale lowers character by character
(`FtsBuilder.open` returns None otherwise, and the trigger does it all).
"""

from __future__ import annotations

import hashlib
from typing import Sequence

# The trigger's columns, weights and order (`postgres_schema._fts_function`, migration 6 on).
COLUMNS = (("title", "A"), ("tags", "B"), ("content", "C"), ("words", "D"))
# PostgreSQL's limits (tsearch/ts_type.h): the largest position, positions kept per lexeme by
# `to_tsvector` (MAXNUMPOS - 1) and by `||` (MAXNUMPOS).
MAX_POS = 16383
TO_TSVECTOR_POSITIONS = 255
CONCAT_POSITIONS = 256
# A row with more text than this is left to the server (a tsvector has a 1 MB limit it would
# raise at; such rows are rare and the server's cost for them is the same either way).
MAX_TEXT = 100_000
# The SQL of the trigger, for the rows left to the server: the same functions in the same order.
SERVER_SQL = ("SELECT (" + " || ".join(f"setweight(to_tsvector('memdeck', memdeck_fts_text(t.{c})), '{w}')"
                                       for c, w in COLUMNS) + ")::text, "
              + " + ".join(f"memdeck_tokens(memdeck_fts_text(t.{c}))" for c, _ in COLUMNS)
              + " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) WITH ORDINALITY "
              "AS t(title, tags, content, words, n) ORDER BY t.n")


# The word `_learn_words` puts after each word to see where it ends (its own stem: letters only).
_END = "qqqq"


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "':"


# A position as tsvector text writes it, with each column's weight (D, the default, unwritten).
_POSITION_TEXT = tuple(tuple(f"{p}{'' if w == 'D' else w}" for p in range(MAX_POS + 1)) for _, w in COLUMNS)


def _expected_sources() -> dict[str, str]:
    from store.backends.postgres_schema import _accents_folded, _full_text_index, _fts_function

    def body(statement: str) -> str:
        return statement.split("$$")[1]

    fts_text = next(s for s in _full_text_index() if "FUNCTION memdeck_fts_text" in s)
    tokens = next(s for s in _accents_folded() if isinstance(s, str) and "FUNCTION memdeck_tokens" in s)
    return {"memdeck_fts_row": body(_fts_function(*COLUMNS)), "memdeck_fts_text": body(fts_text),
            "memdeck_tokens": body(tokens)}


def _digest(sources: dict[str, str]) -> str:
    return hashlib.sha256(repr(sorted(sources.items())).encode()).hexdigest()


class FtsBuilder:
    """The tsvector and token count of rows about to be copied into `memory`, for one import."""

    def __init__(self, cursor) -> None:
        self._cursor = cursor
        self._chars: dict[int, str] = {}  # str.translate's table: a character -> its normal form
        self._odd_chars: set[str] = set()  # characters whose normal form is not one character
        # word -> its lexemes by position, each quoted as tsvector text writes it (`'lexeme':`)
        self._words: dict[str, tuple[str, ...]] = {}
        self._unsound: set[str] = set()  # words whose parse this module does not reproduce
        self._learn_chars([chr(i) for i in range(1, 128)])

    @classmethod
    def open(cls, cursor) -> "FtsBuilder | None":
        """A builder, if this database computes full text exactly as this module reproduces."""
        rows = cursor.execute("SELECT proname, prosrc FROM pg_proc WHERE proname IN "
                              "('memdeck_fts_row', 'memdeck_fts_text', 'memdeck_tokens') "
                              "AND pronamespace = current_schema()::regnamespace").fetchall()
        if _digest(dict(rows)) != _digest(_expected_sources()):
            return None
        # Only a libc locale lowers text one character at a time (ICU's lowering looks at the
        # characters around, and may turn one into two).
        provider = cursor.execute("SELECT datlocprovider FROM pg_database "
                                  "WHERE datname = current_database()").fetchone()[0]
        if provider != "c":
            return None
        # A stop word takes a position and leaves no lexeme: at the end of a word that would not
        # show in the word's own tsvector. memdeck's dictionaries have none; a changed
        # configuration is left to the trigger.
        mapping = cursor.execute(
            "SELECT array_agg(DISTINCT d.dictname::text ORDER BY d.dictname::text), "
            "bool_or(coalesce(d.dictinitoption, '') ILIKE '%stopword%') FROM pg_ts_config_map AS m "
            "JOIN pg_ts_config AS c ON c.oid = m.mapcfg JOIN pg_ts_dict AS d ON d.oid = m.mapdict "
            "WHERE c.cfgname = 'memdeck'").fetchone()
        if mapping != (["memdeck_stem", "simple", "unaccent"], False):
            return None
        return cls(cursor)

    def _learn_chars(self, chars: Sequence[str]) -> None:
        rows = self._cursor.execute("SELECT c, memdeck_fts_text(c) FROM unnest(%s::text[]) AS c",
                                    (list(chars),)).fetchall()
        for char, normal in rows:
            if normal == "":
                self._chars[ord(char)] = " "
            elif len(normal) == 1 and not normal.isspace():  # then Python's split() splits as at spaces
                self._chars[ord(char)] = normal
            else:
                self._odd_chars.add(char)
                self._chars[ord(char)] = char

    def _learn_words(self, words: Sequence[str]) -> None:
        # Each word followed by a word of our own: its position, less one, is how many
        # positions the word takes, counting any that leave no lexeme (a token `unaccent`
        # empties takes one), which the word's tsvector alone would not show at its end.
        rows = self._cursor.execute(
            "SELECT u.w, t.lexeme, t.positions FROM unnest(%s::text[]) AS u(w), "
            f"LATERAL unnest(to_tsvector('memdeck', u.w || ' {_END}')) AS t", (list(words),)).fetchall()
        found: dict[str, dict[int, list[str]]] = {w: {} for w in words}
        for word, lexeme, positions in rows:
            for position in positions:
                found[word].setdefault(position, []).append(lexeme)
        for word, at in found.items():
            count = max(at, default=0) - 1
            if 0 <= count < 1000 and at[count + 1] == [_END] and all(len(at.get(p, ())) <= 1
                                                                    for p in range(1, count + 1)):
                self._words[word] = tuple(_quoted(at[p][0]) if p in at else None for p in range(1, count + 1))
            else:  # two lexemes at one position, or no end found: left to the server
                self._words[word] = ()
                self._unsound.add(word)

    def words_of(self, text: str) -> list[str] | None:
        """`memdeck_fts_text(text)` split at its spaces; None if a character is not one of ours.
        Every character of `text` must be known (`plan` learns them)."""
        if not text.isascii() and not self._odd_chars.isdisjoint(text):
            return None
        return text.translate(self._chars).split()

    def plan(self, texts: Sequence[Sequence[str]]) -> list[bool]:
        """Ask the server, once, about the characters and words of these rows (title, tags,
        content, words) it has not seen; then whether `row` can build each (False: leave it to
        the server, `server_rows`). The rows' own words are split in `row`, as the COPY streams."""
        chars: set[str] = set()
        for row in texts:
            for text in row:
                if not text.isascii():
                    chars.update(text)
        new_chars = [c for c in chars if ord(c) not in self._chars]
        if new_chars:
            self._learn_chars(new_chars)
        # Every word of every row in one pass (the normal form is character by character, so
        # the rows' texts joined by spaces split into the same words).
        words = set(" ".join([" ".join(row) for row in texts]).translate(self._chars).split())
        new_words = [w for w in words if w not in self._words]
        if new_words:
            self._learn_words(new_words)
        odd, unsound = self._odd_chars, self._unsound
        plans = []
        for row in texts:
            ok = sum(map(len, row)) <= MAX_TEXT
            if ok and odd and not all(text.isascii() or odd.isdisjoint(text) for text in row):
                ok = False
            if ok and unsound and any(not unsound.isdisjoint(self.words_of(text)) for text in row):
                ok = False
            plans.append(ok)
        return plans

    def row(self, texts: Sequence[str]) -> tuple[str, int]:
        """(the tsvector as text, the token count) the trigger computes for a row (title, tags,
        content, words) `plan` passed."""
        table = self._chars
        split = [text.translate(table).split() for text in texts]
        lookup = self._words
        merged: dict[str, list[str]] = {}  # quoted lexeme -> "position" + weight, in order
        stored = 0  # the position of the last lexeme stored
        for column, strings in zip(split, _POSITION_TEXT):
            # Under 256 positions in all, no limit is reached: `||` shifts a column's positions
            # by the largest of the columns before, the last one stored.
            position = stored
            for word in column:
                for lexeme in lookup[word]:
                    position += 1
                    if lexeme is None:  # a token that took a position and left no lexeme
                        continue
                    if position > TO_TSVECTOR_POSITIONS:
                        return self._row_at_limits(split)
                    stored = position
                    kept = merged.get(lexeme)
                    if kept is None:
                        merged[lexeme] = [strings[position]]
                    else:
                        kept.append(strings[position])
        return " ".join([lexeme + ",".join(at) for lexeme, at in merged.items()]), sum(map(len, split))

    def _row_at_limits(self, split: list[list[str]]) -> tuple[str, int]:
        """`row` for a row long enough to meet PostgreSQL's limits on positions: each column's
        tsvector as `to_tsvector` keeps it, concatenated as `||` does, step by step."""
        merged: dict[str, list[str]] = {}  # quoted lexeme -> "position" + weight, in order
        last: dict[str, int] = {}  # lexeme -> its last position in `merged`
        top = 0  # the largest position in `merged`
        for words, strings in zip(split, _POSITION_TEXT):
            # This column's `to_tsvector`: lexeme -> positions.
            column: dict[str, list[int]] = {}
            position = 0
            for word in words:
                for lexeme in self._words[word]:
                    position += 1
                    if lexeme is None:
                        continue
                    at = position if position < MAX_POS else MAX_POS
                    kept = column.get(lexeme)
                    if kept is None:
                        column[lexeme] = [at]
                    elif len(kept) < TO_TSVECTOR_POSITIONS and kept[-1] != MAX_POS and kept[-1] != at:
                        kept.append(at)
            # `merged || setweight(column, weight)`.
            offset = top
            for lexeme, positions in column.items():
                out = merged.get(lexeme)
                if out is None:
                    out = merged[lexeme] = []
                    end = 0
                else:
                    end = last[lexeme]
                for p in positions:
                    if len(out) >= CONCAT_POSITIONS or (out and end == MAX_POS):
                        break
                    end = p + offset if p + offset < MAX_POS else MAX_POS
                    out.append(strings[end])
                last[lexeme] = end
                top = max(top, end)
        return " ".join([lexeme + ",".join(at) for lexeme, at in merged.items()]), sum(map(len, split))

    def server_rows(self, texts: Sequence[Sequence[str]]) -> list[tuple[str, int]]:
        """(tsvector as text, token count) of each row, computed by the server as its trigger does."""
        if not texts:
            return []
        columns = [list(column) for column in zip(*texts)]
        return [(v, n) for v, n in self._cursor.execute(SERVER_SQL, columns).fetchall()]
