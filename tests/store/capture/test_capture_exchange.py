"""Decisions made in a question and its answer, and doubts the agent's answer confirms (issue 28):
"should we keep the ORM or go raw SQL?" answered "I'd recommend keeping the ORM" is a decision
once the user goes on without objecting; "are you sure we don't already have retries?" answered
"Retries are already implemented" is a fact, though the agent never says "you're right". And
what is no decision: a question for information, an answer without a verdict, a verdict the
user turns down. Every transcript here is written in the test's own words."""

from __future__ import annotations

import pytest

from store.browse.search import MemoryFilter, list_memories
from store.capture import exchange
from store.capture.ingest import ingest_file
from tests.transcript_support import Conversation

HOOK_RAN = "\x1b[1mPreToolUse:Read\x1b[22m [python hooks/guard.py] completed successfully"


def pending(store):
    found = list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=None)
    return sorted(found, key=lambda m: m.meta["evidence"][0]["line"])


def test_the_questions_that_ask_which_way_to_go():
    assert exchange.choice_question("Trim the backlog first. Should we keep the ORM or write raw SQL?") == \
        "Should we keep the ORM or write raw SQL?"
    assert exchange.choice_question("is it worth adding a redis cache here? traffic is low") == \
        "is it worth adding a redis cache here?"
    assert exchange.choice_question("¿vale la pena migrar a pnpm?") == "vale la pena migrar a pnpm?"
    for text in ("where does the worker read its config?", "should I go ahead?", "what do you think?",
                 "Use the ORM everywhere.", "can you run the tests?", "should we also add tests for this?",
                 "should I retry?"):
        assert exchange.choice_question(text) is None, text


def test_the_agents_verdict_on_what_was_asked():
    asked = "do we need a message queue for the email jobs?"
    assert exchange.verdict(asked, "## Queue or not\n\n**Recommendation:** keep the email jobs on the cron runner.") \
        == "Keep the email jobs on the cron runner"
    assert exchange.verdict(asked, "I'd recommend a plain cron runner for the email jobs, a queue adds ops work.") \
        == "A plain cron runner for the email jobs, a queue adds ops work"
    assert exchange.verdict(asked, "No need for a queue: the email jobs run once an hour.").startswith("No need for a queue")
    # no verdict, or a verdict about something else
    assert exchange.verdict(asked, "Let me look at how the email jobs are scheduled first.") is None
    assert exchange.verdict(asked, "**Recommendation:** rename the logger module.") is None


def _asked(talk: Conversation, question: str, answer: str, then: str | None = None) -> tuple[int, int]:
    talk.said("Clean up the billing service before the release.")
    talk.replied("Done: the dead handlers are gone.")
    asked = talk.said(question)
    talk.replied("Let me check how the exports are produced today.")
    talk.called("Read", file_path="/home/dev/app/billing/export.py")
    talk.noted(HOOK_RAN)  # a hook ran and let the call through: the user has not spoken
    talk.answered("def export(): ...")
    answered = talk.replied(answer)
    if then is not None:
        talk.said(then)
        talk.replied("On it.")
    return asked, answered


def test_a_choice_asked_and_answered_is_a_decision_with_the_question_and_the_answer(store, tmp_path):
    talk = Conversation("asked")
    asked, answered = _asked(talk, "Should we keep generating the CSV exports ourselves or move them to the reporting service?",
           "## CSV exports\n\n**Recommendation:** keep generating the CSV exports in billing; the reporting "
           "service has no per-tenant filters yet.",
           then="ok, add the tenant column to the export then")
    ingest_file(store, talk.write(tmp_path / "asked.jsonl"))
    (decision,) = pending(store)
    assert decision.type == "decision"
    assert decision.title == "Keep generating the CSV exports in billing; the reporting service has no per-tenant filters yet"
    assert 'Asked: "Should we keep generating the CSV exports ourselves' in decision.content
    assert "Answered: CSV exports; Recommendation" in decision.content
    assert [e["line"] for e in decision.meta["evidence"]] == [asked, answered]


NOT_DECISIONS = {
    "a question for information": ("which bucket do the CSV exports go to?",
                                   "**Recommendation:** the CSV exports go to s3://billing-exports."),
    "an answer without a verdict": ("should we move the CSV exports to the reporting service?",
                                    "The reporting service exposes a CSV endpoint and a JSON endpoint."),
    "a verdict the user turns down": ("should we move the CSV exports to the reporting service?",
                                      "I'd recommend keeping the CSV exports in billing for now.",
                                      "no, move them, the reporting team owns exports from now on"),
}


