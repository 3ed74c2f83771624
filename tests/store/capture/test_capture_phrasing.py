"""Candidates that read as memories (issue 28): the title states the rule the user's words teach,
their words stay as evidence with the record line, the type comes from the signal, no candidate
comes from a one-off instruction, a question for information or a task opener, and one lesson
said twice is one candidate. Every transcript here is written in the test's own words."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.browse.search import MemoryFilter, list_memories
from store.capture import phrasing, wording
from store.capture.ingest import ingest_file
from tests.transcript_support import Conversation


def pending(store):
    found = list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=None)
    return sorted(found, key=lambda m: m.meta["evidence"][0]["line"])


def test_the_forms_people_correct_an_agent_with_become_the_rule_they_state():
    title = phrasing.rule_title
    assert title("why on earth are you rewriting the lockfile by hand! run `poetry lock` instead") == \
        "Don't rewrite the lockfile by hand; run `poetry lock` instead"
    assert title("hey, why did you delete the fixtures folder?") == "Don't delete the fixtures folder"
    assert title("you haven't updated the changelog again, please") == "Update the changelog again"
    assert title("you forgot to bump the schema version") == "Bump the schema version"
    assert title("no, use the read replica for reports") == "Use the read replica for reports"
    assert title("no mocks of the payment gateway in unit tests") == "No mocks of the payment gateway in unit tests"
    assert title("please stop mocking the clock in these tests") == "Don't mock the clock in these tests"
    assert title("can you remember that staging resets every Sunday night") == "Staging resets every Sunday night"
    assert title("@agent-reviewer ultrathink: always run `make check` before a commit") == \
        "Always run `make check` before a commit"
    assert title("wait, that's the wrong queue - jobs go to the low-priority queue") == \
        "Jobs go to the low-priority queue"  # the clause that says what is right
    assert title("ok can u ultrathink whether the retry budget is too small?") == \
        "Check whether the retry budget is too small"
    assert title("¿por qué estás tocando las migraciones aplicadas? crea una nueva") == \
        "No tocar las migraciones aplicadas; crea una nueva"  # Spanish states a rule in the infinitive
    assert title("deja de usar float para los importes") == "No usar float para los importes"
    # code spans stay whole when the title is cut
    long = "Never call `" + "x" * 30 + "` from the request path, " + "it blocks the event loop " * 6
    assert phrasing.cap(long, 40) == "Never call…" and "`" not in phrasing.cap(long, 40)
    assert phrasing.base_form("using") == "use" and phrasing.base_form("running") == "run"
    assert phrasing.base_form("editing") == "edit" and phrasing.base_form("fixed") == "fix"


def test_one_off_instructions_and_questions_are_no_lessons():
    for text in ("that was only the first file - do the rest the same way", "run it again",
                 "reply right now, no need to keep polishing it", "try that one more time",
                 "make sure it builds", "please add a changelog entry for this"):
        assert phrasing.one_off(text), text
        assert wording.read_correction(text) is None and wording.read_user_text(text) is None, text
    for text in ("eso era solo uno, lánzalos todos a la vez", "responde ahora, no sigas iterando"):  # Spanish
        assert phrasing.one_off(text) and wording.read_correction(text) is None, text
    for text in ("which port should the worker listen on?", "what should SENTRY_DSN be set to?",
                 "¿qué valor debe tener DATABASE_URL?"):
        assert wording.asks(text) and wording.read_correction(text) is None and wording.read_user_text(text) is None
    assert wording.read_rejection("do it in the other file", "Edit: a.py") is None  # about this call only
    assert wording.read_rejection("never edit the lockfile by hand", "Edit: uv.lock").type == "convention"
    # after a stop, a bare next step corrects nothing ("different" is no "n't")
    for text in ("show me the diff first", "hmm, try a different approach", "let me do that myself", "sorry, go on"):
        assert wording.read_correction(text) is None, text
    assert wording.read_correction("we never squash merge").type == "convention"
    remembered = wording.read_user_text("remember that the sandbox API is rate limited to 100 calls a minute")
    assert remembered.type == "context" and remembered.title == "The sandbox API is rate limited to 100 calls a minute"
    assert wording.read_user_text("remember to run `make lint` before you push").type == "convention"
    assert wording.read_correction("wrong file, the handler lives in api/handlers/user.go").type == "context"
    # the same words with a standing rule are a lesson
    assert not phrasing.one_off("from now on run the linter again before every push")
    assert not phrasing.one_off("why are you formatting the vendored code")
    assert not phrasing.one_off("that's wrong, the API returns cents not dollars")
    assert not phrasing.one_off("you need to run the migrations first")
    assert wording.read_correction("isn't that the wrong bucket?") is not None  # a challenge, not a question
    # a challenge question keeps its question as a thing to check, without the asking words
    assert wording.read_user_text("hmm can you verify whether the cache is ever invalidated? looks broken").title == \
        "Check whether the cache is ever invalidated"


def test_a_stop_then_a_challenge_is_a_rule_titled_in_the_imperative_with_the_users_words_as_evidence(store, tmp_path):
    talk = Conversation("challenge")
    talk.said("The nightly export job times out, find out why.")
    talk.called("Edit", file_path="/home/dev/app/vendor/csvlib/writer.py", old_string="a", new_string="b")
    talk.answered("The file /home/dev/app/vendor/csvlib/writer.py has been updated.")
    talk.stopped()
    said = talk.said("why are you patching vendored code! fix our export module")
    talk.replied("Understood, I'll leave vendor/ alone and change export.py.")
    talk.called("Edit", file_path="/home/dev/app/export.py", old_string="a", new_string="b")
    talk.answered("The file /home/dev/app/export.py has been updated.")
    ingest_file(store, talk.write(tmp_path / "challenge.jsonl"))
    (rule,) = pending(store)
    assert rule.title == "Don't patch vendored code; fix our export module"
    assert rule.type == "convention"  # a standing rule, not a failure
    assert rule.content.startswith("Don't patch vendored code; fix our export module.\n")
    first = rule.meta["evidence"][0]
    assert first["line"] == said and first["text"] == "why are you patching vendored code! fix our export module"
    assert rule.file_refs == ("export.py",)


def test_a_correction_right_after_a_failed_call_is_a_pitfall(store, tmp_path):
    talk = Conversation("failed")
    talk.said("Deploy the preview build.")
    talk.called("Bash", command="kubectl apply -f k8s/prod.yaml")
    talk.answered("error: You must be logged in to the server (Unauthorized)", error=True)
    talk.stopped()
    talk.said("why are you applying the prod manifests! previews use k8s/preview.yaml")
    ingest_file(store, talk.write(tmp_path / "failed.jsonl"))
    (pitfall,) = pending(store)
    assert pitfall.type == "pitfall" and pitfall.title.startswith("Don't apply the prod manifests")


def _after_a_stop(talk: Conversation, words: str, reply: str) -> None:
    talk.said("Split the reports module into one file per report.")
    talk.called("Task", description="split reports", prompt="split the first report")
    talk.stopped()
    talk.said(words)
    talk.replied(reply)


NOT_LESSONS = {
    # an instruction about the work in hand, right after the user stopped the agent
    "one-off after a stop": lambda t: _after_a_stop(t, "that was only one report - do them all side by side",
                                                    "You're right, I'll start all of them."),
    "tied to this moment": lambda t: _after_a_stop(t, "answer right now, no need to keep polishing it",
                                                   "Sorry, here it is."),
    "do it again": lambda t: _after_a_stop(t, "do it again", "You're right, again then."),
    "a bare next step": lambda t: _after_a_stop(t, "show me the diff first", "Understood, here is the diff."),
    # a question for information, after a stop or not
    "question after a stop": lambda t: _after_a_stop(t, "what should REPORTS_BUCKET be set to?",
                                                     "You're right to ask: it is read from the environment."),
    "question": lambda t: (t.said("Add an upload size limit."), t.replied("Done."),
                           t.said("which header carries the request id in staging?"),
                           t.replied("You're right, it is X-Request-Id.")),
    # the task itself: the opening prompt, and a new task later in the session
    "opening task": lambda t: (t.said("Port the billing module to Go and make it pass the old tests."),
                               t.replied("Understood, starting with the invoice types.")),
    "a new task mid-session": lambda t: (t.said("Add the invoice PDF endpoint."), t.replied("Done."),
                                         t.said("Now move the shared helpers into reports/common.py"),
                                         t.replied("Understood, moving them.")),
    "a rule about this task only": lambda t: (t.said("Add the invoice PDF endpoint."), t.replied("Done."),
                                              t.said("please make sure the totals match before you commit this"),
                                              t.replied("Understood.")),
    "continue": lambda t: _after_a_stop(t, "continue", "Continuing."),
}


@pytest.mark.parametrize("kind", NOT_LESSONS)
def test_no_candidate_from_one_off_instructions_questions_or_task_openers(store, tmp_path, kind):
    """One small transcript per kind, in our own words; the agent even agrees each time."""
    talk = Conversation(kind.replace(" ", "-"))
    NOT_LESSONS[kind](talk)
    report = ingest_file(store, talk.write(tmp_path / "none.jsonl"))
    assert report.candidates == [] and pending(store) == []


def test_one_lesson_said_twice_is_one_candidate_whose_confidence_rises(store, tmp_path):
    talk = Conversation("twice")
    talk.said("Add the invoice PDF endpoint.")
    talk.called("Edit", file_path="/home/dev/app/billing.py", old_string="a", new_string="b")
    talk.answered("The file /home/dev/app/billing.py has been updated.")
    talk.stopped()
    first = talk.said("why are you storing unit_price as a float! money is integer cents")
    talk.replied("You're right, I shouldn't use floats for money.")
    talk.called("Edit", file_path="/home/dev/app/billing.py", old_string="a", new_string="b")
    talk.answered("The file /home/dev/app/billing.py has been updated.")
    talk.stopped()
    second = talk.said("unit_price is still a float in the PDF totals, fix that")
    talk.replied("My mistake, I missed the totals.")
    ingest_file(store, talk.write(tmp_path / "twice.jsonl"))
    (lesson,) = pending(store)
    lines = [e["line"] for e in lesson.meta["evidence"]]
    assert first in lines and second in lines
    assert [e.kind for e in store.events(lesson.id)] == ["created", "reinforced"]
    created = store.events(lesson.id)[0]
    assert lesson.confidence > created.confidence_after


def test_a_fact_told_after_a_stop_is_context_and_a_rule_reads_rule_first(store, tmp_path):
    talk = Conversation("fact")
    talk.said("Publish the docs site.")
    talk.called("Bash", command="gh repo view acme/docs")
    talk.answered("The user doesn't want to proceed with this tool use. The tool use was rejected.", error=True)
    fact = talk.said("our docs repo is acme-internal/handbook, acme/docs is only a mirror")
    talk.replied("Thanks for the clarification, I'll publish from acme-internal/handbook.")
    talk.said("The export should go through the streaming writer - please never build the whole CSV in memory")
    talk.replied("Understood.")
    ingest_file(store, talk.write(tmp_path / "fact.jsonl"))
    told, rule = pending(store)
    assert told.type == "context" and told.meta["evidence"][0]["line"] == fact
    assert rule.title == "Never build the whole CSV in memory"
    assert rule.content.startswith("Never build the whole CSV in memory.\nThe user said: \"The export should go")


def test_a_hooks_title_drops_its_shouted_label(store, tmp_path):
    talk = Conversation("hook")
    talk.said("Tidy the build folder.")
    talk.called("Bash", command="rm -rf dist")
    talk.answered('PreToolUse:Bash hook blocking error from command: "guard.sh": DENIED: recursive deletes are not '
                  "allowed here, use `make clean`", error=True)
    ingest_file(store, talk.write(tmp_path / "hook.jsonl"))
    (hook,) = pending(store)
    assert hook.title == "A PreToolUse hook blocks `Bash: rm -rf dist`: recursive deletes are not allowed here, use…"
    assert "DENIED: recursive deletes" in hook.content  # the hook's words stay as it said them


def test_you_havent_names_the_task_it_refers_to_and_a_challenge_needs_no_request(store, tmp_path):
    talk = Conversation("refers")
    talk.said("Make every page of the admin app pass the accessibility audit.")
    talk.called("Edit", file_path="/home/dev/app/node_modules/ui/button.js", old_string="a", new_string="b")
    talk.answered("The file /home/dev/app/node_modules/ui/button.js has been updated.")
    talk.stopped()
    talk.said("why are you patching node_modules!")
    talk.replied("You're right, I'll change our components instead.")
    talk.called("Edit", file_path="/home/dev/app/src/Button.tsx", old_string="a", new_string="b")
    talk.answered("The file /home/dev/app/src/Button.tsx has been updated.")
    talk.stopped()
    talk.said("you haven't checked the settings pages at all")
    talk.replied("You're right, checking them now.")
    ingest_file(store, talk.write(tmp_path / "refers.jsonl"))
    challenge, missed = pending(store)
    assert challenge.title == "Don't patch node_modules" and "Their request before" not in challenge.content
    assert missed.title == "Check the settings pages"  # "at all" is emphasis
    assert 'Their request before: "Make every page of the admin app pass the accessibility audit"' in missed.content


_WORDS = ["why", "tf", "are", "you", "u", "editing", "deleting", "using", "no,", "please", "hey", "can", "could", "remember",
          "that", "stop", "touching", "the", "generated", "code", "`x_y.go`", "fix", "source", "!", "?", "-", ";", "never",
          "always", "did", "delete", "haven't", "fixed", "forgot", "to", "run", "tests", "it", "again", "now", "whether",
          "check", "is", "wrong", "instead", "of", "pip", "uv", "@agent-helper", "ultrathink", "make", "sure", "ok,"]


@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=30))
@settings(max_examples=300, deadline=None)
def test_phrasing_never_adds_a_fact(words):
    """Every word of a title is the user's, a bare form of one of theirs, or one of the few words
    that make a rule of a correction ("Don't", "Check whether", "Prefer")."""
    text = " ".join(words)
    title = phrasing.rule_title(text)
    if title is None:
        return
    assert title == phrasing.rule_title(text) and len(title) <= phrasing.LIMIT
    said = {w.strip("`,.!?;:-").lower() for w in text.split()}
    allowed = said | {phrasing.base_form(w) for w in said} | {"don't", "check", "whether", "prefer", ""}
    for word in title.replace("…", " ").replace(";", " ").split():
        assert word.strip("`,.!?;:-").lower() in allowed, (text, title)


def test_a_challenge_asked_as_a_question_the_agent_agrees_with_is_the_rule_it_implies(store, tmp_path):
    talk = Conversation("asked-challenge")
    talk.said("Add paging to the events list.")
    talk.called("Edit", file_path="/home/dev/app/services/events.py", old_string="a", new_string="b")
    talk.answered("The file /home/dev/app/services/events.py has been updated.")
    talk.said("why did you replace fetch_latest_events with a dummy?")
    talk.replied("You're right, I shouldn't have stubbed it out. I'll restore the original implementation.")
    talk.said("why does the list start at page 0?")  # a question the agent answers, not a mistake it owns
    talk.replied("Page numbers start at 0 in the API, so the list does too.")
    ingest_file(store, talk.write(tmp_path / "asked-challenge.jsonl"))
    (rule,) = pending(store)
    assert rule.title == "Don't replace fetch_latest_events with a dummy"  # not the question, as asked
    assert rule.type == "convention"  # a standing rule, as the same challenge said with "!"
    assert rule.meta["evidence"][0]["text"] == "why did you replace fetch_latest_events with a dummy?"


def test_a_question_is_no_rule_even_where_a_label_split_it_before_its_question_mark():
    # "B." ends a sentence for the splitter: the question's first part has no "?" of its own.
    assert wording.read_user_text("Are there any tests we should add for B. Payment Flow?") is None
    assert wording.read_user_text("Should we use pnpm instead of npm") is None
    # Rules of the same shape still are: a label before the rule, a rule that opens as a statement.
    assert wording.read_user_text("Plan A. Never call the live gateway from tests.").title == \
        "Never call the live gateway from tests"
    assert wording.read_user_text("Use pnpm instead of npm").kind == "rule"


def test_a_doubt_about_what_the_agent_broke_is_the_rule_it_implies():
    # "are you sure you are not X-ing Y?": the challenge in a doubt's words, a rule once the agent
    # owns it; beside it, a doubt that names nothing to avoid stays the question it is.
    assert phrasing.as_rule("are you sure you are not breaking other interfaces to the app") == \
        ("Don't break other interfaces to the app", "challenge")
    assert phrasing.as_rule("Are you sure you didn't drop the retry in the exporter") == \
        ("Don't drop the retry in the exporter", "challenge")
    assert phrasing.as_rule("Are you sure that's right")[1] == "said"
    said = wording.read_user_text("are you sure you are not breaking other interfaces to the app? why do you remove routes?")
    assert said.kind == "question" and said.title == "Don't break other interfaces to the app; don't remove routes"
