"""A sentence said again (store/capture/said_again.py): what the user told the agent in an earlier
session of the project, said again in a later one, is a candidate, whatever its words; beside
each, a sentence of the same shape that stays nothing. The transcripts are in the test's own
words, ingested into a real store one session after another, as the stop hook does."""

from __future__ import annotations

import pytest

from store.browse.search import MemoryFilter, list_memories
from store.capture import said_again
from store.capture.ingest import ingest_file
from tests.transcript_support import Conversation

pytestmark = pytest.mark.both_backends


def _memories(store):
    return list_memories(store, MemoryFilter(statuses=("pending", "active")), sort="created", limit=None)


def _session(tmp_path, name: str, *prompts: str):
    talk = Conversation(name)
    for prompt in prompts:
        talk.said(prompt)
        talk.replied("On it.")
        talk.called("Edit", file_path="/home/dev/app/notes/PLAN.md", old_string="a", new_string="b")
        talk.answered("The file has been updated.")
    return talk.write(tmp_path / f"{name}.jsonl")


def test_a_step_said_in_an_earlier_session_and_said_again_is_a_candidate_with_both_turns(store, tmp_path):
    ingest_file(store, _session(tmp_path, "monday", "Read @PLAN.md and tick off each item in @DONE.md as you finish it."))
    assert _memories(store) == []  # said once, it is the task in hand
    ingest_file(store, _session(tmp_path, "tuesday", "Start on the exporter.",
                                "Read @PLAN.md and tick off the items in @DONE.md as you go."))
    (said,) = _memories(store)
    assert said.type == "convention" and "said-again" in said.tags
    assert said.title == "Read @PLAN.md and tick off the items in @DONE.md as you go"
    assert "Said in an earlier session too" in said.content and "each item in @DONE.md" in said.content
    evidence = said.meta["evidence"]
    assert evidence[0]["earlier_session"] == "monday" and evidence[1]["text"].startswith("Read @PLAN.md and tick off the items")
    assert said.meta["heuristic"] == "said_again"


def test_said_a_third_time_it_reinforces_the_memory_and_is_a_reteaching(store, tmp_path):
    ingest_file(store, _session(tmp_path, "one", "Read @PLAN.md and tick off each item in @DONE.md as you finish it."))
    ingest_file(store, _session(tmp_path, "two", "Read @PLAN.md and tick off the items in @DONE.md as you go."))
    ingest_file(store, _session(tmp_path, "three", "Fix the exporter.",
                                "Then read @PLAN.md and tick off the items in @DONE.md as you go."))
    (said,) = _memories(store)  # the third saying is the same lesson: one memory
    assert [e.session_id for e in store.events(said.id) if e.kind == "retaught"] == ["three"]


def test_a_sentence_a_memory_already_says_in_other_words_is_left_to_it(store, tmp_path):
    # Said in strong words, the first saying is a candidate of its own; the second is its update
    # by sameness ("every file" → "the files"), for the review, not a lesson said again.
    ingest_file(store, _session(tmp_path, "one", "Always run the formatter on every file you touched before a commit."))
    ingest_file(store, _session(tmp_path, "two", "Always run the formatter on the files you touched before you commit."))
    assert [m for m in _memories(store) if "said-again" in m.tags] == []


def test_a_sentence_left_to_a_memory_takes_no_place_of_the_cap(store, tmp_path):
    steps = ["Read @PLAN.md and tick off each item in @DONE.md as you finish it.",
             "Write the release notes for every merged branch into @CHANGES.md first.",
             "Check the invoice totals against @fixtures/ledger.json after each change."]
    ingest_file(store, _session(tmp_path, "one", "Always run the formatter on every file you touched before a commit.",
                                *steps))
    ingest_file(store, _session(tmp_path, "two", "Always run the formatter on the files you touched before you commit.",
                                *steps))
    assert len([m for m in _memories(store) if "said-again" in m.tags]) == 3 == len(steps)


def test_what_is_said_again_but_is_no_instruction_stays_nothing(store, tmp_path):
    # A question, a report of what happened, a URL and a log line, each said twice.
    first = ("Should we keep the exporter in @PLAN.md for now?", "I'm getting errors from the exporter in export.py again.",
             "Open http://localhost:5000/export?format=csv and check the totals in export.py",
             "export.js:20 Error initializing the exporter in export.js")
    ingest_file(store, _session(tmp_path, "monday", *first))
    ingest_file(store, _session(tmp_path, "tuesday", *first))
    assert _memories(store) == []


def test_another_projects_sentence_and_a_sentence_of_the_same_session_do_not_count(store, tmp_path):
    line = "Always run the formatter on the files you touched before you commit."
    store.project = "other"
    ingest_file(store, _session(tmp_path, "elsewhere", line))
    store.project = "demo"
    ingest_file(store, _session(tmp_path, "here", "Start on the exporter.", line))
    assert [m for m in _memories(store) if "said-again" in m.tags] == []


def test_off_and_the_cap_per_session(store, tmp_path):
    lines = ["Read @PLAN.md and tick off each item in @DONE.md as you finish it.",
             "Write the release notes for every merged branch into @CHANGES.md first.",
             "Check the invoice totals against @fixtures/ledger.json after each change.",
             "Update the screenshots listed in @docs/gallery.md whenever a screen moves.",
             "Run `make lint typecheck` over the exporter package before handing back."]
    assert all(said_again.sentences(line) for line in lines)  # five to propose, over the cap
    ingest_file(store, _session(tmp_path, "monday", *lines))
    store.config = store.config.with_overrides({"capture.said_again.min_shared": 0}, "test")
    ingest_file(store, _session(tmp_path, "tuesday", *lines))
    assert [m for m in _memories(store) if "said-again" in m.tags] == []
    store.config = store.config.with_overrides({"capture.said_again.min_shared": 3}, "test")
    ingest_file(store, _session(tmp_path, "wednesday", *lines))
    assert len([m for m in _memories(store) if "said-again" in m.tags]) == store.config.capture.said_again.per_session


def test_the_sentences_that_can_be_said_again():
    assert said_again.sentences("Read @TODO.md and mark @PROGRESS.md") == ["Read @TODO.md and mark @PROGRESS.md"]
    assert said_again.sentences("I'd like to avoid using mocks as much as possible. Thanks!") == \
        ["I'd like to avoid using mocks as much as possible."]
    assert said_again.sentences("I want to add another view to the stats page") == []  # a wish for the work in hand
    assert said_again.sentences("Are there any tests we should add for B. Payment Flow") == []
    assert said_again.sentences("twat-search web q FontLab -n 2 --json --verbose") == []  # a command line
    assert said_again.sentences("Don't worry about the old exporter in export.py for now") == []
