"""Adding memories, reinforcement instead of duplicates, supersede, edits, the trash, and the
history of events every change leaves."""

from __future__ import annotations

import pytest

from store import InvalidInput, NotFound
from store.engine.ids import is_memory_id
from store.engine.vocabulary import EVENT_KINDS
from tests.data_support import worked_on

pytestmark = pytest.mark.both_backends


def kinds(store, memory_id):
    return [e.kind for e in store.events(memory_id)]


def count(store):
    return store.db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0]


# -- adding ---------------------------------------------------------------------------------------

def test_add_stores_a_memory_with_its_fields_and_a_created_event(store, clock):
    result = store.add("Use exponential backoff for websocket reconnects. Cap it at 30s.",
                       type="pattern", tags="net, ws,net", hat="creator", scope="gateway",
                       file_refs=["src/ws/*.py"], session_id="s-1", task="reconnect")
    memory = result.memory
    assert result.created and result.action == "created"
    assert is_memory_id(memory.id) and memory.id.startswith(f"mem-{int(clock.now())}-")
    assert memory.title == "Use exponential backoff for websocket reconnects"
    assert (memory.type, memory.hat, memory.scope, memory.project) == ("pattern", "creator", "gateway", "demo")
    assert memory.tags == ("net", "ws") and memory.file_refs == ("src/ws/*.py",)
    assert (memory.confidence, memory.source, memory.status) == (0.6, "explicit", "active")
    assert (memory.session_id, memory.task, memory.use_count) == ("s-1", "reconnect", 0)
    assert memory.created_at == memory.updated_at == clock.now()
    [event] = store.events(memory.id)
    assert (event.kind, event.confidence_before, event.confidence_after) == ("created", None, 0.6)
    assert (event.session_id, event.actor, event.at) == ("s-1", "cli", clock.now())


def test_initial_confidence_depends_on_the_source(store):
    by_source = {source: store.add(f"A fact learned the {source} way about caching", type="context",
                                   source=source).memory.confidence
                 for source in ("explicit", "automatic", "imported", "operator")}
    assert by_source == {"explicit": 0.6, "automatic": 0.5, "imported": 0.7, "operator": 0.8}


def test_aliases_resolve_to_types(store):
    assert store.add("Restart the worker after a schema change", type="error_solution").memory.type == "fix"
    assert store.add("Four spaces, never tabs", type="style").memory.type == "convention"
    assert store.add("The queue drops messages over 1 MB", type="gotchas").memory.type == "pitfall"


@pytest.mark.parametrize("content, fields, message", [
    ("   ", {"type": "pattern"}, "content"),
    ("text", {"type": "no-such-type"}, "unknown type"),
    ("text", {"type": "pattern", "confidence": 1.5}, "from 0 to 1"),
    ("text", {"type": "pattern", "confidence": "high"}, "number"),
    ("text", {"type": "pattern", "source": "telepathy"}, "unknown source"),
    ("text", {"type": "pattern", "status": "deleted"}, "status"),
])
def test_bad_input_is_refused_and_nothing_is_written(store, content, fields, message):
    with pytest.raises(InvalidInput, match=message):
        store.add(content, **fields)
    assert count(store) == 0


# -- reinforcement vs a new memory ---------------------------------------------------------------

def test_an_exact_re_add_reinforces_instead_of_duplicating(store, clock):
    first = store.add("Jellyfin takes 60s to start", type="timing", scope="jellyfin", tags="a").memory
    clock.advance(days=1)
    again = store.add("  jellyfin takes 60s   to start ", type="timing", scope="jellyfin", tags="b")
    assert not again.created and again.action == "reinforced"
    assert again.memory.id == first.id and count(store) == 1
    assert again.memory.confidence == pytest.approx(0.7)
    assert again.memory.tags == ("a", "b")
    assert again.memory.updated_at == clock.now()
    event = store.events(first.id)[-1]
    assert (event.kind, event.confidence_before, event.confidence_after) == ("reinforced", 0.6, pytest.approx(0.7))
    assert event.detail == {"similarity": 100.0}


def test_an_exact_re_add_with_lower_confidence_never_lowers_it(store):
    first = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.9).memory
    again = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.2).memory
    assert again.id == first.id
    assert again.confidence == pytest.approx(1.0)  # the higher one plus the boost, capped


