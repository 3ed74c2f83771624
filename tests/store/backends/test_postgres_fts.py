"""A large import's tsvectors built in Python (`store.backends.postgres_fts`) are, byte for byte, what the
`memdeck_fts_row` trigger computes: on real memory text, on fuzzed text (odd Unicode, digit and
letter mixes, over-long words, lexemes past 255 positions, texts past position 16383), and through
a real import against writing row by row."""

from __future__ import annotations

import json
import random

import pytest

from store import Config, Store
from store.interop import import_writes as bulk
from store.index.identifiers import index_words
from store.interop.transfer import import_file
from store.backends import postgres_fts
from tests.data_support import DATA, FIXTURES, needs_shared

psycopg = pytest.importorskip("psycopg")

# Characters where Python's and PostgreSQL's ideas of letters, digits and case may part.
ODD = ("İıŞßẞﬁﬀǅǄΣσς²³¹½⅓٣٤۵०१௧๓〇Ⅻⅻ①⑴ªºµÅÅÉÉéé\u0301\u0308\u200b\u200d\u00a0\u2028\u2029\u3000"
       "\x85\x1c\x1f\t\r\n’‘“”–—…•€$£¥%&@#_-.,:;!?/\\'\"()[]{}<>|~^`*+=" "😀👍🏽🇫🇷中文字日本語한국어Ελληνικάкириллица"
       "עברית العربية हिन्दी ไทย")
PIECES = ["queue", "retry", "v2", "3d", "x86_64", "1e5", "0x1F", "42", "007", "ipv6", "utf8mb4", "café",
          "naïve", "Straße", "don't", "foo-bar", "a.b.c", "HTTPServer", "parseJSON", "http://x.io/a?b=c",
          "me@example.com", "1.2.3", "-5", "+7", "3.14", "2024-01-02", "a" * 2100, "é" * 1100, "x1" * 600]


def row_texts(title: str, tags: list[str], content: str) -> tuple[str, str, str, str]:
    tags_text = json.dumps(tags)
    return title, tags_text, content, index_words(title, content, tags_text)


def fuzzed(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.05:  # one word over and over: past 255 positions, past 16383 when long enough
        return " ".join([rng.choice(PIECES[:6])] * rng.choice([254, 255, 256, 300, 9000, 17000]))
    parts = []
    for _ in range(rng.randint(0, 40)):
        r = rng.random()
        if r < 0.4:
            parts.append(rng.choice(PIECES))
        elif r < 0.8:
            parts.append("".join(rng.choice(ODD) for _ in range(rng.randint(1, 6))))
        else:
            parts.append("".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(rng.randint(1, 8))))
        parts.append(rng.choice([" ", "", "\n", "  ", "-", "_"]))
    return "".join(parts)


def built_and_server(url: str, rows: list[tuple[str, str, str, str]]) -> tuple[list, list, int]:
    """(what the builder gives for each row, what the trigger's expression gives, rows built in
    Python rather than left to the server)."""
    with psycopg.connect(url) as conn:
        builder = postgres_fts.FtsBuilder.open(conn.cursor())
        assert builder is not None
        plans = builder.plan(rows)
        left = [i for i, ok in enumerate(plans) if not ok]
        by_server = dict(zip(left, builder.server_rows([rows[i] for i in left])))
        built = [builder.row(row) if ok else by_server[i] for i, (row, ok) in enumerate(zip(rows, plans))]
        # The trigger's own result, through a real insert into the table.
        conn.execute("CREATE TEMP TABLE probe (n INT, title TEXT, tags TEXT, content TEXT, words TEXT, "
                     "fts TSVECTOR, doclen BIGINT)")
        conn.execute("CREATE TRIGGER probe_fts BEFORE INSERT ON probe FOR EACH ROW EXECUTE FUNCTION memdeck_fts_row()")
        with conn.cursor().copy("COPY probe (n, title, tags, content, words) FROM STDIN") as copy:
            for n, row in enumerate(rows):
                copy.write_row((n, *row))
        server = [(v, d) for v, d in conn.execute("SELECT fts::text, doclen FROM probe ORDER BY n")]
        # As stored: the text read back as a tsvector is the trigger's, to the byte.
        same = conn.execute("SELECT count(*) FROM probe AS p JOIN unnest(%s::text[]) WITH ORDINALITY AS b(v, n) "
                            "ON b.n = p.n + 1 WHERE tsvectorsend(b.v::tsvector) = tsvectorsend(p.fts)",
                            ([v for v, _ in built],)).fetchone()[0]
        assert same == len(rows), conn.execute(
            "SELECT p.n, b.v::tsvector::text, p.fts::text FROM probe AS p JOIN unnest(%s::text[]) WITH ORDINALITY "
            "AS b(v, n) ON b.n = p.n + 1 WHERE tsvectorsend(b.v::tsvector) != tsvectorsend(p.fts)",
            ([v for v, _ in built],)).fetchall()
        # Lexemes are sorted as the text is read: the builder writes them in the order met.
        stored = [r[0] for r in conn.execute("SELECT v::tsvector::text FROM unnest(%s::text[]) WITH ORDINALITY "
                                             "AS b(v, n) ORDER BY n", ([v for v, _ in built],))]
    return [(v, d) for v, (_, d) in zip(stored, built)], server, len(rows) - len(left)


