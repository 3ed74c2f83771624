"""The sameness decision in the store's writes (issue 27): reinforcement only for the same
statement, updates become supersessions, unsure updates and contradictions wait in the inbox as
proposals with both memories, resolutions are undoable, and the block never holds a memory and
its successor. On both back-ends: every rule here writes."""

from __future__ import annotations

import pytest

from store import Config, Store
from store.engine.curation import Curator
from store.engine.errors import InvalidInput
from store.retrieval.injection import prime
from store.engine.records import InjectionContext

pytestmark = pytest.mark.both_backends


def test_a_changed_version_supersedes_instead_of_reinforcing(store):
    old = store.add("Use Node 18 for the build image", type="decision").memory
    result = store.add("Use Node 20 for the build image", type="decision")
    assert result.created and result.action == "updated"
    new = result.memory
    assert new.content == "Use Node 20 for the build image" and new.status == "active"
    assert new.supersedes == old.id
    before = store.get(old.id)
    assert before.status == "inactive" and before.meta["superseded_by"] == new.id
    superseded = [e for e in store.events(old.id) if e.kind == "superseded"]
    assert superseded and "18 -> 20" in superseded[0].detail["note"]
    # Restorable: the old one is kept, and can be made active again.
    assert store.edit(old.id, status="active").status == "active"


def test_a_value_that_changes_again_updates_its_latest_statement(store, clock):
    """Successive statements of one fact chain: each new one is proposed as an update of the one
    before it, not of the first (`consolidate` then shows them as one chain)."""
    ids = []
    for tail in ("1a2b3c4", "5d6e7f8", "9a8b7c6"):
        result = store.add(f"The v0.2.9 changelog boundary is now 96a7691..{tail}", type="context")
        ids.append(result.memory.id)
        clock.advance(seconds=60)
    assert [store.get(i).meta.get("proposal", {}).get("other") for i in ids[1:]] == ids[:-1]


def test_the_same_statement_reworded_reinforces_and_keeps_the_new_wording(store):
    first = store.add("Run the tests before committing", type="pattern").memory
    result = store.add("Before committing, run the tests", type="pattern")
    assert not result.created and result.memory.id == first.id
    event = store.events(first.id)[-1]
    assert event.kind == "reinforced"
    assert event.detail["text"] == "Before committing, run the tests"
    assert "same" in event.detail["why"]


def test_opposite_polarity_goes_to_the_inbox_with_both_and_is_never_injected_beside(store, clock):
    never = store.add("Never call the payments API from the web worker", type="pitfall").memory
    result = store.add("Always call the payments API from the web worker", type="pitfall")
    assert result.action == "proposed"
    pending = result.memory
    assert pending.status == "pending" and store.get(never.id).status == "active"
    proposal = pending.meta["proposal"]
    assert proposal["kind"] == "contradiction" and proposal["other"] == never.id
    assert "polarity" in proposal["why"]
    assert [e.kind for e in store.events(never.id)][-1] == "proposed"
    assert store.events(never.id)[-1].detail["by"] == pending.id
    listed = store.relations.proposals()
    assert [(m.id, o.id) for m, o in listed] == [(pending.id, never.id)]
    block = prime(store, InjectionContext(project="demo", task="payments API web worker"))
    ids = {r.memory.id for r in block.included}
    assert pending.id not in ids


def test_numbered_notes_about_different_things_are_never_dropped(store):
    results = [store.add(f"writer 0 note {n} about subsystem {n}", type="context") for n in range(1, 11)]
    assert all(r.created for r in results)
    assert len({r.memory.id for r in results}) == 10
    # Two facts changed each time: not sure it is the same thing, so a person decides.
    assert {r.action for r in results[1:]} == {"proposed"}


def test_updates_wait_for_review_when_the_setting_says_so(db_path, clock):
    config = Config.defaults().with_overrides({"sameness.updates": "propose"})
    with Store.open(db_path, project="demo", clock=clock, config=config) as store:
        old = store.add("Use Node 18 for the build image", type="decision").memory
        result = store.add("Use Node 20 for the build image", type="decision")
        assert result.action == "proposed" and store.get(old.id).status == "active"