def test_reinforcement_is_capped_at_confidence_max(store):
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.95).memory
    for _ in range(3):
        memory = store.add("Jellyfin takes 60s to start", type="timing").memory
    assert memory.confidence == 1.0
    assert kinds(store, memory.id) == ["created", "reinforced", "reinforced", "reinforced"]


def test_similar_text_reinforces(store):
    first = store.add("The staging database needs a VPN connection before migrations run",
                      type="constraint").memory
    again = store.add("the staging database needs a VPN connection before the migrations run",
                      type="constraint")
    assert not again.created and again.memory.id == first.id
    assert 90 <= store.events(first.id)[-1].detail["similarity"] < 100


@pytest.mark.parametrize("fields", [
    {"type": "pitfall", "scope": "billing"},  # another type
    {"type": "constraint", "scope": "search"},  # another scope
    {"type": "constraint", "scope": None},  # no scope against a scope
    {"type": "constraint", "scope": "billing", "project": "other"},  # another project
])
def test_the_same_text_in_another_type_scope_or_project_is_a_new_memory(store, fields):
    store.add("Invoices are generated at 02:00 UTC", type="constraint", scope="billing")
    result = store.add("Invoices are generated at 02:00 UTC", **fields)
    assert result.created and count(store) == 2


def test_different_text_is_a_new_memory(store):
    store.add("Invoices are generated at 02:00 UTC", type="constraint")
    assert store.add("Refunds need a manager's approval above 500 EUR", type="constraint").created


def test_only_active_or_pending_memories_are_reinforced(store):
    old = store.add("Invoices are generated at 02:00 UTC", type="constraint").memory
    store.edit(old.id, status="inactive")
    result = store.add("Invoices are generated at 02:00 UTC", type="constraint")
    assert result.created and result.memory.id != old.id


def test_an_explicit_id_already_taken_is_refused(store):
    memory = store.add("Invoices are generated at 02:00 UTC", type="constraint").memory
    with pytest.raises(InvalidInput, match="already exists"):
        store.add("Refunds need approval", type="constraint", memory_id=memory.id)


def test_reinforcement_can_be_turned_off(store):
    store.add("Invoices are generated at 02:00 UTC", type="constraint")
    assert store.add("Invoices are generated at 02:00 UTC", type="constraint", reinforce=False).created


# -- supersede: an explicit contradiction --------------------------------------------------------

def test_supersede_lowers_the_old_memory_and_links_the_new_one(store, clock):
    old = store.add("Deploys go out on Fridays", type="decision", confidence=0.8).memory
    clock.advance(days=1)
    new = store.relations.supersede(old.id, "Deploys go out on Tuesdays, never Fridays").memory
    assert new.supersedes == old.id and new.type == "decision"
    lowered = store.get(old.id)
    assert lowered.confidence == 0.3  # confidence.superseded_to
    assert lowered.status == "inactive"  # contradicted: kept, never injected beside its successor
    assert lowered.meta["superseded_by"] == new.id
    event = store.events(old.id)[-1]
    assert (event.kind, event.confidence_before, event.confidence_after) == ("superseded", 0.8, 0.3)
    assert event.detail["by"] == new.id
    assert store.events(new.id)[0].detail == {"source": "explicit", "supersedes": old.id}


def test_a_superseded_pending_memory_stays_pending_for_review(store):
    old = store.add("Deploys go out on Fridays", type="decision", status="pending").memory
    store.relations.supersede(old.id, "Deploys go out on Tuesdays")
    assert store.get(old.id).status == "pending"


def test_superseding_never_raises_a_low_memory(store):
    old = store.add("Deploys go out on Fridays", type="decision", confidence=0.1).memory
    store.relations.supersede(old.id, "Deploys go out on Tuesdays")
    assert store.get(old.id).confidence == 0.1


def test_superseding_an_unknown_memory_writes_nothing(store):
    with pytest.raises(NotFound):
        store.add("Deploys go out on Tuesdays", type="decision", supersedes="mem-1-abcd")
    assert count(store) == 0


def test_a_superseding_memory_is_never_merged_into_the_one_it_replaces(store):
    old = store.add("Deploys go out on Fridays", type="decision").memory
    new = store.relations.supersede(old.id, "Deploys go out on Fridays").memory
    assert new.id != old.id