@pytest.mark.parametrize("kind", NOT_DECISIONS)
def test_no_decision_from_questions_for_information_answers_without_a_verdict_or_a_verdict_turned_down(
        store, tmp_path, kind):
    talk = Conversation(kind.replace(" ", "-"))
    _asked(talk, *NOT_DECISIONS[kind])
    ingest_file(store, talk.write(tmp_path / "none.jsonl"))
    assert not [m for m in pending(store) if m.type == "decision"]


def test_a_doubt_the_agent_confirms_without_saying_youre_right_is_a_fact(store, tmp_path):
    talk = Conversation("doubt")
    talk.said("Add retries to the webhook sender.")
    talk.replied("I'll design a retry queue with backoff for the webhook sender.")
    talk.said("what about the dead letter table? and are you sure we don't already have retries in the webhook client?")
    talk.called("Grep", pattern="retry", path="/home/dev/app/webhooks")
    talk.noted(HOOK_RAN)
    talk.answered("webhooks/client.py: @retry(attempts=5, backoff=2)")
    answer = talk.replied("## Found it\n\nThe webhook client ALREADY retries: 5 attempts with exponential backoff "
                          "(webhooks/client.py).")
    ingest_file(store, talk.write(tmp_path / "doubt.jsonl"))
    (fact,) = pending(store)
    assert fact.type == "context"
    assert fact.title == "The webhook client ALREADY retries: 5 attempts with exponential backoff (webhooks/client.py)"
    assert "ALREADY retries: 5 attempts" in fact.content and fact.meta["evidence"][-1]["line"] == answer


def test_a_doubt_confirmed_as_a_whole_is_titled_with_the_line_about_what_was_asked(store, tmp_path):
    """"Everything is ALREADY there!" says nothing of what was asked: the title is the reply's first
    line about it, not the user's question."""
    talk = Conversation("doubt-whole")
    talk.said("Add invoice export to the billing screen.")
    talk.replied("I'll build an export service for invoices first.")
    talk.said("are you sure we don't already have invoice export somewhere?")
    answer = talk.replied("## Everything is ALREADY there!\n\n- Invoice export: done in billing/export.py "
                          "(CSV and PDF)\n- Tests: passing")
    ingest_file(store, talk.write(tmp_path / "doubt-whole.jsonl"))
    (fact,) = pending(store)
    assert fact.type == "context" and fact.meta["evidence"][-1]["line"] == answer
    assert fact.title == "Invoice export: done in billing/export.py (CSV and PDF)"


def test_a_doubt_the_agent_answers_otherwise_is_dropped(store, tmp_path):
    talk = Conversation("doubt-no")
    talk.said("Add retries to the webhook sender.")
    talk.replied("I'll design a retry queue with backoff for the webhook sender.")
    talk.said("are you sure we don't already have retries in the webhook client?")
    talk.replied("I checked webhooks/client.py: it sends once and gives up, so the queue is needed.")
    ingest_file(store, talk.write(tmp_path / "doubt-no.jsonl"))
    assert pending(store) == []


def test_a_note_that_a_hook_ran_is_no_turn_of_the_users(store, tmp_path):
    """Claude Code writes a system record each time a hook runs and lets the call through: the
    agent's answer after it still answers the user's question."""
    talk = Conversation("notes")
    _asked(talk, "is it worth keeping the legacy XML export at all?",
           "The legacy XML export is not worth keeping: nothing has called it since March.")
    ingest_file(store, talk.write(tmp_path / "notes.jsonl"))
    (decision,) = pending(store)
    assert decision.title == "The legacy XML export is not worth keeping: nothing has called it since March"


def _stopped_after(talk: Conversation, request: str, words: str) -> int:
    talk.said(request)
    talk.called("Task", description="convert", prompt="convert the first script")
    talk.stopped()
    said = talk.said(words)
    talk.replied("Understood.")
    return said


