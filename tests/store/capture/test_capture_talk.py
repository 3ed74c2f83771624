"""Candidates that read as memories, by how people talk to agents (issue 40). Each transcript is
in the test's own words: what is not a memory (a question, an agreement, a complaint, an
exclamation, a plan to do something once) beside a real rule of the same shape that still
passes; a rule asked politely, said as a wish or as a warning, written as the rule; shouting
and swearing dropped from the title while the lesson stays; a plan approved kept as the decision
it makes, in one sentence, not the plan."""

from __future__ import annotations

import pytest

from store.browse.search import MemoryFilter, list_memories
from store.capture import phrasing, wording
from store.capture.ingest import ingest_file
from tests.transcript_support import Conversation


def _said(tmp_path, store, words: str):
    talk = Conversation(tmp_path.name)
    talk.said("Let's keep going on the invoice dashboard.")
    talk.replied("Sure, I'll pick up the totals widget.")
    talk.said(words)
    talk.replied("Got it.")
    ingest_file(store, talk.write(tmp_path / "talk.jsonl"))
    return [(m.type, m.title) for m in list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=None)
            if m.session_id == tmp_path.name]


# (what is no memory, a rule of the same shape that is one, its type and title)
PAIRS = {
    "a complaint with a question": (
        "it was working before, what is wrong now?",
        "it was working before you touched the cache layer, don't touch the cache layer",
        ("convention", "Don't touch the cache layer")),
    "an agreement": (
        "I agree with all these three actions, lets do them",
        "I agree, and never squash the release commits",
        ("convention", "Never squash the release commits")),
    "an exclamation": (
        "wow, this is so much faster!",
        "wow, never run the seed script against staging!",
        ("convention", "Never run the seed script against staging")),
    "a polite request about the task": (
        "can you run the linter please.",
        "can you avoid serving the coverage report and just print the summary please.",
        ("convention", "Avoid serving the coverage report and just print the summary")),
    "a wish about the task": (
        "I want to add a logout button.",
        "I want to avoid mocking the payment gateway as much as possible.",
        ("convention", "Avoid mocking the payment gateway as much as possible")),
    # issue 38's replay: rules said in shapes capture missed
    "a thing to use for the task": (
        "Use the other fixture.",
        "Use uv pip",
        ("convention", "Use uv pip")),
    "a step proposed with let's": (
        "Awesome, let's get started on the import screen.",
        "Awesome, and never import the legacy CSV twice.",
        ("convention", "Never import the legacy CSV twice")),
    "a choice of the agent's option": (
        "Let's go with option B",
        "Let's go with Postgres for the job queue",
        ("decision", "Let's go with Postgres for the job queue")),
    "a rule with should never": (
        "I think the exporter should write a summary.",
        "The exporter should never write into the source folder.",
        ("convention", "The exporter should never write into the source folder")),
    "a step with a note to keep in mind": (
        "Awesome, let's get started on the import screen.",
        "Awesome, let's get started on the import screen. Also, keep in mind the importer must stay idempotent.",
        ("convention", "The importer must stay idempotent")),
    "a note to keep in mind said as let's": (
        "Let's keep going on the docs.",
        "Keep in mind, let's keep the docs short and plain for a solo developer.",
        ("convention", "Let's keep the docs short and plain for a solo developer")),
    "what else is off limits": (
        "Fix the header, the footer looks fine.",
        "Fix the header, nothing else must be touched!",
        ("convention", "Nothing else must be touched")),
}


@pytest.mark.parametrize("kind", PAIRS)
def test_what_is_no_memory_beside_a_rule_of_the_same_shape(store, tmp_path, kind):
    nothing, rule, expected = PAIRS[kind]
    (tmp_path / "nothing").mkdir()
    assert _said(tmp_path / "nothing", store, nothing) == []
    (tmp_path / "rule").mkdir()
    assert _said(tmp_path / "rule", store, rule) == [expected]


def test_a_warning_is_a_pitfall_written_as_the_rule(store, tmp_path):
    assert _said(tmp_path, store, "Be careful to not load the whole audit table into memory!") == \
        [("pitfall", "Don't load the whole audit table into memory")]


