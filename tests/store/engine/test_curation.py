"""Bulk curation and the paging the workbench's list reads through: real stores, real SQL."""

from __future__ import annotations

import json

import pytest

from store.engine.curation import Curator
from store.engine.errors import InvalidInput, NotFound
from store.browse.paging import ListQuery, counts, fetch, listing, page
from store.browse.search import MemoryFilter

pytestmark = pytest.mark.both_backends


@pytest.fixture
def three(store):
    return [
        store.add("Websocket reconnect drops after ten minutes idle", type="pitfall", tags="ws",
                  file_refs="src/feed/*.ts", confidence=0.5, hat="critic").memory,
        store.add("Retry backoff must cap at sixty seconds", type="fix", tags="retry",
                  confidence=0.8, hat="creator").memory,
        store.add("Chose polling over server-sent events for the killmail feed", type="decision",
                  tags="ws,feed", file_refs="src/feed/poll.ts", confidence=0.6).memory,
    ]


def kinds(store, memory_id):
    return [e.kind for e in store.events(memory_id)]


def test_bulk_delete_moves_every_memory_to_the_trash_with_an_event_each(store, three):
    result = Curator(store).delete([m.id for m in three])
    assert result.memory_ids == tuple(m.id for m in three)
    assert [m.status for m in store.get_many(result.memory_ids)] == ["deleted"] * 3
    assert all(kinds(store, m.id)[-1] == "deleted" for m in three)


def test_undo_of_a_bulk_delete_restores_everything_as_it_was(store, three):
    curator = Curator(store)
    store.edit(three[0].id, status="inactive")
    before = store.get_many([m.id for m in three])
    curator.delete([m.id for m in three])
    curator.undo()
    after = store.get_many([m.id for m in three])
    assert [(m.status, m.confidence, m.tags) for m in after] == [(m.status, m.confidence, m.tags) for m in before]
    assert kinds(store, three[0].id)[-1] == "restored"
    assert not curator.can_undo


def test_undo_puts_back_types_hats_tags_and_confidence(store, three):
    curator = Curator(store)
    ids = [m.id for m in three]
    curator.set_type(ids, "gotcha")  # an alias: stored as pitfall
    assert {m.type for m in store.get_many(ids)} == {"pitfall"}
    curator.undo()
    assert [m.type for m in store.get_many(ids)] == ["pitfall", "fix", "decision"]
    curator.add_tags(ids, "reviewed")
    assert all("reviewed" in m.tags for m in store.get_many(ids))
    curator.adjust_confidence(ids, 0.3)
    assert [m.confidence for m in store.get_many(ids)] == [0.8, 1.0, 0.9]
    curator.undo()
    assert [m.confidence for m in store.get_many(ids)] == [0.5, 0.8, 0.6]


def test_set_hat_status_protect_and_remove_tags(store, three):
    curator = Curator(store)
    ids = [m.id for m in three]
    curator.set_hat(ids, "planner")
    curator.set_status(ids, "inactive")
    curator.protect(ids[:1])
    curator.remove_tags(ids, "ws")
    memories = store.get_many(ids)
    assert {m.hat for m in memories} == {"planner"}
    assert {m.status for m in memories} == {"inactive"}
    assert [m.protected for m in memories] == [True, False, False]
    assert [m.tags for m in memories] == [(), ("retry",), ("feed",)]
    assert kinds(store, ids[2]).count("edited") == 2  # hat, then tags (status has its own event)
    assert kinds(store, ids[1]).count("edited") == 1  # its tags did not change: no event


def test_merge_keeps_the_strongest_unites_tags_and_file_refs_and_records_merged_everywhere(store, three):
    ids = [m.id for m in three]
    result = Curator(store).merge(ids)
    kept = store.get(result.kept)
    assert kept.id == three[1].id  # the highest confidence
    assert set(kept.tags) == {"ws", "retry", "feed"}
    assert set(kept.file_refs) == {"src/feed/*.ts", "src/feed/poll.ts"}
    assert kept.status == "active"
    for memory in three:
        assert "merged" in kinds(store, memory.id)
    merged_into = [e.detail for e in store.events(three[0].id) if e.kind == "merged"]
    assert merged_into == [{"into": kept.id}]
    assert [m.status for m in store.get_many([ids[0], ids[2]])] == ["deleted", "deleted"]


def test_undo_of_a_merge_brings_the_merged_memories_back(store, three):
    curator = Curator(store)
    ids = [m.id for m in three]
    curator.merge(ids)
    curator.undo()
    memories = store.get_many(ids)
    assert [m.status for m in memories] == ["active"] * 3
    assert memories[1].tags == ("retry",)


def test_bad_bulk_input_is_refused_and_changes_nothing(store, three):
    curator = Curator(store)
    ids = [m.id for m in three]
    with pytest.raises(InvalidInput):
        curator.set_type(ids, "nonsense")
    with pytest.raises(InvalidInput):
        curator.merge(ids[:1])
    with pytest.raises(InvalidInput):
        curator.set_confidence(ids, 1.5)
    with pytest.raises(InvalidInput):
        curator.undo()
    assert [m.confidence for m in store.get_many(ids)] == [0.5, 0.8, 0.6]
    assert all(kinds(store, i) == ["created"] for i in ids)


def test_an_unknown_id_refuses_the_whole_action(store, three):
    curator = Curator(store)
    with pytest.raises(NotFound):
        curator.delete([three[0].id, "mem-1700000000-dead"])
    assert store.get(three[0].id).status == "active"


def test_export_writes_the_selection_as_json(store, three, tmp_path):
    target = tmp_path / "picked.json"
    Curator(store).export([three[0].id], target)
    assert [r["id"] for r in json.loads(target.read_text())] == [three[0].id]


def test_listing_orders_ids_by_sort_and_search_ranks_text_then_fuzzy_titles(store, three):
    by_confidence = listing(store, ListQuery(sort="confidence"))
    assert by_confidence.ids == (three[1].id, three[2].id, three[0].id)
    found = listing(store, ListQuery(text="backof"))  # prefix of the last word
    assert found.ids == (three[1].id,) and found.words == ("backof",)
    typo = listing(store, ListQuery(text="websoket reconect"))
    assert typo.ids[0] == three[0].id
    only_fixes = listing(store, ListQuery(MemoryFilter(types=("fix",)), text="retry"))
    assert only_fixes.ids == (three[1].id,)


def test_pages_fetch_memories_in_listing_order_and_skip_vanished_ids(store, three):
    ids = listing(store, ListQuery(sort="title")).ids
    assert [m.id for m in fetch(store, [ids[2], "mem-1-gone", ids[0]])] == [ids[2], ids[0]]
    assert [m.id for m in page(store, ListQuery(sort="title"), 1, 5)] == list(ids[1:])


def test_counts_split_pending_and_trash_from_the_total(store, three):
    store.add("A candidate from a transcript", type="context", status="pending")
    store.trash.delete([three[0].id])
    assert counts(store) == counts(store, "demo")
    numbers = counts(store)
    assert (numbers.total, numbers.pending, numbers.trash) == (3, 1, 1)