def test_a_request_the_user_has_to_make_twice_is_how_they_want_it_done(store, tmp_path):
    talk = Conversation("twice")
    said = _stopped_after(talk, "Convert the three report scripts to async workers, one worker per script",
                          "that was only the first script - I said one worker per script")
    ingest_file(store, talk.write(tmp_path / "twice.jsonl"))
    (preference,) = pending(store)
    assert preference.type == "preference" and preference.meta["evidence"][0]["line"] == said
    assert preference.title == "Convert the three report scripts to async workers, one worker per script"
    assert 'Their request before: "Convert the three report scripts' in preference.content


@pytest.mark.parametrize("words", ["run the migration again", "that was only the first one - carry on",
                                   "I said nothing about the docs, keep going"])
def test_a_retry_or_a_remark_after_a_stop_is_no_request_made_twice(store, tmp_path, words):
    talk = Conversation("retry")
    _stopped_after(talk, "Run the migration on staging", words)
    ingest_file(store, talk.write(tmp_path / "retry.jsonl"))
    assert pending(store) == []


def _filed(talk: Conversation, words: str, command: str) -> int:
    talk.said("Write the specs for the billing export and the invoice PDF.")
    talk.replied("Both specs are written in docs/specs/.")
    said = talk.said(words)
    talk.replied("Sure.")
    talk.called("Bash", command=command)
    talk.answered("")
    talk.called("Bash", command="git mv docs/specs/billing-export.md docs/specs/done/")
    talk.answered("")
    return said


def test_an_instruction_the_agent_makes_a_new_folder_for_says_where_those_things_go(store, tmp_path):
    talk = Conversation("filed")
    said = _filed(talk, "ok mve the finished specs under done", "mkdir -p docs/specs/done")  # one letter off
    ingest_file(store, talk.write(tmp_path / "filed.jsonl"))
    (convention,) = pending(store)
    assert convention.type == "convention" and convention.meta["evidence"][0]["line"] == said
    assert convention.title == "Mve the finished specs under done: `docs/specs/done/`"
    assert "`docs/specs/done/` was created for it" in convention.content


@pytest.mark.parametrize("words, command", [
    ("add a parser for the config files", "mkdir -p src/parsers"),  # new code gets a folder: no filing
    ("move the finished specs under done", "mkdir -p build/tmp"),  # a folder that is not the one asked for
    ("move the finished specs under done?", "mkdir -p docs/specs/done"),  # a question
])
def test_no_filing_convention_from_other_instructions_or_folders(store, tmp_path, words, command):
    talk = Conversation("not-filed")
    _filed(talk, words, command)
    ingest_file(store, talk.write(tmp_path / "not-filed.jsonl"))
    assert pending(store) == []


def _checked(talk: Conversation, statement: str, answer: str) -> tuple[int, int]:
    talk.said("Point the load test at staging.")
    talk.called("Read", file_path="/home/dev/app/deploy/staging.env")
    talk.answered("DATABASE_URL=postgres://staging-db/app")
    checked = talk.replied(statement)
    return checked, talk.said(answer)


@pytest.mark.parametrize("statement, answer, title", [
    ("Before I start: the staging database is a nightly copy of production, right?", "exactly",
     "The staging database is a nightly copy of production"),
    ("He mirado la configuración. La base de datos de staging es una copia nocturna de producción, ¿verdad?", "sí",
     "La base de datos de staging es una copia nocturna de producción"),
])
def test_a_fact_the_agent_asks_the_user_to_confirm_and_they_do_is_context(store, tmp_path, statement, answer, title):
    talk = Conversation("confirmed")
    checked, said = _checked(talk, statement, answer)
    ingest_file(store, talk.write(tmp_path / "confirmed.jsonl"))
    (fact,) = pending(store)
    assert fact.type == "context" and fact.title == title
    assert [e["line"] for e in fact.meta["evidence"]] == [checked, said]


@pytest.mark.parametrize("statement, answer", [
    ("The staging database is a nightly copy of production, right?", "yes but only on weekdays"),  # a "but"
    ("The staging database is a nightly copy of production, right?", "no, it is restored every hour"),
    ("The staging database is a nightly copy of production.", "yes"),  # nothing was asked
    ("The staging database is a nightly copy of production, right?", "also run the smoke tests first"),
])
def test_no_context_from_a_check_the_user_does_not_confirm(store, tmp_path, statement, answer):
    talk = Conversation("not-confirmed")
    _checked(talk, statement, answer)
    ingest_file(store, talk.write(tmp_path / "not-confirmed.jsonl"))
    assert not [m for m in pending(store) if "nightly copy" in m.title]
