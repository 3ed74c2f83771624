"""The SQL of a prime's word statistics (`store.retrieval.word_statistics`): each of the task's
words' first matches among a project's memories (or among given memories), by full-text queries.
A back-end that finds them its own way answers first (`Backend.word_matches`); this is the way
of every back-end else."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from store.engine.text import quote_fts_term

if TYPE_CHECKING:
    from store.engine.ports import Backend

# Words searched by one statement (`first_matches`): SQLite takes at most 500 branches of a UNION.
WORDS_A_STATEMENT = 50


def first_matches(backend: "Backend", project_id: int | None, words: Sequence[str], cap: int,
                  only: Sequence[str] | None = None) -> dict[str, set[str]]:
    """Each word's first `cap` matching memories (the index's stemming) of the project, among
    `only` when given (wherever they are when the project is None). Matches first: SQLite walks
    the word's matches and looks each memory up, never every memory of the project for the word."""
    b = backend
    p = b.param
    hits: dict[str, set[str]] = {word: set() for word in words}
    unique = list(hits)
    # Where the back-end answers faster so (PostgreSQL: one round trip, not one a word), every
    # word's matches in one statement: a branch a word, each with its own LIMIT and the plan a
    # statement of that word alone would have, a few dozen words a statement. SQLite answers
    # each word's statement faster alone (4 ms for ten words, against 6 in one statement).
    step = WORDS_A_STATEMENT if b.words_in_one_statement else 1
    for start in range(0, len(unique), step):
        branches, args = [], []
        for n, word in enumerate(unique[start:start + step], start):
            match = b.fts_match(quote_fts_term(word))
            columns = "memory.id" if step == 1 else f"{n} AS word, memory.id AS id"
            sql = f"SELECT {columns} FROM {b.fts_source(matches_first=True)} WHERE {match.sql}"
            args.extend(match.params)
            if project_id is not None:
                sql += f" AND memory.project_id = {p}"
                args.append(project_id)
            if only is not None:
                sql += f" AND memory.id IN ({', '.join([p] * len(only))})"
                args.extend(only)
            branches.append(f"SELECT word, id FROM ({sql} LIMIT {p}) AS word{n}")
            args.append(cap)
        if step == 1:  # the rows straight into the word's set (a thousand a common word)
            hits[unique[start]] = {row[0] for row in b.db.execute_sql(f"{sql} LIMIT {p}", args)}
            continue
        for n, memory_id in b.db.execute_sql(" UNION ALL ".join(branches), args):
            hits[unique[n]].add(memory_id)
    return hits