def test_resolving_supersede_then_undo_brings_the_proposal_back(store):
    old = store.add("Always call the payments API from the web worker", type="pitfall").memory
    new = store.add("Never call the payments API from the web worker", type="pitfall").memory
    curator = Curator(store, actor="test")
    curator.resolve(new.id, "supersede")
    assert store.get(new.id).status == "active" and "proposal" not in store.get(new.id).meta
    assert store.get(old.id).status == "inactive" and store.get(old.id).meta["superseded_by"] == new.id
    assert store.events(old.id)[-1].kind == "resolved"
    assert store.relations.proposals() == []
    curator.undo()
    assert store.get(new.id).status == "pending" and store.get(new.id).meta["proposal"]["other"] == old.id
    restored = store.get(old.id)
    assert restored.status == "active" and "superseded_by" not in restored.meta
    assert [m.id for m, _ in store.relations.proposals()] == [new.id]


def test_resolving_merge_keeps_one_memory_with_both_histories(store):
    from store.engine.sameness import compare

    old = store.add("Tests run with vitest in watch mode", type="pattern").memory
    new = store.add("Tests run with vitest in CI mode", type="pattern", reinforce=False).memory
    assert store.relations.propose(new.id, old.id, compare(old.content, new.content))
    Curator(store).resolve(new.id, "merge", text="Tests run with vitest, in watch mode locally and CI mode in CI")
    kept = store.get(old.id)
    assert kept.content.startswith("Tests run with vitest, in watch mode")
    assert store.get(new.id).status == "deleted"
    assert any(e.kind == "merged" and e.detail["text"] == new.content for e in store.events(old.id))
    assert any(e.kind == "merged" and e.detail["into"] == old.id for e in store.events(new.id))


def test_resolving_wrong_new_trashes_it_and_wrong_old_contradicts_the_other(store):
    old = store.add("Never use npm in this repository", type="pitfall").memory
    new = store.add("Use npm in this repository", type="pitfall").memory
    Curator(store).resolve(new.id, "wrong-new")
    assert store.get(new.id).status == "deleted" and store.get(old.id).status == "active"
    again = store.add("You should use npm in this repository", type="pitfall").memory
    assert again.status == "pending"
    Curator(store).resolve(again.id, "wrong-old")
    assert store.get(again.id).status == "active"
    assert any(e.kind == "contradicted" for e in store.events(old.id))
    assert store.get(old.id).status == "inactive"


def test_resolving_a_memory_without_a_proposal_is_refused(store):
    memory = store.add("Plain fact about the build", type="context").memory
    with pytest.raises(InvalidInput, match="holds no proposal"):
        Curator(store).resolve(memory.id, "keep-both")
    with pytest.raises(InvalidInput, match="unknown choice"):
        Curator(store).resolve(memory.id, "both")


def test_the_block_never_holds_a_memory_and_its_successor(store):
    old = store.add("The changelog boundary is now v0.2.9", type="context").memory
    new = store.add("The changelog boundary is now v0.3.0", type="context").memory
    assert store.get(old.id).status == "inactive"
    # Someone makes the old one active again: both are candidates, only the successor goes in.
    store.edit(old.id, status="active")
    result = prime(store, InjectionContext(project="demo", task="changelog boundary"))
    included = {r.memory.id for r in result.included}
    assert new.id in included and old.id not in included
    reasons = {r.memory.id: r.reason for r in result.excluded}
    assert reasons[old.id] == f"superseded by {new.id}"


def test_a_consolidation_proposal_is_a_compare_and_set(store):
    from store.engine.sameness import compare

    a = store.add("Deploy with the blue pipeline", type="context").memory
    b = store.add("Deploy with the green pipeline", type="context", reinforce=False).memory
    verdict = compare(a.content, b.content)
    assert not store.relations.propose(b.id, a.id, verdict, expected_version=b.version - 1)
    assert store.relations.propose(b.id, a.id, verdict, expected_version=b.version)
    assert not store.relations.propose(b.id, a.id, verdict)  # one proposal at a time
    assert store.get(b.id).meta["proposal"]["other"] == a.id
    assert store.events(a.id)[-1].kind == "proposed"


def test_resolving_clears_the_proposal_by_compare_and_set(store):
    from store.engine.errors import Conflict

    old = store.add("Never use npm in this repository", type="pitfall").memory
    new = store.add("Use npm in this repository", type="pitfall").memory
    with pytest.raises(Conflict):
        store.set_meta(new.id, {}, new.version - 1)  # a stale read writes nothing
    assert store.get(new.id).meta["proposal"]["other"] == old.id
    Curator(store).resolve(new.id, "keep-both")
    assert store.get(new.id).version > new.version and "proposal" not in store.get(new.id).meta
