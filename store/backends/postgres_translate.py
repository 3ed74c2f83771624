"""SQLite-dialect SQL rewritten for PostgreSQL: what is left of it while call sites move to the
back-end's fragments (`store.backends.base.Backend`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from store.backends.postgres_search import bm25_args, parse_fts
from store.engine.errors import StoreError


class Cursor:
    """A psycopg cursor whose `executemany` takes SQLite-dialect SQL (memdeck's bulk writes)."""

    def __init__(self, cursor) -> None:
        self._cursor = cursor

    def executemany(self, sql, rows):
        rows = list(rows)
        translated = translate(sql)
        if translated.match_params:
            raise StoreError("a full-text match cannot be run for many rows at once")
        return self._cursor.executemany(translated.sql, rows)

    def __getattr__(self, name):
        return getattr(self._cursor, name)

    def __iter__(self):
        return iter(self._cursor)


class Inserted:
    """The cursor of an INSERT ... RETURNING id, with that id as `lastrowid` (as SQLite's)."""

    def __init__(self, cursor) -> None:
        row = cursor.fetchone()
        self.lastrowid = row[0] if row else None
        self.rowcount = cursor.rowcount
        self._cursor = cursor

    def __getattr__(self, name):
        return getattr(self._cursor, name)


# SQLite's upkeep of its FTS5 index and connection, as `store.backends.sqlite` writes it, and what each is on
# PostgreSQL. A large import (`store.interop.import_writes`) drops FTS5's insert trigger and indexes its rows in one
# statement at the end: here nothing is suspended, since each row's tsvector is computed once by a
# trigger on the row being written (no second write, unlike FTS5's index table), the GIN index
# takes many new rows through its pending list, and dropping the trigger would take a lock every
# reader waits on. A pragma set for a while (a larger page cache) has no meaning on a server.
_NOTHING = "SELECT 1 WHERE FALSE"
_MAINTENANCE = (
    (re.compile(r"\s*DROP TRIGGER memory_fts_insert\s*$"), _NOTHING),
    (re.compile(r"\s*CREATE TRIGGER memory_fts_insert\b"), _NOTHING),
    # The pending mark of a new memory stays too: the bulk path clears the marks it wrote words for.
    (re.compile(r"\s*DROP TRIGGER memory_text_added\s*$"), _NOTHING),
    (re.compile(r"\s*CREATE TRIGGER memory_text_added AFTER INSERT ON memory BEGIN\b"), _NOTHING),
    (re.compile(r"\s*INSERT INTO memory_fts\s*\(\s*rowid\b"), _NOTHING),
    # Rebuilding FTS5's index: the trigger computes every row's tsvector again.
    (re.compile(r"\s*INSERT INTO memory_fts\s*\(\s*memory_fts\s*\)\s*VALUES\s*\('rebuild'\)\s*$"),
     "UPDATE memory SET words = words"),
    (re.compile(r"\s*PRAGMA \w+\s*=", re.I), _NOTHING),
)


def sqlite_maintenance(sql: str) -> str | None:
    """PostgreSQL's statement for one of SQLite's upkeep statements (a no-op for most), else None."""
    for pattern, replacement in _MAINTENANCE:
        if pattern.match(sql):
            return replacement
    return None


class Translated:
    def __init__(self, sql: str, match_params: tuple[int, ...], bm25: tuple[tuple[int, tuple[float, ...]], ...],
                 arrays: tuple[tuple[int, int], ...] = ()):
        self.sql = sql
        self.match_params = match_params  # indexes (in the original) of FTS5 query parameters
        self.bm25 = bm25  # (index of the parameter list position it takes, column weights)
        self.arrays = arrays  # (index, count) of the parameters of a `rowid IN (...)`, sent as one array


_FTS_JOIN = re.compile(r"FROM memory_fts\s+(?:CROSS\s+)?JOIN memory ON memory\.rowid = memory_fts\.rowid", re.I)
_BM25 = re.compile(r"bm25\(memory_fts(?:,\s*([-\d.eE]+)\s*,\s*([-\d.eE]+)\s*,\s*([-\d.eE]+)(?:\s*,\s*([-\d.eE]+))?)?\)")


@lru_cache(maxsize=512)
def translate(sql: str) -> Translated:
    s = sql
    s = _FTS_JOIN.sub("FROM memory", s)
    s = re.sub(r"SELECT rowid FROM memory_fts WHERE memory_fts MATCH \?", "SELECT memory.rowid FROM memory "
               "WHERE memory_fts MATCH ?", s)
    s = s.replace("FROM memory_fts WHERE", "FROM memory WHERE")
    s = s.replace("memory_fts.rowid", "memory.rowid")
    # SQLite's CROSS JOIN with ON is a join in a fixed order; PostgreSQL plans the order itself.
    s = re.sub(r"\bCROSS JOIN (\w+) ON\b", r"JOIN \1 ON", s)
    s = s.replace("FROM memory NOT INDEXED ", "FROM memory ")  # SQLite's plan hint
    s = re.sub(r"ORDER BY rowid DESC", "ORDER BY memory.rowid DESC", s)
    # A subquery in FROM needs a name on PostgreSQL.
    s = re.sub(r"(LIMIT \?)\)\s*$", r"\1) AS sub", s)
    s = re.sub(r"\bjson_each\(([\w.]+)\) AS (\w+)", r"json_array_elements_text(\1::json) AS \2(value)", s)
    s = re.sub(r"\bjson_each\(([\w.]+)\)", r"json_array_elements_text(\1::json) AS json_each(value)", s)
    s = s.replace("? GLOB rtrim(ref.value, '/') || '/*'", "memdeck_glob(?, rtrim(ref.value, '/') || '/*')")
    s = s.replace("ref.value GLOB ? || '/*'", "memdeck_glob(ref.value, ? || '/*')")
    s = s.replace("? GLOB ref.value", "memdeck_glob(?, ref.value)")
    s = re.sub(r"([\w.]+) COLLATE NOCASE", r"lower(\1)", s)
    s = re.sub(r"MAX\(COALESCE\(ended_at, \?\), \?, started_at\)", "GREATEST(COALESCE(ended_at, ?), ?, started_at)", s)
    s = re.sub(r"PRAGMA data_version", "SELECT memdeck_changes()", s)
    # Scalar MIN/MAX of several values; SQLite's CAST to INTEGER truncates, PostgreSQL's rounds.
    s = re.sub(r"MIN\(MAX\((.*?), ([^,()]+)\), ([^,()]+)\)", r"LEAST(GREATEST(\1, \2), \3)", s)
    s = re.sub(r"CAST\(([^()]*) AS INTEGER\)", r"trunc(\1)::integer", s)
    # A condition counted as 0 or 1, and a bare 1 or 0 as a condition.
    s = re.sub(r"SUM\((\w+ IN \([^()]*\))\)", r"SUM((\1)::int)", s)
    s = re.sub(r"\b(WHERE|AND|OR) ([01])(?=\s+(?:GROUP|ORDER|LIMIT|AND|OR)\b|\s*\)|\s*$)",
               lambda m: f"{m.group(1)} {'TRUE' if m.group(2) == '1' else 'FALSE'}", s)
    # Rebuilding FTS5's index: the trigger computes each row's tsvector again.
    s = s.replace("INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')", "UPDATE memory SET words = words")
    s = s.replace("total_changes()", "memdeck_changes()")
    if re.match(r"\s*INSERT OR IGNORE INTO", s, re.I):
        s = re.sub(r"INSERT OR IGNORE INTO", "INSERT INTO", s, count=1, flags=re.I) + " ON CONFLICT DO NOTHING"
    elif m := re.match(r"\s*INSERT OR REPLACE INTO (\w+) \(([^)]*)\)", s, re.I):
        table, columns = m.group(1), [c.strip() for c in m.group(2).split(",")]
        key = _KEYS.get(table, columns[0])
        rest = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c != key)
        s = re.sub(r"INSERT OR REPLACE INTO", "INSERT INTO", s, count=1, flags=re.I)
        s += f" ON CONFLICT ({key}) DO UPDATE SET {rest}"
    # SQLite's empty blob literal (PostgreSQL reads X'' as a bit string).
    s = s.replace("X''", "''::bytea")
    if m := re.match(r"\s*INSERT INTO (\w+) ", s):
        if m.group(1) in _RETURNING and "ON CONFLICT" not in s:
            s += f" RETURNING {_RETURNING[m.group(1)]}"  # the cursor's `lastrowid`
    # Walk the parameters: find which are FTS5 queries and where bm25 ranks go.
    out: list[str] = []
    match_params: list[int] = []
    bm25: list[tuple[int, tuple[float, ...]]] = []
    index = 0
    pos = 0
    # `%s` is a parameter too: what SQL written with the connection's own mark (`db.param`) uses.
    # A list of rowids (a broad search's newest 2,001 matches) goes as one array parameter: binding
    # and planning 2,001 parameters cost more than the query (5 ms against 2 ms).
    token = re.compile(r"\?|%s|%|'(?:[^']|'')*'|memory_fts MATCH \?|" + _ROWIDS_IN.pattern + "|" + _BM25.pattern)
    arrays: list[tuple[int, int]] = []
    for m in token.finditer(s):
        out.append(s[pos:m.start()])
        text = m.group(0)
        if _ROWIDS_IN.fullmatch(text):
            count = text.count("?")
            out.append(text[:text.index(" IN")] + " = ANY(%s::bigint[])")
            arrays.append((index, count))
            index += count
        elif text in ("?", "%s"):
            out.append("%s")
            index += 1
        elif text == "%":
            out.append("%%")
        elif text.startswith("'"):
            out.append(text.replace("%", "%%"))
        elif text.startswith("memory_fts MATCH"):
            out.append("memory.fts @@ %s::tsquery")
            match_params.append(index)
            index += 1
        else:  # bm25(...)
            weights = tuple(float(w) if w is not None else 1.0 for w in m.groups()[-4:])
            out.append("memdeck_bm25(memory.fts, memory.doclen, %s::text[], %s::int[], %s::float8[], "
                       "%s::float8[], %s::float8)")
            bm25.append((index, weights))
        pos = m.end()
    out.append(s[pos:])
    return Translated("".join(out), tuple(match_params), tuple(bm25), tuple(arrays))


_ROWIDS_IN = re.compile(r"\b(?:memory\.)?rowid IN \(\?(?:\s*,\s*\?)*\)")


_KEYS = {"memory_vector": "memory_id"}
# Tables whose new row's id memdeck reads as `cursor.lastrowid` after a plain INSERT.
_RETURNING = {"vector_block": "id"}


def translate_call(db, sql: str, params) -> tuple[str, list]:
    translated = translate(sql)
    params = list(params or ())
    if not translated.match_params and not translated.arrays:
        return translated.sql, params
    queries = {i: parse_fts(params[i], db) for i in translated.match_params}
    # bm25 ranks come before the MATCH they rank: each takes the terms of the first match.
    query = queries[translated.match_params[0]] if queries else None
    out: list[Any] = []
    bm25 = dict(translated.bm25)
    arrays = dict(translated.arrays)
    i = 0
    while i <= len(params):
        if i in bm25:
            out.extend(bm25_args(db, query, bm25[i]))
        if i in arrays:
            out.append(params[i:i + arrays[i]])
            i += arrays[i]
            continue
        if i < len(params):
            out.append(queries[i].tsquery if i in queries else params[i])
        i += 1
    return translated.sql, out

