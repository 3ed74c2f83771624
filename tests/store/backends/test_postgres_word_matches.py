"""A prime's task words on PostgreSQL (`store.backends.postgres_search.word_matches`): each word's
first matches in the project by rowid, as SQLite's full-text walk gives them, whether a word is
read by the one pass over the rowid index (the common words) or by a GIN lookup, whatever the
rows' physical order, and when the pass's first range holds too few."""

from __future__ import annotations

import pytest

from store import Config, Store
from store.backends import postgres_search
from store.retrieval.word_statistics import word_hits

psycopg = pytest.importorskip("psycopg")

WORDS = ["webhook", "queue", "retries", "ledger", "nowhere", "queue webhook"]


def _fill(store: Store) -> None:
    """Another project's memories first (rowids the project's words are not in), then the
    project's: `queue` in every one, `webhook` in every other, `retry` in one of five, `ledger`
    in three."""
    for i in range(40):
        store.add(f"Other project note {i} about a cache", type="context", project="other",
                  memory_id=f"other-{i:03d}", reinforce=False)
    for i in range(120):
        words = ["queue"] + (["webhook"] if i % 2 else []) + (["retries"] if i % 5 == 0 else []) \
            + (["ledger"] if i in (7, 70, 110) else []) + (["billing"] if i % 3 == 0 else [])
        store.add(f"Note {i}: the {' '.join(words)} of the worker", type="context", project="mine",
                  memory_id=f"mem-{i:03d}", reinforce=False)


@pytest.fixture
def stores(tmp_path, postgres_server):
    config = Config.defaults().with_overrides({"injection.semantic": False})
    with Store.open(tmp_path / "lite.db", project="mine", config=config) as lite, \
            Store.open(postgres_server.fresh_database(), project="mine", config=config) as pg:
        _fill(lite)
        _fill(pg)
        # The project's first rows rewritten: their new versions sit after the others in the
        # table, so the table's physical order is no longer the rowids'.
        pg.db.execute_sql("UPDATE memory SET confidence = confidence WHERE id < 'mem-030'")
        yield lite, pg


def _analyzed(pg: Store) -> None:
    pg.db.execute_sql("ANALYZE memory")
    postgres_search._stats.clear()
    assert postgres_search.lexeme_shares(pg.db), "ANALYZE gave no statistics of the words"


def _passes(monkeypatch, seen=lambda queries, words: [queries[n].tsquery for n in words]) -> list:
    """What each pass over the rowid index is asked (by default its words' tsqueries), in order."""
    passes: list = []
    real = postgres_search._pass

    def recorded(queries, words, project_id):
        passes.append(seen(queries, words))
        return real(queries, words, project_id)

    monkeypatch.setattr(postgres_search, "_pass", recorded)
    return passes


@pytest.mark.parametrize("cap", [5, 30, 1000])
def test_each_words_matches_are_the_first_by_rowid_as_on_sqlite(stores, cap, monkeypatch):
    lite, pg = stores
    _analyzed(pg)
    passes = _passes(monkeypatch)
    expected = word_hits(lite, lite.project_id("mine"), WORDS, cap)
    found = word_hits(pg, pg.project_id("mine"), WORDS, cap)
    assert found == expected
    assert len(expected["queue"]) == min(cap, 120) and len(expected["ledger"]) == 3
    if cap < 60:  # the common words were read by the pass, not one by one
        assert passes and "'queue'" in passes[0]


def test_a_pass_whose_first_range_holds_too_few_reads_on(stores, monkeypatch):
    lite, pg = stores
    _analyzed(pg)
    # The other project's rows come first: a range sized by the words' share of the whole
    # table holds none of the project's matches, and the pass goes on after it.
    ranges = _passes(monkeypatch, lambda queries, words: {
        queries[n].tsquery: (start, end) for n, (_, start, end) in words.items()})
    expected = word_hits(lite, lite.project_id("mine"), ["queue", "webhook"], 10)
    assert word_hits(pg, pg.project_id("mine"), ["queue", "webhook"], 10) == expected
    assert len(ranges) >= 2
    for word, (start, _) in ranges[1].items():  # from the row after the word's first range
        assert start == ranges[0][word][1] + 1


