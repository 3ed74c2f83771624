"""The same lesson taught again in a later session (issue 40): a candidate whose title says what
a memory of an earlier session says reinforces that memory and records a `retaught` event, with
no second inbox item; one that changes it is proposed as an update of it. Beside each, a lesson
of the same shape that is another lesson stays a candidate of its own. The transcripts are in
the test's own words."""

from __future__ import annotations

from store.browse.search import MemoryFilter, list_memories
from store.capture.ingest import ingest_file
from tests.transcript_support import Conversation


def _memories(store):
    return list_memories(store, MemoryFilter(statuses=("pending", "active")), sort="created", limit=None)


def _session(tmp_path, name: str, rule: str):
    talk = Conversation(name)
    talk.said("Tidy up the invoice exporter before the release.")
    talk.replied("I'll start with the CSV writer.")
    talk.called("Edit", file_path="/home/dev/app/export/csv_writer.py", old_string="a", new_string="b")
    talk.answered("The file has been updated.")
    talk.said(rule)
    talk.replied("Understood.")
    return talk.write(tmp_path / f"{name}.jsonl")


def test_a_lesson_taught_again_in_a_later_session_reinforces_the_memory(store, tmp_path):
    ingest_file(store, _session(tmp_path, "monday", "never use float for money amounts, use Decimal"))
    (first,) = _memories(store)
    ingest_file(store, _session(tmp_path, "thursday", "never use float for the money amounts; use Decimal"))
    (again,) = _memories(store)
    assert again.id == first.id
    assert again.confidence > first.confidence
    retaught = [e for e in store.events(first.id) if e.kind == "retaught"]
    assert len(retaught) == 1 and retaught[0].session_id == "thursday"
    assert {e["session"] for e in again.meta["evidence"]} == {"monday", "thursday"}


def test_another_lesson_of_the_same_shape_is_a_candidate_of_its_own(store, tmp_path):
    ingest_file(store, _session(tmp_path, "monday", "never use float for money amounts, use Decimal"))
    ingest_file(store, _session(tmp_path, "thursday", "never log the customer emails in the exporter"))
    assert len(_memories(store)) == 2
    assert not [e for m in _memories(store) for e in store.events(m.id) if e.kind == "retaught"]


def test_a_lesson_that_changes_an_earlier_one_is_proposed_as_its_update(store, tmp_path):
    ingest_file(store, _session(tmp_path, "monday", "always run the exporter tests with `pytest -n 4`"))
    (first,) = _memories(store)
    ingest_file(store, _session(tmp_path, "thursday", "always run the exporter tests with `pytest -n 8`"))
    later = [m for m in _memories(store) if m.id != first.id]
    assert len(later) == 1
    (new,) = later
    assert new.status == "pending"
    assert new.meta["proposal"]["other"] == first.id
    assert new.meta["proposal"]["kind"] in ("update", "contradiction")
    assert store.get(first.id).status == first.status  # never merged silently


def test_the_same_lesson_read_as_another_type_is_still_the_same_lesson(store, tmp_path):
    kept = store.add("The user said to keep money amounts out of floats.", type="preference",
                     title="Never use float for money amounts; use Decimal", session_id="monday",
                     source="automatic", status="active").memory
    ingest_file(store, _session(tmp_path, "thursday", "never use float for money amounts, use Decimal"))
    assert [m.id for m in _memories(store)] == [kept.id]
    (event,) = [e for e in store.events(kept.id) if e.kind == "retaught"]
    assert event.session_id == "thursday" and "same" in event.detail["why"]


HOOK = ("Stop hook feedback:\n[/home/dev/app/.claude/hooks/stop.sh]: # Running checks...\n\n"
        "Cannot stop while `ruff check` reports errors. Run `ruff check --fix` first.")


def test_a_hooks_feedback_said_again_in_a_later_session_is_not_the_user_teaching(store, tmp_path):
    for day in ("monday", "tuesday", "wednesday"):
        talk = Conversation(day)
        talk.said("Tidy up the invoice exporter before the release.")
        talk.replied("Done; stopping now.")
        talk.said(HOOK)
        talk.replied("I'll fix the lint errors first.")
        ingest_file(store, talk.write(tmp_path / f"{day}.jsonl"))
    (hook,) = _memories(store)
    assert hook.type == "constraint" and hook.session_id == "monday"
    assert [e.kind for e in store.events(hook.id)] == ["created"]  # neither reinforced nor retaught
    # beside it, a rule the user types again is re-taught (the test above)


def _one_session(tmp_path, later: str):
    """One session: a rule inside the opening request, then `later` (line 3)."""
    talk = Conversation("friday")
    talk.said("Walk me through how the exporter's retry works. Don't write any code.")
    talk.replied("The exporter retries three times with a backoff.")
    talk.said(later)
    talk.replied("It is common; a jittered backoff would be safer.")
    return talk.write(tmp_path / "friday.jsonl")


def test_a_lesson_said_twice_in_one_session_is_one_memory(store, tmp_path):
    """Said again later in the same session in other words ("Don't write any code", then
    "Don't write code"), it is one lesson: reinforced, no second candidate, no `retaught` event
    (that names a later session)."""
    ingest_file(store, _one_session(tmp_path, "Is that the recommended way? Why or why not? Don't write code."))
    (memory,) = _memories(store)
    assert memory.title == "Don't write any code"
    assert [e.kind for e in store.events(memory.id)] == ["created", "reinforced"]
    assert [e["line"] for e in memory.meta["evidence"]] == [1, 3]  # both turns are its evidence


def test_two_lessons_of_one_session_stay_two(store, tmp_path):
    ingest_file(store, _one_session(tmp_path, "Never log the customer emails in the exporter."))
    assert len(_memories(store)) == 2


def test_of_two_earlier_statements_as_close_the_most_recently_changed_is_retaught(store, tmp_path, clock):
    """A tie goes to the memory changed last, not to the one whose id's random end sorts last:
    the ids here are drawn so that the older memory's sorts last."""
    ends = iter(["ffff", "0000"])
    store.new_id = lambda now: f"mem-{int(now)}-{next(ends)}"
    rule = "Never use float for money amounts; use Decimal"
    older = store.add("Money amounts stay out of floats.", type="convention", title=rule, session_id="monday",
                      source="automatic", status="active").memory
    clock.advance(seconds=0.5)  # the same second: the ids differ only in their ends
    newer = store.add("The user keeps money out of floats.", type="preference", title=rule, session_id="tuesday",
                      source="automatic", status="active").memory
    assert older.id > newer.id and newer.id != older.id
    ingest_file(store, _session(tmp_path, "thursday", "never use float for money amounts, use Decimal"))
    retaught = {m.id for m in _memories(store) if any(e.kind == "retaught" for e in store.events(m.id))}
    assert retaught == {newer.id}
