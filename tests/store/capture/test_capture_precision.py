"""What looks like a lesson but is none, read the way a person reading the inbox would (issue 28):
a rule that leaves its how to the agent ("handle errors properly"), a rule that names nothing
("check whether all of this isn't too much"), a request about how much of the task to do ("you
haven't fixed all the warnings") without the task it was about, the numbers that pick the task's
items, and a tool failing again and again when the session never shows the way out. Each beside a
real rule of the same shape, which still counts. Every transcript here is in the test's own words."""

from __future__ import annotations

from store.browse.search import MemoryFilter, list_memories
from store.capture import phrasing
from store.capture.ingest import ingest_file
from tests.transcript_support import Conversation


def pending(store):
    found = list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=None)
    return sorted(found, key=lambda m: m.meta["evidence"][0]["line"])


def _ingest(store, tmp_path, talk: Conversation):
    ingest_file(store, talk.write(tmp_path / f"{talk.session}.jsonl"))
    return pending(store)


# -- a rule with no concrete how ------------------------------------------------------------------

def test_the_readers_of_a_vague_rule():
    assert phrasing.vague("Handle the errors properly")
    assert phrasing.vague("Write commit messages as appropriate")
    assert not phrasing.vague("Handle errors with the Result type")
    assert not phrasing.vague("Name branches properly: feature/<ticket>-<slug>")  # the how follows


def test_a_rule_that_leaves_its_how_to_the_agent_is_no_candidate_but_a_rule_of_the_same_shape_is(store, tmp_path):
    talk = Conversation("vague")
    talk.said("Add the CSV export to the reports page.")
    talk.replied("I'll start with the export endpoint.")
    talk.said("sounds good, and make sure to handle the errors properly")
    talk.replied("Will do.")
    concrete = talk.said("also make sure to log export errors with the tenant id, never swallow them")
    talk.replied("Noted.")
    (rule,) = _ingest(store, tmp_path, talk)
    assert rule.meta["evidence"][0]["line"] == concrete
    assert rule.title.startswith("Log export errors with the tenant id")


# -- a rule that names nothing ---------------------------------------------------------------------

def test_a_clause_that_names_nothing():
    assert phrasing.names_nothing("Check whether all of this isn't too much")
    assert phrasing.names_nothing("Check whether it is overkill")
    assert not phrasing.names_nothing("Check whether we duplicate the retry logic of the http client")
    assert not phrasing.names_nothing("Check whether `retry()` is called twice")


def test_a_correction_that_names_nothing_is_no_candidate(store, tmp_path):
    talk = Conversation("nothing")
    talk.said("Plan the move of the scheduler to a queue.")
    talk.called("Task", description="plan", prompt="write the migration plan")
    talk.answered("The user doesn't want to proceed with this tool use. The tool use was rejected.", error=True)
    talk.said("hmm can you double check whether all of this isn't too much?")
    talk.replied("You're right, let me step back.")
    assert _ingest(store, tmp_path, talk) == []


def test_a_first_clause_that_names_nothing_gives_way_to_the_one_that_does(store, tmp_path):
    talk = Conversation("names")
    talk.said("Plan the move of the scheduler to a queue.")
    talk.called("Task", description="plan", prompt="write the migration plan")
    talk.answered("The user doesn't want to proceed with this tool use. The tool use was rejected.", error=True)
    said = talk.said("can you check whether this isn't too much? check whether we are rebuilding "
                     "the retry logic the http client already has")
    talk.replied("You're right, the client already retries; I'll drop that part of the plan.")
    (lesson,) = _ingest(store, tmp_path, talk)
    assert lesson.meta["evidence"][0]["line"] == said
    assert lesson.title == "Check whether we are rebuilding the retry logic the http client already has"


# -- how much of the task to do, and the task's own items --------------------------------------------

def test_a_request_about_how_much_of_the_task_to_do():
    assert phrasing.points_back("Fix all the warnings")
    assert phrasing.points_back("Finish the rest")
    assert not phrasing.points_back("Fix all the flaky retry tests")  # it names what
    assert not phrasing.points_back("Always fix all the warnings")  # it says the rule lasts
    assert phrasing.without_instance("Migrate services 4 through 6 to the new logger") == \
        "Migrate services to the new logger"
    assert phrasing.without_instance("Review the pull requests #41 and #42") == "Review the pull requests"
    assert phrasing.without_instance("Use Python 3") == "Use Python 3"  # one number is no list of items
    assert phrasing.without_instance("Keep lines under 100 to 120 characters") == "Keep lines under 100 to 120 characters"