# -- edits, the trash, purge ---------------------------------------------------------------------

def test_edit_records_the_fields_it_changed(store, clock):
    memory = store.add("Use ruff for linting", type="convention").memory
    clock.advance(days=1)
    edited = store.edit(memory.id, title="Lint with ruff", tags=["lint"], confidence=0.9, actor="ui")
    assert (edited.title, edited.tags, edited.confidence) == ("Lint with ruff", ("lint",), 0.9)
    assert edited.updated_at == clock.now()
    event = store.events(memory.id)[-1]
    assert (event.kind, event.actor, event.confidence_before, event.confidence_after) == ("edited", "ui", 0.6, 0.9)
    assert event.detail["changes"] == {"title": ["Use ruff for linting", "Lint with ruff"],
                                       "tags": [[], ["lint"]], "confidence": [0.6, 0.9]}


def test_an_edit_that_changes_nothing_records_nothing(store):
    memory = store.add("Use ruff for linting", type="convention").memory
    assert store.edit(memory.id, title=memory.title) == memory
    assert kinds(store, memory.id) == ["created"]


def test_edited_content_is_found_by_search_and_matched_by_re_adds(store):
    from store.browse.search import full_text

    memory = store.add("Use ruff for linting", type="convention", title="Tooling").memory
    store.edit(memory.id, content="Use black for formatting")
    assert [h.memory.id for h in full_text(store, "black")] == [memory.id]
    assert full_text(store, "ruff") == []
    assert store.add("use black for formatting", type="convention").memory.id == memory.id


@pytest.mark.parametrize("changes, message", [
    ({"content": "  "}, "content"), ({"title": ""}, "title"), ({"type": "nope"}, "unknown type"),
    ({"confidence": -0.1}, "from 0 to 1"), ({"status": "gone"}, "unknown status"),
    ({"use_count": 9}, "cannot edit"),
])
def test_bad_edits_are_refused_and_change_nothing(store, changes, message):
    memory = store.add("Use ruff for linting", type="convention").memory
    with pytest.raises(InvalidInput, match=message):
        store.edit(memory.id, **changes)
    assert store.get(memory.id) == memory and kinds(store, memory.id) == ["created"]


def test_status_changes_are_their_own_events(store):
    memory = store.add("Use ruff for linting", type="convention", status="pending").memory
    store.edit(memory.id, status="active")
    event = store.events(memory.id)[-1]
    assert (event.kind, event.detail) == ("status_changed", {"from": "pending", "to": "active"})


def test_delete_moves_to_the_trash_and_restore_brings_back_the_status_it_had(store):
    memory = store.add("Use ruff for linting", type="convention", status="pending").memory
    store.trash.delete([memory.id])
    assert store.get(memory.id).status == "deleted"
    assert [m.id for m in store.trash.memories()] == [memory.id]
    store.trash.restore([memory.id])
    assert store.get(memory.id).status == "pending"
    assert kinds(store, memory.id) == ["created", "deleted", "restored"]


def test_restoring_a_memory_not_in_the_trash_is_refused(store):
    memory = store.add("Use ruff for linting", type="convention").memory
    with pytest.raises(InvalidInput, match="not in the trash"):
        store.trash.restore([memory.id])


def test_deleting_several_ids_with_one_unknown_changes_nothing(store):
    memory = store.add("Use ruff for linting", type="convention").memory
    with pytest.raises(NotFound):
        store.trash.delete([memory.id, "mem-1-ffff"])
    assert store.get(memory.id).status == "active"


def test_purge_empties_the_trash_for_good(store):
    kept = store.add("Use ruff for linting", type="convention").memory
    gone = store.add("Use flake8 for linting", type="pitfall").memory
    store.trash.delete([gone.id])
    assert [m.id for m in store.trash.purge(dry_run=True)] == [gone.id]
    assert store.get(gone.id).status == "deleted"
    assert [m.id for m in store.trash.purge()] == [gone.id]
    with pytest.raises(NotFound):
        store.get(gone.id)
    assert store.events(gone.id) == [] and store.trash.memories() == []
    assert store.get(kept.id).status == "active"


