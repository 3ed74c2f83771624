"""Compare-and-set writes: a memory's version, conflicts that say what changed meanwhile, rule
writes that keep other fields, and undo that reverts only what its action did."""

from __future__ import annotations

import json

import pytest

from store.engine.curation import Curator
from store.engine.errors import Conflict
from store.engine.lifecycle import run_decay
from tests.data_support import worked_on

pytestmark = pytest.mark.both_backends


@pytest.fixture
def memory(store):
    return store.add("Retry backoff must cap at sixty seconds", type="fix", tags="retry",
                     confidence=0.6).memory


def test_every_write_raises_the_version(store, memory, clock):
    assert memory.version == 1
    edited = store.update(memory.id, memory, title="Cap retry backoff")
    assert edited.version == 2 and edited.title == "Cap retry backoff"
    reinforced = store.add(memory.content, type="fix").memory
    assert reinforced.version == 3
    used = store.record_usage([memory.id])[0]
    assert used.version == 4
    worked_on(store, clock.now() + 86400, 200)
    clock.advance(days=200)
    run_decay(store)
    assert store.get(memory.id).version == 5


def test_a_write_from_a_stale_read_is_refused_and_names_what_changed(store, memory):
    store.add(memory.content, type="fix", tags="from-session")  # a reinforcement meanwhile
    with pytest.raises(Conflict) as caught:
        store.update(memory.id, memory, title="Cap retry backoff")
    conflict = caught.value
    assert set(conflict.changed) == {"confidence", "tags"}
    assert conflict.changed["tags"] == (("retry",), ("retry", "from-session"))
    assert "confidence '0.60' → '0.70'" in str(conflict) and "nothing was written" in str(conflict)
    assert conflict.current.version == 2 and conflict.exit_code == 5
    assert store.get(memory.id).title == memory.title  # nothing written


def test_a_version_number_alone_is_enough_to_compare(store, memory):
    store.update(memory.id, 1, scope="api")
    with pytest.raises(Conflict, match="version 1, now 2"):
        store.update(memory.id, 1, scope="feed")
    assert store.get(memory.id).scope == "api"


def test_a_purged_memory_is_a_conflict_for_whoever_read_it(store, memory):
    store.trash.delete([memory.id])
    store.trash.purge([memory.id])
    with pytest.raises(Conflict, match="purged"):
        store.update(memory.id, memory, title="too late")


def test_only_the_fields_given_are_written(store, memory):
    store.update(memory.id, memory, hat="critic")
    assert json.loads(store.db.execute_sql(
        f"SELECT detail FROM event WHERE memory_id = {store.backend.param} AND kind = 'edited'", (memory.id,)).fetchone()[0]) == \
        {"changes": {"hat": [None, "critic"]}}


def test_an_update_that_changes_nothing_writes_nothing(store, memory):
    assert store.update(memory.id, memory, title=memory.title).version == 1


def test_rule_writes_never_undo_an_edit_of_other_fields(store, memory):
    store.edit(memory.id, title="Cap retry backoff at 60 s")
    store.add(memory.content, type="fix")  # reinforcement reads the row under the write lock
    current = store.get(memory.id)
    assert current.title == "Cap retry backoff at 60 s" and current.confidence == pytest.approx(0.7)


def test_undo_reverts_only_what_the_action_changed_and_says_what_it_kept(store, memory):
    other = store.add("Websocket reconnect drops after ten minutes idle", type="pitfall").memory
    curator = Curator(store)
    curator.set_type([memory.id, other.id], "constraint")
    curator.adjust_confidence([memory.id, other.id], 0.1)
    store.edit(memory.id, confidence=0.95, title="Backoff cap")  # someone else, after the action
    result = curator.undo()
    kept, reverted = store.get(memory.id), store.get(other.id)
    assert kept.confidence == 0.95 and kept.title == "Backoff cap" and kept.type == "constraint"
    assert reverted.confidence == other.confidence
    assert result.not_undone == (f"{memory.id} confidence (now '0.95')",)
    assert "not undone (changed since)" in result.summary


def test_undo_of_a_delete_after_someone_restored_it_keeps_their_status(store, memory):
    curator = Curator(store)
    curator.delete([memory.id])
    store.trash.restore([memory.id])
    store.edit(memory.id, status="inactive")
    result = curator.undo()
    assert store.get(memory.id).status == "inactive"
    assert result.not_undone == (f"{memory.id} status (now 'inactive')",)


def test_an_edit_through_the_curator_is_undone_like_a_bulk_action(store, memory):
    curator = Curator(store)
    curator.edit(memory, title="Cap backoff", scope="http")
    store.record_usage([memory.id])  # a use meanwhile changes neither field
    curator.undo()
    current = store.get(memory.id)
    assert (current.title, current.scope, current.use_count) == (memory.title, None, 1)


def test_an_edit_through_the_curator_from_a_stale_read_conflicts(store, memory):
    store.trash.delete([memory.id])
    with pytest.raises(Conflict, match="status 'active' → 'deleted'"):
        Curator(store).edit(memory, title="Resurrected?")
    assert store.get(memory.id).status == "deleted"


def test_cli_edit_with_an_old_version_exits_5_and_writes_nothing(run_cli, store, memory):
    store.edit(memory.id, scope="api")
    result = run_cli("edit", memory.id, "--title", "Stale", "--expect-version", "1")
    assert result.returncode == 5 and "changed meanwhile" in result.stderr
    assert store.get(memory.id).title == memory.title
    assert run_cli("edit", memory.id, "--title", "Fresh", "--expect-version", "2").returncode == 0
    shown = json.loads(run_cli("show", memory.id, "--json", check=True).stdout)
    assert (shown["title"], shown["version"]) == ("Fresh", 3)


def test_cli_delete_and_restore_with_an_old_version_exit_5_and_move_nothing(run_cli, store, memory):
    store.edit(memory.id, scope="api")  # version 2 now
    stale = run_cli("delete", memory.id, "--expect-version", "1")
    assert stale.returncode == 5 and "changed meanwhile" in stale.stderr
    assert store.get(memory.id).status == "active"
    assert run_cli("delete", memory.id, "--expect-version", "2").returncode == 0
    deleted = store.get(memory.id)
    assert deleted.status == "deleted" and deleted.version == 3

    stale = run_cli("restore", memory.id, "--expect-version", "2")
    assert stale.returncode == 5 and "nothing was written" in stale.stderr
    assert store.get(memory.id).status == "deleted"
    assert run_cli("restore", memory.id, "--expect-version", "3").returncode == 0
    assert store.get(memory.id).status == "active"


def test_cli_expect_version_with_several_ids_is_refused(run_cli, store, memory):
    other = store.add("Webhook retries are idempotent", type="pattern").memory
    result = run_cli("delete", memory.id, other.id, "--expect-version", "1")
    assert result.returncode == 2 and "one ID" in result.stderr
    assert {store.get(memory.id).status, store.get(other.id).status} == {"active"}