def real_rows(*folders) -> list[tuple[str, str, str, str]]:
    """The text files under `folders` as memory rows, 1500 characters each."""
    rows = []
    for path in [path for folder in folders for path in sorted(folder.rglob("*"))]:
        if path.is_file() and path.suffix in (".md", ".jsonl", ".txt", ".yaml", ".tsv"):
            text = path.read_text(encoding="utf-8", errors="replace")
            for start in range(0, len(text), 1500):
                piece = text[start:start + 1500]
                rows.append(row_texts(piece.strip().splitlines()[0][:120] if piece.strip() else "",
                                      [path.parent.name, path.suffix], piece))
    return rows


def test_tsvectors_of_the_projects_own_data_are_the_triggers(postgres_server):
    """On the project's own transcripts, notes and Ralph file (tests/data): runs in any clone."""
    rows = real_rows(DATA)
    assert len(rows) >= 40
    built, server, in_python = built_and_server(postgres_server.fresh_database(), rows)
    assert built == server
    assert in_python == len(rows)  # real text is built in Python, none left to the server


@pytest.mark.slow
@needs_shared
def test_tsvectors_of_real_memories_are_the_triggers(postgres_server):
    url = postgres_server.fresh_database()
    rows = real_rows(DATA, FIXTURES)
    assert len(rows) > 50
    built, server, in_python = built_and_server(url, rows)
    assert built == server
    assert in_python == len(rows)  # real text is built in Python, none left to the server


@needs_shared
def test_the_shared_fixtures_are_part_of_it():
    assert any(FIXTURES.rglob("*.md"))


