"""Signals of issue 28 read more widely, each in the test's own words beside a message of the same
shape that is no lesson: a correction that opens by judging the last step ("wrong branch, …"),
a bare rejection followed by "reuse the …", a correction said again in annoyance ("again with
the print statements - drop them"), and "no new …" and "keep in mind that …" inside the opening prompt."""

from __future__ import annotations

import pytest

from store.browse.search import MemoryFilter, list_memories
from store.capture import exchange
from store.capture.ingest import ingest_file
from tests.transcript_support import Conversation

REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
            "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
            "tell you how to proceed.")


def pending(store):
    found = list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=None)
    return [(m.type, m.title) for m in sorted(found, key=lambda m: m.meta["evidence"][0]["line"])]


def _after(store, tmp_path, words: str, how: str, reply: str = "Understood."):
    talk = Conversation("recall")
    talk.said("Add retries to the invoice sync job.")
    talk.replied("I'll add a retry loop around the sync call.")
    talk.called("Bash", command="git checkout -b retries")
    if how == "rejected":
        talk.answered(REJECTED, error=True)
    else:
        talk.answered("Switched to a new branch 'retries'")
    if how == "stopped":
        talk.stopped()
    talk.said(words)
    talk.replied(reply)
    ingest_file(store, talk.write(tmp_path / "recall.jsonl"))
    return pending(store)


def test_a_correction_that_opens_by_judging_the_last_step_is_titled_with_what_is_right(store, tmp_path):
    assert _after(store, tmp_path, "wrong file, the retry settings live in config/sync.toml", "stopped") == \
        [("context", "The retry settings live in config/sync.toml")]


def test_reuse_after_a_bare_rejection_is_a_convention(store, tmp_path):
    assert _after(store, tmp_path, "reuse the backoff helper in lib/backoff.py", "rejected") == \
        [("convention", "Reuse the backoff helper in lib/backoff.py")]


def test_a_bare_next_step_after_a_rejection_is_still_no_lesson(store, tmp_path):
    assert _after(store, tmp_path, "try the other branch", "rejected") == []


def test_the_words_of_a_correction_said_again():
    assert exchange.frustrated("again with the print statements - drop them") == "Drop the print statements"
    assert exchange.frustrated("I told you, run the formatter before committing") == "Run the formatter before committing"
    assert exchange.frustrated("for the third time: no default exports") == "No default exports"
    assert exchange.frustrated("run it again") is None  # a retry, no annoyance
    assert exchange.frustrated("how many times do I have to say it") is None  # annoyed, but no rule said


@pytest.mark.parametrize("words, expected", [
    ("ugh, again with the print statements - drop them", [("convention", "Drop the print statements")]),
    ("again, the sync is slow", []),  # "again" alone: no correction said again
])
def test_a_correction_said_again_in_annoyance_is_a_standing_rule(store, tmp_path, words, expected):
    assert _after(store, tmp_path, words, "said", "Sorry, removing them.") == expected


@pytest.mark.parametrize("opening, expected", [
    ("Add paging to the orders API. Keep the response shape, and no new query params.",
     [("convention", "No new query params")]),
    ("Add paging to the orders API with fifty orders a page.", []),  # the task, and nothing else
    ("Bump the linter to v9. The last run: no new warnings, two errors in the parser.", []),  # a report, not a rule
    # what the task asks the agent to keep in mind is a fact; its steps ("update CLAUDE.md") are the task
    ("Add a logout button. Keep in mind that the session tokens live in httpOnly cookies.",
     [("context", "The session tokens live in httpOnly cookies")]),
    ("Arregla el importador. Ten en cuenta que los CSV vienen en latin-1.", [("context", "Los CSV vienen en latin-1")]),
    ("Add the payouts endpoint, FYI the bank sandbox answers in XML.", [("context", "The bank sandbox answers in XML")]),
    ("Please update CLAUDE.md for the new endpoints.", []),
    ("fyi, the staging api is down", []),  # a note and nothing else is the whole message, not a rule inside a task
])
def test_no_new_things_inside_the_opening_prompt_is_a_rule(store, tmp_path, opening, expected):
    talk = Conversation("opening")
    talk.said(opening)
    talk.replied("On it.")
    ingest_file(store, talk.write(tmp_path / "opening.jsonl"))
    assert pending(store) == expected
