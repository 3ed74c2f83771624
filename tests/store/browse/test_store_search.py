"""Finding memories: full-text search that takes any text safely, BM25 with titles first, fuzzy
titles for typos, and every filter."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.engine.clock import DAY
from store.browse.search import MemoryFilter, count_memories, fts_query, full_text, fuzzy_titles, list_memories, search

pytestmark = pytest.mark.both_backends

HOSTILE = ["o'brien", "covid-19", '"', '""', "*", "NEAR(", "NEAR(a b, 2)", "-", "--", ":", "title:",
           "(", ")", "((a", "a))", "AND", "OR NOT", "^", "'", "\\", "%", "_", "{}", "[x]", "a\x00b",
           "\u2019", "\U0001F642", " ", "", "x" * 3000]


@pytest.fixture
def filled(store, clock):
    """A few memories with known words, hats, sources, tags and times."""
    add = store.add
    ids = {
        "obrien": add("O'Brien's covid-19 dashboard breaks when the NEAR(-) filter is empty",
                      type="pitfall", hat="critic", tags="dashboard").memory.id,
        "websocket": add("Reconnect websockets with exponential backoff, capped at 30 seconds",
                         type="pattern", title="Websocket reconnect backoff", hat="creator",
                         tags="net,ws", confidence=0.9).memory.id,
    }
    clock.advance(days=10)
    ids["title"] = add("Content that does not say the word", type="decision",
                       title="Retry budget for uploads", hat="planner", source="operator",
                       session_id="s-old").memory.id
    ids["body"] = add("Uploads use a retry budget of three attempts per file", type="decision",
                      title="Upload limits", hat="planner", source="automatic",
                      session_id="s-now", tags="net").memory.id
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_query_strings_never_raise(filled, store, query):
    for hit in search(store, query):
        assert hit.memory.id in filled.values()
    full_text(store, query, mode="any")
    assert fts_query(query) is None or fts_query(query).count('"') % 2 == 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=60))
def test_any_text_is_safe_to_search(filled, store, query):
    hits = search(store, query)
    assert all(hit.match in ("text", "fuzzy") for hit in hits)


def test_punctuation_is_searched_as_text(filled, store):
    assert [h.memory.id for h in full_text(store, "o'brien")] == [filled["obrien"]]
    assert [h.memory.id for h in full_text(store, "covid-19")] == [filled["obrien"]]
    assert [h.memory.id for h in full_text(store, "NEAR(")] == [filled["obrien"]]


def test_all_words_must_match_and_stems_match(filled, store):
    assert {h.memory.id for h in full_text(store, "retries uploads")} == names(filled, "title", "body")
    assert full_text(store, "retry websocket") == []
    assert {h.memory.id for h in full_text(store, "retry websocket", mode="any")} == {
        filled["title"], filled["body"], filled["websocket"]}


def test_a_title_match_ranks_above_a_content_match(filled, store):
    hits = full_text(store, "retry budget")
    assert [h.memory.id for h in hits] == [filled["title"], filled["body"]]
    assert hits[0].score > hits[1].score


def test_search_as_you_type_matches_the_last_word_as_a_prefix(filled, store):
    assert [h.memory.id for h in search(store, "exponential backo", fuzzy=False)] == [filled["websocket"]]
    assert full_text(store, "exponential backo") == []


def test_fuzzy_title_search_forgives_typos(filled, store):
    hits = fuzzy_titles(store, "websoket reconect")
    assert hits[0].memory.id == filled["websocket"] and hits[0].match == "fuzzy"
    assert search(store, "websoket")[0].memory.id == filled["websocket"]
    assert fuzzy_titles(store, "ws") == []  # too short to mean anything


def test_search_puts_full_text_hits_before_fuzzy_ones_without_repeats(filled, store):
    hits = search(store, "websocket")
    ids = [h.memory.id for h in hits]
    assert ids[0] == filled["websocket"] and hits[0].match == "text"
    assert len(ids) == len(set(ids))


# -- filters ---------------------------------------------------------------------------------------

def listed(store, **flt):
    return {m.id for m in list_memories(store, MemoryFilter(**flt), limit=None)}


def names(filled, *keys):
    return {filled[k] for k in keys}


def test_filter_by_type_with_aliases(filled, store):
    assert listed(store, types=("decision",)) == names(filled, "title", "body")
    assert listed(store, types=("gotcha", "patterns")) == names(filled, "obrien", "websocket")


def test_filter_by_hat_source_and_tags(filled, store):
    assert listed(store, hats=("planner", "critic")) == names(filled, "title", "body", "obrien")
    assert listed(store, sources=("operator",)) == names(filled, "title")
    assert listed(store, tags=("net",)) == names(filled, "websocket", "body")
    assert listed(store, tags=("net", "ws")) == names(filled, "websocket")  # every tag
    assert listed(store, tags=("n",)) == set()  # whole tags only


def test_filter_by_status_hides_the_trash_by_default(filled, store):
    store.trash.delete([filled["obrien"]])
    store.edit(filled["title"], status="inactive")
    assert filled["obrien"] not in listed(store)
    assert listed(store, statuses=("deleted",)) == names(filled, "obrien")
    assert listed(store, statuses=("active",)) == names(filled, "websocket", "body")
    assert filled["obrien"] not in {h.memory.id for h in search(store, "covid")}


def test_filter_by_min_confidence(filled, store):
    assert listed(store, min_confidence=0.85) == names(filled, "websocket")


def test_filter_by_creation_time(filled, store, clock):
    first_day = clock.now() - 10 * DAY
    assert listed(store, created_after=first_day + DAY) == names(filled, "title", "body")
    assert listed(store, created_before=first_day + DAY) == names(filled, "obrien", "websocket")
    assert listed(store, created_after=first_day, created_before=first_day + 1) == names(filled, "obrien", "websocket")


def test_filter_excluding_a_session(filled, store):
    assert listed(store, exclude_session="s-now") == names(filled, "obrien", "websocket", "title")


def test_filters_apply_to_full_text_and_fuzzy_search(filled, store):
    assert [h.memory.id for h in search(store, "retry", MemoryFilter(sources=("automatic",)))] == [filled["body"]]
    assert fuzzy_titles(store, "websoket", MemoryFilter(hats=("critic",))) == []


def test_projects_are_kept_apart(filled, store):
    other = store.add("Reconnect websockets with jitter", type="pattern", project="other").memory
    assert other.id not in {h.memory.id for h in search(store, "websockets")}
    assert other.id in {h.memory.id for h in search(store, "websockets", MemoryFilter(all_projects=True))}
    assert [m.id for m in list_memories(store, MemoryFilter(project="other"))] == [other.id]


def test_sorting_paging_and_counting(filled, store):
    by_confidence = list_memories(store, sort="confidence", limit=2)
    assert by_confidence[0].id == filled["websocket"]
    page_two = list_memories(store, sort="created", limit=2, offset=2)
    assert {m.id for m in page_two} == names(filled, "obrien", "websocket")
    assert count_memories(store, MemoryFilter(types=("decision",))) == 2


def test_a_broad_query_lists_its_newest_matches_first(store, clock, monkeypatch):
    """Past BROAD_MATCHES matches, BM25 is skipped: newest first, unscored. A filter that keeps
    none of the newest BROAD_MATCHES + 1 matches reads on through the older ones."""
    import store.browse.search as search_module

    monkeypatch.setattr(search_module, "BROAD_MATCHES", 2)
    ids = []
    for topic in ("the queue", "the cache", "the index", "the worker"):
        clock.advance(seconds=60)
        ids.append(store.add(f"Restart {topic} after deploys", type="fix", scope=topic).memory.id)
    store.edit(ids[0], hat="critic")
    hits = full_text(store, "the", limit=3)
    assert [h.memory.id for h in hits] == [ids[3], ids[2], ids[1]]
    assert all(h.match == "text" and h.score == 0 for h in hits)
    assert [h.memory.id for h in full_text(store, "the", MemoryFilter(hats=("critic",)))] == [ids[0]]


@pytest.mark.sqlite_only
def test_fuzzy_titles_see_changes_from_this_and_other_connections(store, db_path):
    import sqlite3

    memory = store.add("Websocket reconnects need backoff", type="pattern").memory
    assert fuzzy_titles(store, "websoket")[0].memory.id == memory.id
    store.edit(memory.id, title="Upload retries need a budget")
    assert fuzzy_titles(store, "websoket") == []
    assert fuzzy_titles(store, "uplaod retries")[0].memory.id == memory.id
    other = sqlite3.connect(db_path)
    other.execute("UPDATE memory SET title = 'Websocket pings every 30s' WHERE id = ?", (memory.id,))
    other.commit()
    other.close()
    assert fuzzy_titles(store, "websoket pings")[0].memory.title == "Websocket pings every 30s"


def test_a_broad_prefix_lists_the_right_memories_newest_first(store, clock, monkeypatch):
    """As typed, `web` is a prefix: past BROAD_MATCHES matches its newest matches come first, from
    the prefix index (two and three letters) as from a merge of every word it begins (four)."""
    import store.browse.search as search_module

    ids = {}
    for name, title in (("hook", "Webhook retries need a cap"), ("site", "Website builds cache fonts"),
                        ("other", "Queue workers restart nightly"), ("pack", "Webpack splits the vendor bundle"),
                        ("socket", "Web socket pings every 30s")):
        clock.advance(seconds=60)
        ids[name] = store.add(f"{title}.", type="fix", title=title).memory.id
    newest_first = [ids["socket"], ids["pack"], ids["site"], ids["hook"]]
    ranked = search(store, "webh", fuzzy=False)  # not broad: BM25
    assert [h.memory.id for h in ranked] == [ids["hook"]] and ranked[0].score > 0
    monkeypatch.setattr(search_module, "BROAD_MATCHES", 2)
    for typed in ("we", "web", "Web", "webs"):  # FTS5 stems a prefix too: webs* is web*
        hits = search(store, typed, fuzzy=False)
        assert [h.memory.id for h in hits] == newest_first and all(h.score == 0 for h in hits)
    assert [h.memory.id for h in search(store, "web", fuzzy=False, limit=2)] == newest_first[:2]
    only_hook = MemoryFilter(types=("fix",), created_before=clock.now() - 200)
    assert [h.memory.id for h in search(store, "web", only_hook, fuzzy=False)] == [ids["hook"]]


def test_newest_matches_are_the_newest_whichever_way_they_are_read(store, clock, monkeypatch, backend):
    """A broad query's newest matches, newest first, as FTS5 reads them backwards: on PostgreSQL
    read from a window of the newest rows that the planner's estimate says should hold them,
    followed by the window below it when it holds fewer (a word common long ago, rare lately),
    then by every older match."""
    from store.backends import postgres_search as postgres
    from store.browse.search import newest_matches

    words = ["alpha", "bravo", "delta", "kilo", "lima", "oscar", "romeo", "sierra", "tango", "victor"]
    queue = []
    for k, word in enumerate(words * 2):  # long ago: the queue, twenty times
        clock.advance(seconds=60)
        queue.append(store.add(f"The {word} queue drains at {k} o'clock", type="fix").memory.id)
    for k, word in enumerate(words * 2):  # then twenty about something else
        clock.advance(seconds=60)
        store.add(f"The {word} cache warms at {k} o'clock", type="fix")
    for word in words[:4]:  # lately: four about the queue
        clock.advance(seconds=60)
        queue.append(store.add(f"Lately the {word} queue backs up", type="fix").memory.id)
    marks = store.backend.marks(len(queue))
    newest_first = [r[0] for r in store.db.execute_sql(
        f"SELECT rowid FROM memory WHERE id IN ({marks}) ORDER BY rowid DESC", queue)]
    statements: list[str] = []
    if backend == "postgres":
        store.db.execute_sql("ANALYZE memory")  # the planner's estimate, as a real store has one
        monkeypatch.setattr(postgres, "WINDOW_MOST", 1.0)  # a window however small the table
        execute = store.db._execute_cursor
        monkeypatch.setattr(store.db, "_execute_cursor",
                            lambda sql, params=None: statements.append(sql) or execute(sql, params))
    for margin in (postgres.WINDOW_MARGIN, 0.01):  # a window as estimated; one far too small
        monkeypatch.setattr(postgres, "WINDOW_MARGIN", margin)
        for limit in (3, 10, 24, 30):
            statements.clear()
            assert newest_matches(store, fts_query("queue"), limit) == newest_first[:limit]
            windowed = sum("rowid >= " in s for s in statements)
            whole = sum("ORDER BY rowid DESC" in s and "rowid >= " not in s for s in statements)
            if backend == "postgres" and limit == 3 and margin > 1:
                assert (windowed, whole) == (1, 0)  # the newest three are the three newest rows
            elif backend == "postgres" and margin < 1:
                assert windowed <= 2 and whole == 1  # two windows, still short: every older match read
    assert newest_matches(store, fts_query("nowhere"), 5) == []


def test_a_broad_query_reads_its_window_only_when_it_is_a_small_share_of_the_store():
    """The window's lowest rowid: `limit` matches at the estimated share, with a margin; none
    (every match read) when fewer are expected than asked for or the window is past a third."""
    import math

    from store.backends.postgres_search import WINDOW_MARGIN, newest_window

    window = math.ceil(2001 / 12_450 * 1_000_000 * WINDOW_MARGIN)  # rowids holding 2,001 matches, and a margin
    assert newest_window(12_450, 1, 1_000_000, 2001) == 1_000_000 - window + 1
    assert newest_window(1_000_000, 1, 1_000_000, 2001) > 997_000  # a word nearly everywhere
    assert newest_window(12_450, 1, 1_000_000, 5001) is None  # half the store: read every match
    assert newest_window(1_500, 1, 1_000_000, 2001) is None  # not broad, as far as the planner knows
    assert newest_window(0, 1, 1_000_000, 2001) is None


def test_the_typo_path_finds_a_misspelt_title_and_every_memory_bearing_it(store, clock, monkeypatch):
    import store.browse.search as search_module

    first = store.add("Reconnect with backoff.", type="pattern", title="Websocket reconnect backoff").memory
    clock.advance(seconds=60)
    store.add("Uploads retry three times.", type="decision", title="Upload retry budget")
    clock.advance(seconds=60)
    again = store.add("The same advice, from another session.", type="pattern",
                      title="Websocket reconnect backoff", reinforce=False).memory
    hits = search(store, "websoket reconect")
    assert {h.memory.id for h in hits[:2]} == {first.id, again.id}  # a tie: in the order read
    assert all(h.match == "fuzzy" for h in hits[:2]) and hits[0].score == hits[1].score >= 0.7
    # Past FUZZY_SCAN distinct titles, only the newest are compared.
    monkeypatch.setattr(search_module, "FUZZY_SCAN", 1)
    clock.advance(seconds=60)
    store.add("Cache fonts.", type="fix", title="Font cache warmup")
    assert fuzzy_titles(store, "websoket reconect") == []
    assert [h.memory.title for h in fuzzy_titles(store, "font cahce")] == ["Font cache warmup"]


def test_a_search_head_reads_fewer_matches_on_a_server_than_on_sqlite(store, monkeypatch):
    """SQLite reads a search head's newest 50,000 matches, a server its newest 5,000: past
    them the head says there are more ("N+")."""
    import store.browse.paging as paging

    monkeypatch.setattr(paging, "HEAD_MATCHES", 12)
    monkeypatch.setattr(paging, "HEAD_MATCHES_ON_SERVER", 4)
    for n in range(8):
        store.add(f"Harbor crane note {n}", type="fact", reinforce=False)
    first = paging.head(store, paging.ListQuery(text="harbor"), 50)
    on_server = not store.backend.reads_matches_in_order
    assert first.more == on_server and len(first) == (4 if on_server else 8)
    assert len(paging.listing(store, paging.ListQuery(text="harbor"))) == 8


def test_fuzzy_ties_list_the_newest_memory_first(store, clock):
    """Titles that score the same against a typo come newest first, on both back-ends (the
    titles were read in scan order, which PostgreSQL and SQLite do not share)."""
    ids = []
    for n, confidence in enumerate((0.9, 0.3, 0.7, 0.5)):  # an index on confidence reads another order
        clock.advance(seconds=60)
        ids.append(store.add(f"Seen in service {n}", title="Websocket reconnects need backoff",
                             type="pattern", confidence=confidence, reinforce=False).memory.id)
    store.edit(ids[0], content="edited, so its row moves on PostgreSQL")
    assert [h.memory.id for h in fuzzy_titles(store, "websoket reconect")] == ids[::-1]
    # Across projects SQLite scans the table oldest first; the order must not follow it.
    everywhere = MemoryFilter(all_projects=True)
    assert [h.memory.id for h in fuzzy_titles(store, "websoket reconect", everywhere)] == ids[::-1]