@pytest.mark.slow
def test_tsvectors_of_fuzzed_text_are_the_triggers(postgres_server):
    url = postgres_server.fresh_database()
    rng = random.Random(16)
    rows = [row_texts(fuzzed(rng)[:200], [fuzzed(rng)[:30] for _ in range(rng.randint(0, 3))], fuzzed(rng))
            for _ in range(1500)]
    # Rows past the limits on positions, and one over the size the builder leaves to the server.
    rows.append(row_texts("queue " * 300, ["queue"] * 40, "queue retry " * 200))
    rows.append(row_texts("a b", ["c"], " ".join(f"w{i % 700}" for i in range(20000))))
    rows.append(row_texts("big", [], "word " * (postgres_fts.MAX_TEXT // 5 + 10)))
    built, server, in_python = built_and_server(url, rows)
    for i, (mine, theirs) in enumerate(zip(built, server)):
        assert mine == theirs, (i, rows[i][:3])
    assert in_python >= len(rows) * 0.9


def test_a_changed_full_text_function_leaves_the_work_to_the_trigger(postgres_server):
    url = postgres_server.fresh_database()
    with psycopg.connect(url, autocommit=True) as conn:
        assert postgres_fts.FtsBuilder.open(conn.cursor()) is not None
        conn.execute(r"""CREATE OR REPLACE FUNCTION memdeck_fts_text(t TEXT) RETURNS TEXT LANGUAGE sql
                         IMMUTABLE AS $$ SELECT lower(coalesce(t, '')) $$""")
        assert postgres_fts.FtsBuilder.open(conn.cursor()) is None


def _varied(count: int) -> dict:
    rng = random.Random(7)
    memories = [{"id": f"mem-1700000000-{i:06x}", "type": "pattern",
                 "content": f"The queue {i} needs care; {fuzzed(rng)}" if i % 10 == 0 else f"Plain fact {i} about caches",
                 "tags": ["retry", f"t{i % 7}"], "created_at": "2025-01-02T03:04:05Z"} for i in range(count)]
    memories[3]["content"] = "İstanbul’s ﬁle Straße naïveTest ² ٣ — parse_invoice_total " + "queue " * 400
    return {"format": "memdeck", "version": 1, "project": "demo", "memories": memories}


@pytest.mark.slow
def test_a_large_import_stores_the_tsvectors_and_lengths_row_by_row_writing_does(postgres_server, tmp_path,
                                                                               clock, monkeypatch):
    source = tmp_path / "export.json"
    count = bulk.FTS_AT_END_FROM + 700
    source.write_text(json.dumps(_varied(count)), encoding="utf-8")

    def imported() -> list[tuple]:
        url = postgres_server.fresh_database()
        with Store.open(url, project="demo", clock=clock, config=Config.defaults()) as store:
            import_file(store, str(source))
        with psycopg.connect(url) as conn:
            return conn.execute("SELECT rowid, id, title, tags, content, words, tsvectorsend(fts), doclen "
                                "FROM memory ORDER BY rowid").fetchall()

    built = []
    row = postgres_fts.FtsBuilder.row
    monkeypatch.setattr(postgres_fts.FtsBuilder, "row", lambda self, texts: built.append(1) or row(self, texts))
    bulk_written = imported()
    assert len(built) >= count - 10  # the import did build them in Python
    monkeypatch.setattr(bulk, "FTS_AT_END_FROM", 10 ** 9)  # every row through the trigger
    row_by_row = imported()
    assert len(bulk_written) == count
    assert bulk_written == row_by_row


@pytest.mark.slow
def test_a_copy_failing_on_the_writer_thread_fails_the_whole_import(postgres_server, tmp_path, clock):
    # The COPYs of a large import run on a thread of their own (`store.backends.postgres_bulk._BulkWriter`):
    # an error there is the import's error, and the import leaves nothing, triggers as they were.
    url = postgres_server.fresh_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE memory ADD CONSTRAINT no_zebracorn CHECK (content NOT LIKE '%%zebracorn%%')")
        triggers = conn.execute("SELECT tgname, tgenabled FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1").fetchall()
    data = _varied(bulk.FTS_AT_END_FROM + bulk.CHUNK)
    data["memories"][bulk.CHUNK + 17]["content"] = "A zebracorn in the second chunk"
    source = tmp_path / "export.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    with Store.open(url, project="demo", clock=clock, config=Config.defaults()) as store:
        with pytest.raises(Exception, match="no_zebracorn"):
            import_file(store, str(source))
        assert store.db.execute_sql("SELECT count(*) FROM memory").fetchone()[0] == 0
        store.add("The webhook queue drops oversized messages", type="pitfall")
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT tgname, tgenabled FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1").fetchall() == triggers
        assert conn.execute("SELECT count(*) FROM memory WHERE fts @@ to_tsquery('memdeck', 'oversized')").fetchone()[0] == 1


def _all_visible(url: str) -> dict[str, tuple[int, int]]:
    """Each table's (pages all-visible, pages) as its last VACUUM or ANALYZE left them."""
    with psycopg.connect(url) as conn:
        return {name: (visible, pages) for name, visible, pages in conn.execute(
            "SELECT relname, relallvisible, relpages FROM pg_class WHERE relname IN ('memory', 'event')")}


@pytest.mark.slow
def test_a_large_import_is_vacuumed_once_it_commits_and_a_failed_one_is_not(postgres_server, tmp_path, clock):
    # Until VACUUM marks a large import's pages all-visible, every index-only scan over its rows
    # (the workbench's counts) reads the table too; autovacuum would come round a minute later.
    url = postgres_server.fresh_database()
    data = _varied(bulk.FTS_AT_END_FROM + 300)
    source = tmp_path / "export.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    bad = tmp_path / "bad.json"
    broken = _varied(bulk.FTS_AT_END_FROM + 300)
    for memory in broken["memories"]:
        memory["id"] = memory["id"].replace("mem-1700000000", "mem-1800000000")
    broken["memories"][-1]["content"] = "A zebracorn at the very end"
    bad.write_text(json.dumps(broken), encoding="utf-8")
    with Store.open(url, project="demo", clock=clock, config=Config.defaults()) as store:
        import_file(store, str(source))
        visible = _all_visible(url)
        assert all(pages > 0 and seen == pages for seen, pages in visible.values()), visible
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE memory ADD CONSTRAINT no_zebracorn CHECK (content NOT LIKE '%%zebracorn%%')")
        with pytest.raises(Exception, match="no_zebracorn"):
            import_file(store, str(bad))
        store.add("The webhook queue drops oversized messages", type="pitfall")  # an ordinary commit
    # The failed import's dead rows are not vacuumed by the next commit: its flag went with it.
    assert _all_visible(url)["memory"] == visible["memory"]


@pytest.mark.slow
def test_an_import_that_grows_the_table_by_a_tenth_leaves_it_analyzed(postgres_server, tmp_path, clock):
    # Statistics from before the import would put every new rowid past the histogram's end, and
    # a broad search's window (`PgDatabase.newest_matches`) would be planned as a walk of them.
    url = postgres_server.fresh_database()
    first = _varied(bulk.FTS_AT_END_FROM + 300)
    second = _varied(bulk.FTS_AT_END_FROM)  # smaller than the store: its indexes are kept
    for memory in second["memories"]:
        memory["id"] = memory["id"].replace("mem-1700000000", "mem-1800000000")
    paths = []
    for name, data in (("first.json", first), ("second.json", second)):
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(data), encoding="utf-8")

    def histogram_end() -> int:
        with psycopg.connect(url) as conn:
            bounds = conn.execute("SELECT histogram_bounds::text FROM pg_stats "
                                  "WHERE tablename = 'memory' AND attname = 'rowid'").fetchone()[0]
        return int(bounds.strip("{}").split(",")[-1])

    with Store.open(url, project="demo", clock=clock, config=Config.defaults()) as store:
        import_file(store, str(paths[0]))
        assert histogram_end() == bulk.FTS_AT_END_FROM + 300
        import_file(store, str(paths[1]))
        assert histogram_end() == 2 * bulk.FTS_AT_END_FROM + 300


@pytest.mark.slow
def test_an_imports_copy_gets_no_notice_from_the_server(postgres_server, tmp_path, clock, monkeypatch):
    # `to_tsvector` notices every word of 2,048 characters or more; sent while the rows stream, a
    # few hundred of them could block the server writing them while psycopg waited to write the
    # COPY's end (a hang seen under load). The import's COPY asks for warnings and errors only.
    data = _varied(400)
    for memory in data["memories"][:300]:
        memory["content"] += " " + "x" * 2100  # one word too long to index
    source = tmp_path / "export.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(bulk, "FTS_AT_END_FROM", 10 ** 9)  # every row through the full-text trigger
    url = postgres_server.fresh_database()
    notices = []
    with Store.open(url, project="demo", clock=clock, config=Config.defaults()) as store:
        store.db.connection().add_notice_handler(lambda notice: notices.append(notice.message_primary))
        import_file(store, str(source))
        assert store.db.execute_sql("SELECT count(*) FROM memory").fetchone()[0] == 400
        assert store.db.execute_sql("SELECT current_setting('client_min_messages')").fetchone()[0] == "notice"
        store.db.execute_sql("SELECT to_tsvector('simple', repeat('y', 2100))")  # outside a COPY, as before
    assert notices == ["word is too long to be indexed"]