def test_purging_a_memory_outside_the_trash_is_refused(store):
    memory = store.add("Use ruff for linting", type="convention").memory
    with pytest.raises(InvalidInput, match="only memories in the trash"):
        store.trash.purge([memory.id])
    assert store.get(memory.id)


# -- every event kind ----------------------------------------------------------------------------

def test_every_event_kind_the_store_records(store, clock):
    """One memory's life, through each kind of event the store writes itself."""
    from store.engine.lifecycle import contradict, run_decay

    seen: set[str] = set()
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.9).memory
    store.add("Jellyfin takes 60s to start", type="timing")
    store.record_usage([memory.id])
    store.edit(memory.id, title="Jellyfin starts slowly")
    store.edit(memory.id, status="inactive")
    store.edit(memory.id, status="active")
    worked_on(store, clock.now() + 86400, 60)
    clock.advance(days=60)
    run_decay(store)
    store.trash.delete([memory.id])
    store.trash.restore([memory.id])
    store.edit(memory.id, status="active")
    contradict(store, memory.id, actor="mcp", detail={"verdict": "wrong"})
    newer = store.relations.supersede(memory.id, "Jellyfin takes 90s to start since 10.9").memory
    imported = store.add("Plex needs port 32400", type="dependency", source="imported").memory
    for memory_id in (memory.id, newer.id, imported.id):
        seen.update(kinds(store, memory_id))
    assert kinds(store, memory.id) == ["created", "reinforced", "used", "edited", "status_changed",
                                       "status_changed", "decayed", "deleted", "restored", "contradicted",
                                       "superseded"]
    assert kinds(store, imported.id) == ["imported"]
    # Merging is the workbench's (the next test); anchoring and checks are test_anchors.py's.
    # Proposals and their resolution are test_sameness_store.py's; sharing is test_team_share.py's.
    assert seen == set(EVENT_KINDS) - {"merged", "anchored", "checked", "proposed", "resolved", "judged", "shared",
                                          "retaught", "opened"}
    for event in store.events(memory.id):
        assert event.at >= memory.created_at and event.actor


def test_merging_in_the_workbench_records_merged_events(store):
    from store.engine.curation import Curator

    keep = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.8).memory
    other = store.add("Jellyfin is slow to boot after upgrades", type="timing").memory
    result = Curator(store).merge([keep.id, other.id])
    assert result.kept == keep.id
    assert kinds(store, keep.id)[-1] == "merged" and "merged" in kinds(store, other.id)
    assert store.get(other.id).status == "deleted"


def test_record_event_accepts_any_kind_with_its_numbers(store):
    memory = store.add("Jellyfin takes 60s to start", type="timing").memory
    store.record_event(memory.id, "merged", before=0.6, after=0.7, actor="ui", detail={"from": ["x"]})
    event = store.events(memory.id)[-1]
    assert (event.kind, event.confidence_before, event.confidence_after, event.detail) == (
        "merged", 0.6, 0.7, {"from": ["x"]})


# -- reading ---------------------------------------------------------------------------------------

def test_get_many_keeps_the_order_given_and_names_unknown_ids(store):
    a = store.add("Use ruff for linting", type="convention").memory
    b = store.add("Pin the Postgres image tag", type="dependency").memory
    assert [m.id for m in store.get_many([b.id, a.id, b.id])] == [b.id, a.id]
    with pytest.raises(NotFound, match="mem-1-0000"):
        store.get_many([a.id, "mem-1-0000"])


def test_projects_count_memories_outside_the_trash(store):
    store.add("Use ruff for linting", type="convention")
    gone = store.add("Use flake8 for linting", type="pitfall").memory
    store.trash.delete([gone.id])
    store.add("Plex needs port 32400", type="dependency", project="media")
    assert {p.name: p.memory_count for p in store.projects()} == {"demo": 1, "media": 1}


def test_memory_to_json_has_the_cli_contract_fields(store):
    data = store.add("Use ruff for linting", type="convention", tags="lint").memory.to_json()
    for key in ("id", "project", "type", "title", "content", "confidence", "status", "tags", "hat",
                "scope", "created_at", "updated_at", "use_count"):
        assert key in data
    assert data["tags"] == ["lint"] and data["created_at"] == "2026-03-01T12:00:00Z"
