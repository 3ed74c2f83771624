"""A store on PostgreSQL: connecting by URL (and refusing clearly when that cannot be done), the
same ranking as on SQLite, and what is different about a server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.cli_support import run_in_process
from tests.data_support import SHARED, needs_shared
from store import Config, Store
from store.backends.postgres import is_url, location, redacted, with_database
from store.backends.postgres_search import parse_fts


def test_only_postgresql_urls_are_urls(tmp_path):
    assert is_url("postgresql://me@db.example:5432/team")
    assert is_url("postgres://me@/team?host=/run/postgresql&port=5433")
    assert location("postgresql://me@/team?host=/run/pg") == "postgresql://me@/team?host=/run/pg"
    assert location(str(tmp_path / "x.db")) == tmp_path / "x.db"
    assert not is_url("postgresql.db") and not is_url("sqlite:///x.db")
    assert redacted("postgresql://me:secret@host/db") == "postgresql://me:***@host/db"
    assert with_database("postgresql://me@/a?host=/run/pg&port=5", "b") == "postgresql://me@/b?host=/run/pg&port=5"


def test_fts5_queries_become_tsqueries_over_stems():
    assert parse_fts('"api" AND "web"*').tsquery == "'api' & 'web':*"
    assert parse_fts('"a" OR "b"').tsquery == "'a' | 'b'"
    assert parse_fts('{title content tags}: ("x")').tsquery == "( 'x':ACB )"
    assert parse_fts('"_"').tsquery == "'_'"  # a term with no word in it matches nothing


def test_a_list_of_rowids_is_sent_as_one_array():
    """A broad search's newest 2,001 rowids are one array parameter on PostgreSQL; one mark each on
    SQLite."""
    from store.backends.spelling import POSTGRES, SQLITE

    among = POSTGRES.in_integers("memory.rowid", [9, 8, 7])
    assert among.sql == "memory.rowid = ANY(%s::bigint[])" and among.params == ([9, 8, 7],)
    among = SQLITE.in_integers("rowid", [5, 6])
    assert among.sql == "rowid IN (?, ?)" and among.params == (5, 6)


def _run(argv, cwd, env_extra=None, pre=""):
    env = {**os.environ, **(env_extra or {})}
    code = f"import sys; {pre}from tui.cli.main import main; sys.exit(main({argv!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)


def test_a_url_without_psycopg_says_what_to_install_and_makes_no_file(tmp_path):
    # The extra missing: psycopg cannot be imported.
    result = _run(["--db", "postgresql://me@/team?host=/nowhere&port=5432", "list"], tmp_path,
                  pre="sys.modules['psycopg'] = None; ")
    assert result.returncode != 0
    assert "memdeck[postgres]" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_server_is_a_clear_error_and_no_file_is_made(tmp_path):
    pytest.importorskip("psycopg")
    result = _run(["list"], tmp_path, {"MEMDECK_DB": f"postgresql://me@/team?host={tmp_path}&port=1"})
    assert result.returncode != 0
    assert "cannot connect to the PostgreSQL server" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_cli_works_on_a_server_by_socket_url(postgres_server, tmp_path):
    url = postgres_server.empty_database()  # memdeck migrates it on first use
    env = {**os.environ, "MEMDECK_DB": url}
    added = run_in_process(["add", "Retry the websocket with backoff", "--type", "pattern"], env=env, cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    found = run_in_process(["search", "websockets", "--json"], env=env, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert [m["title"] for m in json.loads(found.stdout)] == ["Retry the websocket with backoff"]
    assert list(tmp_path.iterdir()) == []


def test_bm25_scores_are_the_same_as_on_sqlite(postgres_server, tmp_path):
    texts = ["Websocket reconnects need exponential backoff", "Retry uploads with a budget of three retries",
             "The websocket server drops idle clients", "Billing exports run nightly"]
    scores = {}
    for name, where in (("sqlite", tmp_path / "s.db"), ("postgres", postgres_server.fresh_database())):
        from store.browse.search import full_text

        with Store.open(where, project="demo", config=Config.defaults()) as store:
            for text in texts:
                store.add(text, type="fact")
            scores[name] = [(h.memory.title, round(h.score, 9)) for h in full_text(store, "websocket retries",
                                                                                   mode="any")]
    assert scores["postgres"] == scores["sqlite"]
    assert len(scores["sqlite"]) == 3


@needs_shared
@pytest.mark.slow
def test_eval_on_postgres_scores_within_002_of_sqlite(postgres_server):
    from store.evaluation.retrieval import run_eval

    path = SHARED / "eval" / "dev-retrieval.yaml"
    on_sqlite = run_eval(path, rankers=("memdeck", "bm25")).results
    on_postgres = run_eval(path, rankers=("memdeck", "bm25"), server=postgres_server.url("postgres")).results
    for ranker in ("memdeck", "bm25"):
        assert abs(on_postgres[ranker]["ndcg@8"] - on_sqlite[ranker]["ndcg@8"]) <= 0.02
    # Pooled, every project holds every corpus: the distractors' ids fit a PostgreSQL id (32).
    pooled = {store: run_eval(path, rankers=("memdeck",), server=server, pool=True).results["memdeck"]
              for store, server in (("sqlite", None), ("postgres", postgres_server.url("postgres")))}
    assert abs(pooled["postgres"]["ndcg@8"] - pooled["sqlite"]["ndcg@8"]) <= 0.02


def test_every_migration_has_a_postgresql_version():
    from store.backends.migrations import MIGRATIONS
    from store.backends.postgres_schema import STATEMENTS

    assert [m.version for m in MIGRATIONS if m.version not in STATEMENTS] == []


def test_a_new_database_is_migrated_once_and_versioned(postgres_server):
    from store.backends.opening import connect
    from store.backends.migrations import MIGRATIONS, SCHEMA_VERSION

    url = postgres_server.empty_database()
    for _ in range(2):
        db, backup = connect(url)
        assert backup is None  # a server keeps its own backups
        rows = db.execute_sql("SELECT version, name FROM schema_migration ORDER BY version").fetchall()
        db.close()
    assert rows == [(m.version, m.name) for m in MIGRATIONS]
    assert rows[-1][0] == SCHEMA_VERSION


def test_a_database_of_another_program_or_a_newer_memdeck_is_left_untouched(postgres_server):
    import psycopg

    from store.backends.opening import connect
    from store.engine.errors import StoreError

    other = postgres_server.empty_database()
    with psycopg.connect(other, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(StoreError, match="another program"):
        connect(other)
    newer = postgres_server.fresh_database()
    with psycopg.connect(newer, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migration VALUES (999, 'from the future', 0)")
    with pytest.raises(StoreError, match="newer memdeck"):
        connect(newer)


def test_a_user_who_may_not_create_the_unaccent_extension_is_told_what_to_do(postgres_server):
    # Migration 11 needs `unaccent`: a user with tables of their own but no CREATE on the
    # database cannot create even a trusted extension. The message says so; nothing is written.
    import psycopg

    from store.backends.opening import connect
    from store.engine.errors import StoreError
    from store.backends.migrations import SCHEMA_VERSION

    url = postgres_server.empty_database()
    role = f"limited_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT CREATE ON SCHEMA public TO {role}")
    limited = url.replace("postgresql://postgres@", f"postgresql://{role}@")
    with pytest.raises(StoreError, match=r"could not create PostgreSQL's `unaccent` extension .*"
                                         r"CREATE EXTENSION unaccent.*left untouched"):
        connect(limited)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('schema_migration'), to_regclass('memory')").fetchone() == (None, None)
    # Once the owner has created it, the same user migrates the store.
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION unaccent")
    db, _ = connect(limited)
    try:
        assert db.execute_sql("SELECT max(version) FROM schema_migration").fetchone()[0] == SCHEMA_VERSION
    finally:
        db.close()


def test_doctor_checks_a_server_store_and_repairs_what_is_safe(postgres_server, tmp_path):
    import psycopg

    url = postgres_server.fresh_database()
    with Store.open(url, project="demo", config=Config.defaults()) as store:
        kept = store.add("Invoices round half to even", type="convention").memory
    env = {**os.environ, "MEMDECK_DB": url}

    def doctor(*args):
        return run_in_process(["doctor", "--json", *args], env=env, cwd=tmp_path)

    sound = doctor()
    assert sound.returncode == 0, sound.stderr
    assert {f["check"] for f in json.loads(sound.stdout)["findings"]} >= {"connection", "schema", "fts", "values"}
    with psycopg.connect(url, autocommit=True) as conn:  # another program, its triggers off
        conn.execute("SET session_replication_role = replica")
        conn.execute("UPDATE memory SET fts = '', confidence = 7 WHERE id = %s", (kept.id,))
    found = doctor()
    assert found.returncode == 1
    bad = {f["check"] for f in json.loads(found.stdout)["findings"] if not f["ok"]}
    assert bad == {"fts", "values"}
    fixed = doctor("--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    with Store.open(url, project="demo", config=Config.defaults()) as store:
        from store.browse.search import full_text

        assert [h.memory.id for h in full_text(store, "invoices")] == [kept.id]
        assert store.get(kept.id).confidence == 1.0


def test_the_store_size_for_ranking_follows_every_change_of_text(postgres_server, tmp_path):
    # BM25's corpus size and mean row length on PostgreSQL are counted again only when the
    # `memdeck_text_change` sequence moved (migration 11): every add, delete and rewrite of text
    # moves it, and the counts read afterwards are the rows'.
    from store.backends import postgres_search as postgres
    from store.interop.transfer import import_file

    url = postgres_server.fresh_database()

    def version(store):
        return postgres.text_version(store.db)

    def corpus(store):
        return tuple(store.db.execute_sql("SELECT count(*), avg(doclen)::float8 FROM memory").fetchone())

    with Store.open(url, project="demo", config=Config.defaults()) as store:
        first = store.add("Invoices round half to even", type="convention").memory
        second = store.add("The webhook queue retries three times", type="fact").memory
        assert postgres.corpus(store.db) == corpus(store)
        before = version(store)
        store.db.execute_sql("UPDATE memory SET confidence = 0.5, use_count = use_count + 1")  # not text
        assert version(store) == before
        store.update(first.id, first, content="Invoices round half to even, never down, in every currency")
        assert version(store) != before
        assert postgres.corpus(store.db) == corpus(store)
        memories = [{"id": f"mem-1700000000-{i:06x}", "type": "fact", "content": f"Imported fact number {i}"}
                    for i in range(6000)]  # a large import: COPY, its own path
        source = tmp_path / "export.json"
        source.write_text(json.dumps({"format": "memdeck", "version": 1, "project": "demo", "memories": memories}))
        import_file(store, str(source))
        assert store.db.execute_sql("SELECT count(*) FROM memory").fetchone()[0] == 6002
        store.db.execute_sql("DELETE FROM memory WHERE id = %s", (second.id,))
        assert store.db.execute_sql("SELECT count(*) FROM memory").fetchone()[0] == 6001
        assert postgres.corpus(store.db) == corpus(store)


def psycopg_connect(url: str):
    import psycopg

    return psycopg.connect(url, autocommit=True)


def test_a_team_member_who_does_not_own_the_tables_imports_in_bulk(postgres_server, tmp_path):
    # Disabling a trigger and rebuilding an index need the table's owner: a user granted rights
    # to read and write imports through COPY alone, and the store ends as sound.
    from store.interop import import_writes as bulk
    from store.interop.transfer import import_file
    from store.browse.search import search

    url = postgres_server.fresh_database()
    role = f"member_{os.getpid()}"
    with psycopg_connect(url) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
        conn.execute(f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    member = url.replace("postgresql://postgres@", f"postgresql://{role}@")
    count = bulk.FTS_AT_END_FROM + 10
    memories = [{"id": f"mem-1700000000-{i:06x}", "type": "fact", "content": f"Imported fact number {i}"}
                for i in range(count)]
    memories[42]["content"] = "The wombat queue drains at noon"
    source = tmp_path / "export.json"
    source.write_text(json.dumps({"format": "memdeck", "version": 1, "project": "demo", "memories": memories}))
    with Store.open(member, project="demo", config=Config.defaults()) as store:
        assert len(import_file(store, str(source)).added) == count
        assert [h.memory.id for h in search(store, "wombat", fuzzy=False)] == ["mem-1700000000-00002a"]
        assert store.db.execute_sql("SELECT count(*) FROM memory_pending").fetchone()[0] == 0
        assert store.db.execute_sql("SELECT count(*) FROM memory").fetchone()[0] == count