def _after_a_cleanup(name: str) -> Conversation:
    """A session whose task was a clean-up, one edit made, the agent stopped: what the person
    says next judges how much of it was done."""
    talk = Conversation(name)
    talk.said("clean up the type checker warnings in the billing package")
    talk.called("Edit", file_path="/home/dev/app/billing/invoice.py", old_string="a", new_string="b")
    talk.answered("The file was updated.")
    talk.stopped()
    return talk


def test_how_much_of_the_task_to_do_is_kept_with_the_task_it_was_about(store, tmp_path):
    talk = _after_a_cleanup("partly")
    said = talk.said("you haven't fixed all the warnings")
    talk.replied("You're right, several are left. Let me run the checker again.")
    (lesson,) = _ingest(store, tmp_path, talk)
    assert lesson.meta["evidence"][0]["line"] == said
    assert lesson.title == "When asked to clean up the type checker warnings in the billing package: fix all the warnings"


def test_a_correction_of_the_same_shape_naming_what_to_do_keeps_its_own_words(store, tmp_path):
    talk = _after_a_cleanup("named")
    talk.said("you haven't added type hints to the new helpers")
    talk.replied("You're right, I'll add them.")
    (lesson,) = _ingest(store, tmp_path, talk)
    assert lesson.title == "Add type hints to the new helpers"


def test_a_request_made_twice_is_titled_without_the_numbers_that_picked_the_tasks_items(store, tmp_path):
    talk = Conversation("instance")
    talk.said("review the pull requests #41 and #42 with one reviewer agent each")
    talk.called("Task", description="review", prompt="review pull request 41")
    talk.stopped()
    talk.said("that was just one - I said one reviewer agent each")
    talk.replied("Understood, starting both reviewers now.")
    (preference,) = _ingest(store, tmp_path, talk)
    assert preference.title == "Review the pull requests with one reviewer agent each"


# -- a tool failing again and again ------------------------------------------------------------------

def _fails_three_times(talk: Conversation, command: str, error: str) -> list[int]:
    talk.said("Get the docs site building again.")
    lines = []
    for _ in range(3):
        talk.called("Bash", command=command)
        lines.append(talk.answered(error, error=True))
    return lines


def test_a_failure_only_retried_is_no_lesson(store, tmp_path):
    talk = Conversation("retried")
    _fails_three_times(talk, "make docs", "sphinx-build: error: theme 'furo' not available")
    talk.replied("The docs build keeps failing; I'll leave it for now.")
    talk.called("Bash", command="git status")
    talk.answered("nothing to commit")
    assert _ingest(store, tmp_path, talk) == []


def test_a_failure_the_agent_explains_is_a_pitfall_titled_with_why(store, tmp_path):
    talk = Conversation("explained")
    _fails_three_times(talk, "make docs", "sphinx-build: error: theme 'furo' not available")
    talk.replied("The furo theme is not installed in this environment, so the build stops before writing pages.")
    (pitfall,) = _ingest(store, tmp_path, talk)
    assert pitfall.type == "pitfall"
    assert pitfall.title.startswith("`make docs` fails: The furo theme is not installed in this environment")
    assert "The agent found: The furo theme is not installed" in pitfall.content


def test_a_failure_with_a_way_out_names_the_call_that_worked(store, tmp_path):
    talk = Conversation("way-out")
    _fails_three_times(talk, "yarn docs:build", "Error: Cannot find module 'vitepress'")
    talk.called("Bash", command="yarn install")  # other work: not the same command's way out
    talk.answered("Done in 3.2s")
    talk.called("Bash", command="yarn dlx vitepress build docs")
    talk.answered("build complete in 4.1s")
    (pitfall,) = _ingest(store, tmp_path, talk)
    assert pitfall.title == "`yarn docs:build` fails; `yarn dlx vitepress build docs` works instead"
    assert "What worked: `yarn dlx vitepress build docs`" in pitfall.content