def test_a_default_chosen_is_a_decision(store, tmp_path):
    assert _said(tmp_path, store, "make Spanish the default locale") == [("decision", "Make Spanish the default locale")]


def test_shouting_and_swearing_leave_the_title_and_the_lesson_stays():
    assert phrasing.calm("the deploy script should NEVER touch the prod DB!!") == \
        "The deploy script should never touch the prod DB"
    assert phrasing.calm("search ALL ENGINES only when asked") == "Search all engines only when asked"
    assert phrasing.calm("errors go to stderr AS MUCH AS POSSIBLE") == "Errors go to stderr as much as possible"
    assert phrasing.calm("NO TOQUES el archivo .env, joder!") == "No toques el archivo .env"
    # acronyms said in passing stay
    assert phrasing.calm("Update the README and the HTML report") == "Update the README and the HTML report"
    assert phrasing.calm("Cursor AI should NEVER print the .env files") == "Cursor AI should never print the .env files"
    assert phrasing.rule_title("why the fuck are you editing the lockfile") == "Don't edit the lockfile"


def test_shouting_in_a_transcript(store, tmp_path):
    assert _said(tmp_path, store, "the deploy script should NEVER touch the prod DB (e.g. the orders table)!!") == \
        [("convention", "The deploy script should never touch the prod DB (e.g. the orders table)")]


PLAN = """# Bun Migration Plan

## Overview
Move the monorepo from npm to Bun for faster installs and test runs.

## Steps
1. Stop the dev servers
```
pkill -9 node
```
2. Replace package-lock.json with bun.lockb
3. Switch CI to `bun test`
"""


def test_an_approved_plan_is_the_decision_it_makes_in_one_sentence_not_the_plan():
    title, content = wording.plan_decision(PLAN)
    assert title == "Move the monorepo from npm to Bun for faster installs and test runs"
    assert "pkill" not in content and "Replace package-lock.json with bun.lockb" in content
    named, _ = wording.plan_decision("# Bun Migration Plan\n\n1. Replace the lockfile\n2. Update CI")
    assert named == "Approved: Bun"
    # a plan to do something once decides nothing; one that states a choice does
    assert wording.plan_decision("# Kill All Running Port Processes\n\n1. Find the ports\n2. `pkill -9 node`") is None
    assert wording.plan_decision("# Give every sync job a 10 minute timeout\n\n1. Add the timeout")[0] == \
        "Give every sync job a 10 minute timeout"


def test_a_proposal_wrapped_over_lines_is_titled_with_its_whole_first_sentence():
    text = ("I looked at how the sessions are launched.\n\n## Proposed solution\n"
            "Add a project setting called `skipPermissions` that switches between the safe launch\n"
            "and the fast one. The default stays safe.\n\n" + "Details follow. " * 12 + "\nWould you like me to implement it?")
    assert wording.proposal(text) == \
        "Add a project setting called `skipPermissions` that switches between the safe launch and the fast one"


def test_a_step_proposed_after_stopping_the_agent_corrects_nothing_unless_it_lasts():
    assert wording.read_correction("Let's update the focus of this prompt") is None
    assert wording.read_correction("Awesome, let's get started on the next steps") is None
    said = wording.read_correction("let's never force-push to the release branch")
    assert said is not None and said.type == "convention"


def test_a_proposal_that_opens_by_agreeing_is_titled_with_what_it_proposes():
    analysis = "The auth module reads the anon key at start-up and passes it to every client. " * 4
    agreed = analysis + ("\n\n## Recommendation\n\nYou're absolutely right! Supabase has moved to the new "
                         "publishable keys.\n\nWould you like me to switch the clients over?")
    cheered = analysis + ("\n\n## Recommendation\n\nGreat question!\n\nSwitch every client to the publishable key."
                          "\n\nShall I proceed?")
    assert wording.proposal(agreed) == "Supabase has moved to the new publishable keys"
    assert wording.proposal(cheered) == "Switch every client to the publishable key"
