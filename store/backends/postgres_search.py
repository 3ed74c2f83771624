"""Full text on PostgreSQL, as FTS5 means it on SQLite: memdeck's FTS5 queries parsed into tsquery
text over the same stems (`parse_fts`), FTS5's BM25 computed in SQL from the same term statistics
(`bm25_args` for `memdeck_bm25`, with the store's size and mean length counted once per change of
its text), a broad query's newest matches read from a window of the newest rows
(`newest_matches`), and a prime's task words' first matches by rowid, the common words in one
pass (`word_matches`).
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from typing import Any, Callable, Sequence

# -- FTS5 queries as tsquery --------------------------------------------------------------------

class FtsQuery:
    def __init__(self, tsquery: str, terms: list[tuple[str, bool]]):
        self.tsquery = tsquery
        self.terms = terms  # (lexeme, prefix) of every term, for BM25


_FTS_TOKEN = re.compile(r'"((?:[^"]|"")*)"(\*)?|\{([^}]*)\}\s*:|\(|\)|\bAND\b|\bOR\b|\bNOT\b|\S+')
_COLUMN_WEIGHTS = {"title": "A", "tags": "B", "content": "C", "words": "D"}
_PIECE = re.compile(r"[^\W_]+", re.UNICODE)


def parse_fts(query: str, db=None) -> FtsQuery:
    """An FTS5 query as memdeck writes them (quoted terms, a trailing `*`, AND/OR, parentheses, a
    `{columns}:` filter) as tsquery text over stemmed lexemes."""
    out: list[str] = []
    terms: list[tuple[str, bool]] = []
    weights = ""
    words: list[tuple[str, bool]] = []
    for m in _FTS_TOKEN.finditer(query):
        if m.group(1) is not None:
            words.append((m.group(1).replace('""', '"'), bool(m.group(2))))
    stems = _stems([w for w, _ in words], db)  # FTS5 stems a prefix too
    for m in _FTS_TOKEN.finditer(query):
        text = m.group(0)
        if m.group(3) is not None:
            weights = "".join(_COLUMN_WEIGHTS[c] for c in m.group(3).split() if c in _COLUMN_WEIGHTS)
        elif m.group(1) is not None:
            word, prefix = m.group(1).replace('""', '"'), bool(m.group(2))
            pieces = _PIECE.findall(word.lower())
            # PostgreSQL indexes no word of 2 KB or more: such a term matches nothing.
            lexemes = [s for p in pieces for s in stems.get(p, [p]) if len(s.encode()) < 2047]
            if len(lexemes) < len(pieces):
                lexemes = []
            if not lexemes:
                out.append("'_'")  # no row holds it: the index keeps letters and digits only
                continue
            parts = []
            for j, lexeme in enumerate(lexemes):
                last_prefix = prefix and j == len(lexemes) - 1
                parts.append("'" + lexeme.replace("'", "''").replace("\\", "\\\\") + "'"
                             + (":*" if last_prefix else "") + (("" if last_prefix else ":") + weights if weights else ""))
                terms.append((lexeme, last_prefix))
            out.append("(" + " <-> ".join(parts) + ")" if len(parts) > 1 else parts[0])
        elif text == "AND":
            out.append("&")
        elif text == "OR":
            out.append("|")
        elif text == "NOT":
            out.append("& !")
        elif text in "()":
            out.append(text)
    return FtsQuery(" ".join(out), terms)


_stem_cache: dict[str, list[str]] = {}


def _stems(words: Sequence[str], db) -> dict[str, list[str]]:
    """Each piece of `words`, stemmed by the store's text search dictionaries (cached): its
    accents removed (`unaccent`, as the store's configuration does since migration 11), then
    Snowball's English stemmer."""
    # (Not `- set(_stem_cache)`: a copy of the whole cache per call made a long prompt's words,
    # each parsed on its own, quadratic.)
    pieces = sorted({p for w in words for p in _PIECE.findall(w.lower()) if p not in _stem_cache})
    if pieces and db is not None:
        rows = db._execute_cursor(
            "SELECT p, ts_lexize('memdeck_stem', coalesce((ts_lexize('unaccent', p))[1], p)) "
            "FROM unnest(%s::text[]) AS p", (pieces,)).fetchall()
        for piece, lexemes in rows:
            _stem_cache[piece] = list(lexemes or [piece])
    return {p: _stem_cache.get(p, [p]) for w in words for p in _PIECE.findall(w.lower())}


# -- BM25 as FTS5 computes it ----------------------------------------------------------------------

_stats_lock = threading.Lock()
_stats: dict[tuple, Any] = {}


def bm25_args(db, query: FtsQuery, weights: tuple[float, ...]) -> list[Any]:
    """The arguments of `memdeck_bm25`: lexemes, prefix flags, each one's idf over the whole
    store, the column weights (A title, B tags, C content, D words) and the mean row length."""
    title, content, tags, words = weights
    total, mean = corpus(db)
    idfs = []
    for lexeme, prefix in query.terms:
        hits = _hits(db, lexeme, prefix)
        idf = math.log((total - hits + 0.5) / (hits + 0.5)) if total else 0.0
        idfs.append(idf if idf > 0 else 1e-6)
    return [[t for t, _ in query.terms], [int(p) for _, p in query.terms], idfs,
            [title, tags, content, words], mean or 1.0]


def _changes(db) -> int:
    return db._execute_cursor("SELECT memdeck_changes()", ()).fetchone()[0]


def text_version(db) -> tuple:
    """Moves whenever a statement adds, deletes or rewrites memories' text (migration 11)."""
    return text_state(db)[0]


# Whether another transaction that has written (holding its transaction id's lock, as every
# transaction given an id does until it ends) is open when the text version is read: it may have
# moved `memdeck_text_change` already and commit rows a count read afterwards does not see, so
# nothing read under that version is kept (nor anything read inside a transaction, which may yet
# roll back). A writer that moves the version later only makes what was read under this one
# older than the store. (The snapshot's list of open transactions would not do: it leaves out a
# writer given its id after the last transaction ended, the usual case on a quiet server.)
# The subquery names the sequence's row, so it runs after the version is read.
_WRITERS_OPEN = ("EXISTS (SELECT FROM pg_locks WHERE locktype = 'transactionid' "
                 "AND pid IS DISTINCT FROM pg_backend_pid() AND last_value IS NOT NULL)")


def text_state(db) -> tuple[tuple, bool]:
    """(the text version, whether what is read under it may be kept): see `_WRITERS_OPEN`."""
    value, called, busy = db._execute_cursor(
        f"SELECT last_value, is_called, {_WRITERS_OPEN} FROM memdeck_text_change", ()).fetchone()
    return (value, called), not busy and not db.in_transaction()


def _kept(key: tuple, read: Callable[[], Any], keep: bool) -> Any:
    """The value kept under `key`, or `read()`'s, kept when `keep`."""
    with _stats_lock:
        if key in _stats:
            return _stats[key]
    value = read()
    if keep:
        with _stats_lock:
            if len(_stats) > 4096:
                _stats.clear()
            _stats[key] = value
    return value


def corpus(db) -> tuple[int, float]:
    """How many memories, and their mean token count: counted again only when a memory was
    added, deleted or its text rewritten since (the `memdeck_text_change` sequence moved)."""
    version, keep = text_state(db)

    def read() -> tuple[int, float]:
        total, mean = db._execute_cursor("SELECT count(*), avg(doclen)::float8 FROM memory", ()).fetchone()
        return total, mean or 0.0

    return _kept(("corpus", db.database, version), read, keep)


def project_size(db, project_id: int, state: tuple[tuple, bool] | None = None) -> int:
    """How many memories a project holds (every status): counted again only when a memory was
    added, deleted or its text rewritten since (`memdeck_text_change`), as `corpus` is. A count
    reads every row of the project (40 to 70 ms at 100,000 memories), once per prime otherwise.
    (memdeck never moves a memory to another project; a statement that does, from outside,
    is seen at the next change of the store's text.) `state`: `text_state`, if read already."""
    version, keep = state or text_state(db)
    return _kept(("project", db.database, version, project_id), lambda: db._execute_cursor(
        "SELECT count(*) FROM memory WHERE project_id = %s", (project_id,)).fetchone()[0], keep)


def _hits(db, lexeme: str, prefix: bool) -> int:
    version, keep = text_state(db)
    term = "'" + lexeme.replace("'", "''").replace("\\", "\\\\") + "'" + (":*" if prefix else "")
    return _kept(("hits", db.database, version, lexeme, prefix), lambda: db._execute_cursor(
        "SELECT count(*) FROM memory WHERE fts @@ %s::tsquery", (term,)).fetchone()[0], keep)



# A broad query's newest matches (`newest_matches`). Read from every match, they cost
# PostgreSQL a walk of the rowid index backwards testing each row's tsvector until `limit` match
# (`billing worker*`, in 1.2% of 1,000,000 memories: 159,000 rows for its newest 2,001, 85 ms),
# or the GIN index's whole bitmap and a fetch of every matching row to sort them (12,262 rows
# here, 50 ms). Restricted to the newest rows (`rowid >= start`) that should hold `limit`
# matches, the planner ANDs the GIN bitmap with the rowid index's range and fetches only the
# matches in it (30 ms), or for a word in most rows walks that range alone. The window is the
# rowids `limit` matches need at the planner's estimated share of matching rows, times
# `WINDOW_MARGIN`; past `WINDOW_MOST` of the rowids, the rowid range's bitmap costs more than
# the fetches it saves, and the whole is read.
WINDOW_MARGIN = 1.25
WINDOW_MOST = 1 / 3


def newest_window(estimate: float, first: int, last: int, limit: int) -> int | None:
    """The lowest rowid of the window a query's newest `limit` matches are read from, for a
    query the planner expects to match `estimate` rows of a table whose rowids run from `first`
    to `last`; None to read every match."""
    span = last - first + 1
    if estimate < limit:
        return None
    window = math.ceil(limit / estimate * span * WINDOW_MARGIN)
    return last - window + 1 if window <= span * WINDOW_MOST else None


def newest_matches(db, query: str, limit: int) -> list[int]:
    """The rowids of the newest `limit` matches of the FTS5 `query`, newest first: what
    `ORDER BY rowid DESC LIMIT` over every match gives, read from a window of the newest
    rows when the planner expects it to hold them (`newest_window`). A window that holds
    fewer is followed by the window below it, sized by the share of matches found, then by
    every older match: the answer never depends on the estimate, only its cost does."""
    tsquery = parse_fts(query, db).tsquery
    first, last = db._execute_cursor("SELECT min(rowid), max(rowid) FROM memory", ()).fetchone()
    if last is None:
        return []
    plan = db._execute_cursor("EXPLAIN (FORMAT JSON) SELECT 1 FROM memory WHERE fts @@ %s::tsquery",
                                (tsquery,)).fetchone()[0]
    estimate = plan[0]["Plan"]["Plan Rows"]
    rowids: list[int] = []
    top = None  # the windows read cover the rowids above `top` (None: none read yet)

    def newest(*bounds: tuple[str, int]) -> list[int]:
        where = "".join(f" AND rowid {op} %s" for op, _ in bounds)
        return [r[0] for r in db._execute_cursor(
            f"SELECT rowid FROM memory WHERE fts @@ %s::tsquery{where} ORDER BY rowid DESC LIMIT %s",
            (tsquery, *(value for _, value in bounds), limit - len(rowids)))]

    for _ in range(2):
        ceiling = last if top is None else top
        start = newest_window(estimate, first, ceiling, limit - len(rowids))
        if start is None:
            break
        found = newest((">=", start), *((("<=", top),) if top is not None else ()))
        rowids += found
        if len(rowids) == limit or start <= first:
            return rowids
        # The share of the window that matched, over the rowids below it.
        estimate = len(found) * (start - first) / (ceiling - start + 1)
        top = start - 1
    return rowids + (newest(("<=", top)) if top is not None else newest())


# -- a prime's task words (`store.retrieval.word_statistics.word_hits`) ------------------------------
#
# Each task word's first `cap` matches in the project, by rowid (what SQLite's FTS5 walk gives,
# oldest first). A word in one memory of six was found by reading the table until `cap`
# matches, some 6,000 rows a word (4-5 ms each at 100,000 memories); a GIN bitmap of its 16,000
# matches costs as much. Such words are read together: one walk of the rowid index over the
# rows that should hold `cap` matches of each, testing each row for every one of them
# (`_PASS_*` below). The rarer words are each a GIN lookup. Which words go where is decided
# from ANALYZE's share of memories holding each lexeme (`lexeme_shares`) and only changes the
# cost: every word's matches are the same either way.

# The relative costs of the choice, measured at 100,000 memories (EXPLAIN ANALYZE): a row of the
# pass (the index walk, 0.45 us), a word tested on it (0.2 us), a match fetched by a GIN bitmap
# (1.5 us).
_PASS_ROW = 1.0
_PASS_WORD = 0.45
_GIN_MATCH = 3.3
# The rows a pass reads, over those its rarest word should need (ANALYZE samples 30,000 rows).
PASS_MARGIN = 1.1


def lexeme_shares(db, state: tuple[tuple, bool] | None = None) -> dict[str, float] | None:
    """The share of memories holding each of the store's most common lexemes (ANALYZE's
    `most_common_elems` of `memory.fts`: every lexeme in 0.1% of the rows or more at the default
    statistics target), read again when the store's text changed; None before any ANALYZE, and
    for a user PostgreSQL shows no statistics of the table (a team member, under row-level
    security)."""
    version, keep = state or text_state(db)
    key = ("shares", db.database, version)
    with _stats_lock:
        if key in _stats:
            return _stats[key]
    row = db._execute_cursor(
        "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
        "WHERE schemaname = current_schema() AND tablename = 'memory' AND attname = 'fts'", ()).fetchone()
    if row is None or row[0] is None:
        return None  # not kept: an ANALYZE may come before the text next changes
    shares = dict(zip(row[0], row[1]))
    if keep:
        with _stats_lock:
            _stats[key] = shares
    return shares


def _expected_share(query: FtsQuery, shares: dict[str, float]) -> float:
    """The share of memories ANALYZE says hold every lexeme of a word (0: not among the common,
    or a prefix, whose lexemes it does not name)."""
    if not query.terms or any(prefix for _, prefix in query.terms):
        return 0.0
    return min(shares.get(lexeme, 0.0) for lexeme, _ in query.terms)


# The memories a sample reads to tell a word's share where ANALYZE's are not shown.
SAMPLE_ROWS = 3000


def word_shares(db, queries: Sequence[FtsQuery], state: tuple[tuple, bool]) -> list[float] | None:
    """The share of memories matching each query: from ANALYZE's statistics (`lexeme_shares`),
    or where PostgreSQL shows none to this user, each lexeme's counted in a sample of the
    table's pages (`SAMPLE_ROWS` rows, the same pages while the table is unchanged; each
    lexeme's share kept per version of the store's text) and a word's share its rarest lexeme's,
    as from ANALYZE's; None when the table has never been analyzed or vacuumed
    (the number of its rows unknown). Only the cost of reading the words' matches depends on
    these, not what is found."""
    shares = lexeme_shares(db, state)
    if shares is not None:
        return [_expected_share(query, shares) for query in queries]
    version, keep = state
    lexemes = list(dict.fromkeys(lexeme for query in queries for lexeme, prefix in query.terms if not prefix))
    keys = {lexeme: ("sampled", db.database, version, lexeme) for lexeme in lexemes}
    with _stats_lock:
        sampled = {lexeme: _stats[key] for lexeme, key in keys.items() if key in _stats}
    missing = [lexeme for lexeme in lexemes if lexeme not in sampled]
    if missing:
        rows = db._execute_cursor("SELECT reltuples FROM pg_class WHERE oid = 'memory'::regclass", ()).fetchone()[0]
        if rows is None or rows < 0:
            return None
        percent = 100.0 if rows <= SAMPLE_ROWS else SAMPLE_ROWS / rows * 100
        # The sample's lexemes counted once (`ts_stat`: the rows holding each), not a filter a
        # word over every sampled row: one statement of one size, its work the sample's.
        sample = f"SELECT fts FROM memory TABLESAMPLE SYSTEM ({float(percent)!r}) REPEATABLE (0)"
        total, held, counts = db._execute_cursor(
            f"SELECT (SELECT count(*) FROM ({sample}) AS s), coalesce(array_agg(word), '{{}}'), "
            "coalesce(array_agg(ndoc), '{}') FROM ts_stat(%s) WHERE word = ANY(%s::text[])",
            [sample, missing]).fetchone()
        counted = dict(zip(held, counts))
        for lexeme in missing:
            sampled[lexeme] = counted.get(lexeme, 0) / total if total else 0.0
        if keep:
            with _stats_lock:
                _stats.update((keys[lexeme], sampled[lexeme]) for lexeme in missing)
    # As from ANALYZE's statistics: a word's share is its rarest lexeme's (a prefix: none).
    return [_expected_share(query, sampled) for query in queries]


def passed_words(expected: Sequence[float], span: int, cap: int) -> list[int]:
    """Which words (their indexes) one pass over the rowid index reads, the others being GIN
    lookups: the most common words, as many as cost least. `expected`: each word's matches in
    the project; `span`: the rowids the project's rows are spread over."""
    order = sorted((i for i, e in enumerate(expected) if e > 0), key=lambda i: -expected[i])
    best, chosen = sum(_GIN_MATCH * e for e in expected), 0
    for n in range(1, len(order) + 1):
        rows = min(span, cap / (expected[order[n - 1]] / span) * PASS_MARGIN)
        cost = rows * (_PASS_ROW + _PASS_WORD * n) + sum(_GIN_MATCH * expected[i] for i in order[n:])
        if cost < best:
            best, chosen = cost, n
    return order[:chosen]


# Each word's matches (`word_matches`), kept while the store's text is unchanged, as `corpus`
# keeps its counts: a project's common words come back in task after task. At most this many
# ids in all (some 15 MB), the least recently used dropped first; those of an older version of
# a store's text when its new ones are kept.
MATCHES_KEPT = 200_000
_matches_lock = threading.Lock()
_matches: OrderedDict[tuple, tuple[str, ...]] = OrderedDict()
_matches_size = 0


def word_matches(db, project_id: int, queries: Sequence[FtsQuery], cap: int) -> list[set[str]] | None:
    """The ids of each query's first `cap` matches in the project by rowid (every match when it
    has fewer), read again only when the store's text changed; None when the store has no
    statistics yet (the caller reads each word alone)."""
    global _matches_size
    if not queries:
        return []
    state = text_state(db)
    version, keep = state
    keys = [("words", db.database, version, project_id, query.tsquery, cap) for query in queries]
    found: list[tuple[str, ...] | None] = [None] * len(queries)
    with _matches_lock:
        for n, key in enumerate(keys):
            if (kept := _matches.get(key)) is not None:
                _matches.move_to_end(key)
                found[n] = kept
    missing = [n for n, ids in enumerate(found) if ids is None]
    if missing:
        matches = _read_matches(db, project_id, [queries[n] for n in missing], cap, state)
        if matches is None:
            return None
        for n, ids in zip(missing, matches):
            found[n] = ids
        if keep:
            with _matches_lock:
                # What was read under an older text version of this store is of no more use.
                for key in [k for k in _matches if k[1] == db.database and k[2] != version]:
                    _matches_size -= len(_matches.pop(key)) + 1
                for n in missing:
                    if keys[n] not in _matches:
                        _matches[keys[n]] = found[n]
                        _matches_size += len(found[n]) + 1
                while _matches_size > MATCHES_KEPT and _matches:
                    _, dropped = _matches.popitem(last=False)
                    _matches_size -= len(dropped) + 1
    return [set(ids) for ids in found]


def _read_matches(db, project_id: int, queries: Sequence[FtsQuery], cap: int, state: tuple[tuple, bool]
                  ) -> list[tuple[str, ...]] | None:
    """`word_matches` read from the store: each query's ids in rowid order; None without
    statistics. `state`: `text_state`."""
    shares = word_shares(db, queries, state)
    if shares is None:
        return None
    first, last = db._execute_cursor("SELECT min(rowid), max(rowid) FROM memory", ()).fetchone()
    if last is None:
        return [() for _ in queries]
    span = last - first + 1
    size = project_size(db, project_id, state)
    expected = [share * size for share in shares]
    passed = passed_words(expected, span, cap)
    found: list[list[str]] = [[] for _ in queries]
    branches, args = [], []
    looked_up = [n for n in range(len(queries)) if n not in set(passed)]
    if looked_up:
        # Every other word a GIN lookup, all in one subquery run once a word: one statement of
        # one size however many words (a branch a word made PostgreSQL's work on the statement
        # grow with the square of their number: 1,500 words of a long prompt took 4 s). `rowid
        # + 0`: not the rowid index's order, which the planner would walk testing every row for
        # a word it expects in a few hundred (the bitmap of its matches, then sorted).
        branches.append("SELECT word.n, ARRAY(SELECT id FROM memory WHERE fts @@ word.query AND project_id = %s "
                        "ORDER BY rowid + 0 LIMIT %s) AS ids FROM unnest(%s::int[], %s::tsquery[]) AS word(n, query)")
        args += [project_id, cap, looked_up, [queries[n].tsquery for n in looked_up]]
    # Each word of the pass is tested on the rows that should hold its `cap` matches.
    read = {n: _range_end(first, last, cap, expected[n] / span) for n in passed}  # the last rowid read
    if passed:
        sql, pass_args = _pass(queries, {n: (cap, first, read[n]) for n in passed}, project_id)
        branches.append(sql)
        args += pass_args
    _read_into(db, found, " UNION ALL ".join(branches), args)
    # A word's range held fewer than `cap` of its matches: the rows after it, sized by the
    # share of its rows that matched, then the rest.
    for attempt in range(2):
        short = {}
        for n in passed:
            if len(found[n]) < cap and read[n] < last:
                rate = len(found[n]) / (read[n] - first + 1)
                end = last if attempt or not rate else _range_end(read[n] + 1, last, cap - len(found[n]), rate)
                short[n] = (cap - len(found[n]), read[n] + 1, end)
                read[n] = end
        if not short:
            break
        _read_into(db, found, *_pass(queries, short, project_id))
    return [tuple(ids) for ids in found]


def _read_into(db, found: list[list[str]], sql: str, args: list[Any]) -> None:
    """Each word's ids the statement gives (n, ids) added to `found`."""
    for n, ids in db._execute_cursor(sql, args):
        found[n] += ids or []


def _range_end(start: int, last: int, wanted: int, rate: float) -> int:
    """The last rowid of the range from `start` that should hold `wanted` matches of a word in
    `rate` of the rowids."""
    return min(last, start + math.ceil(wanted / rate * PASS_MARGIN) - 1)


def _pass(queries: Sequence[FtsQuery], words: dict[int, tuple[int, int, int]], project_id: int
          ) -> tuple[str, list[Any]]:
    """One walk of the project's rows in a range of rowids, testing each row for every word
    (`words`: a word's index -> how many of its matches are wanted, from which rowid, to which):
    each word's first matches by rowid in its range, a row a word (n, ids)."""
    start, end = min(s for _, s, _ in words.values()), max(e for _, _, e in words.values())
    columns, args = [], []
    for k, (n, (wanted, first, last)) in enumerate(words.items()):
        # The bounds first: the row's words are not looked at outside the word's range.
        bounds = ("rowid >= %s AND " if first > start else "") + ("rowid <= %s AND " if last < end else "")
        columns.append(f"(array_agg(id ORDER BY rowid) FILTER (WHERE {bounds}fts @@ %s::tsquery))"
                       f"[1:{int(wanted)}] AS w{k}")
        args += [*([first] if first > start else []), *([last] if last < end else []), queries[n].tsquery]
    values = ", ".join(f"({n}, found.w{k})" for k, n in enumerate(words))
    sql = (f"SELECT word.n, word.ids FROM (SELECT {', '.join(columns)} FROM memory "
           "WHERE rowid BETWEEN %s AND %s AND project_id = %s) AS found, "
           f"LATERAL (VALUES {values}) AS word(n, ids)")
    return sql, args + [start, end, project_id]