def test_without_statistics_the_words_are_read_one_by_one_with_the_same_matches(stores):
    lite, pg = stores
    postgres_search._stats.clear()
    if postgres_search.lexeme_shares(pg.db) is not None:
        pytest.skip("autovacuum analyzed the table already")
    for cap in (5, 1000):
        assert word_hits(pg, pg.project_id("mine"), ["ledger", "nowhere"], cap) == \
            word_hits(lite, lite.project_id("mine"), ["ledger", "nowhere"], cap)


def test_the_pass_takes_the_common_words_that_cost_less_together():
    # 100,000 rows: six words in one row of six and one in every row go together; a word in
    # 3% of the rows is cheaper as a GIN lookup than as the range its 1,000 matches need.
    expected = [16_000] * 6 + [100_000, 3_000, 700, 0]
    assert sorted(postgres_search.passed_words(expected, 100_000, 1000)) == [0, 1, 2, 3, 4, 5, 6]
    assert postgres_search.passed_words([700, 50, 0], 100_000, 1000) == []


def _statements(pg: Store, monkeypatch) -> list[str]:
    """The statements `pg` sends from now on."""
    sent: list[str] = []
    real = pg.db._execute_cursor

    def recorded(sql, params, *args, **kwargs):
        sent.append(sql)
        return real(sql, params, *args, **kwargs)

    monkeypatch.setattr(pg.db, "_execute_cursor", recorded)
    return sent


def test_a_words_matches_are_read_again_only_when_the_text_changed(stores, monkeypatch):
    lite, pg = stores
    _analyzed(pg)
    mine = pg.project_id("mine")
    first = word_hits(pg, mine, ["queue", "ledger"], 1000)
    sent = _statements(pg, monkeypatch)
    assert word_hits(pg, mine, ["queue", "ledger"], 1000) == first
    assert not [sql for sql in sent if "fts @@" in sql], "the kept matches were read again"
    for store in (lite, pg):
        store.add("A ledger of the queue", type="context", project="mine", memory_id="mem-new", reinforce=False)
    again = word_hits(pg, mine, ["queue", "ledger"], 1000)
    assert "mem-new" in again["ledger"] and "mem-new" in again["queue"]
    assert again == word_hits(lite, lite.project_id("mine"), ["queue", "ledger"], 1000)
    # Only the matches of the store's text as it is now are kept.
    now = postgres_search.text_version(pg.db)
    assert {key[2] for key in postgres_search._matches if key[1] == pg.db.database} == {now}


def test_what_is_read_while_a_write_is_open_is_not_kept(stores):
    # The writer's transaction got its id after the last one ended: the snapshot's list of
    # open transactions does not name it, its lock does.
    lite, pg = stores
    _analyzed(pg)
    mine = pg.project_id("mine")
    size = postgres_search.project_size(pg.db, mine)
    with Store.open(pg.backend.location, project="mine", config=pg.config) as writer:
        with writer.transaction():
            writer.add("Another ledger entry", type="context", project="mine", memory_id="mem-late",
                       reinforce=False)
            # The store's text version has moved already; the row is not committed yet.
            assert "mem-late" not in word_hits(pg, mine, ["ledger"], 1000)["ledger"]
            assert postgres_search.project_size(pg.db, mine) == size
    # Committed, with the text version where it was: what was read meanwhile was not kept.
    assert "mem-late" in word_hits(pg, mine, ["ledger"], 1000)["ledger"]
    assert postgres_search.project_size(pg.db, mine) == size + 1


def test_a_team_member_shown_no_statistics_gets_the_same_matches_from_a_sample(stores, monkeypatch):
    # Under row-level security PostgreSQL shows a member none of the table's statistics: the
    # words' shares come from a sample of the table, and the common words still go in one pass.
    from store.backends import postgres_roles

    lite, pg = stores
    postgres_roles.install(pg.db)
    postgres_roles.grant(pg.db, "ana", "reader")  # a name every team test gives the same role: roles are the server's, not the database's
    _analyzed(pg)
    passes = _passes(monkeypatch)
    member_url = pg.backend.location.replace("postgres@", "ana@", 1)
    with Store.open(member_url, project="mine", config=pg.config) as member:
        assert postgres_search.lexeme_shares(member.db) is None
        for cap in (5, 1000):
            assert word_hits(member, member.project_id("mine"), WORDS, cap) == \
                word_hits(lite, lite.project_id("mine"), WORDS, cap)
    assert passes and "'queue'" in passes[0]
