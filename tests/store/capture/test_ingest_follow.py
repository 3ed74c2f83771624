"""`ingest --follow` on a file as a live session writes it: empty at first, then appended to; and
a file truncated, replaced or rewritten under the follower is noticed and said, not ignored.

The follower's `stopping` callback is its pulse: it is asked each time the follower has read all
there is, so the test changes the file at a known point instead of sleeping."""

from __future__ import annotations

import os

import pytest

from store.engine.errors import InvalidInput
from store.capture.ingest import IngestOptions, ingest_file
from tests.transcript_support import assistant_line, kinds


class Pulse:
    """`stopping` for a follower: runs `steps` in turn, one each time the follower is idle, and
    says stop when they are done."""

    def __init__(self, *steps) -> None:
        self.steps = list(steps)

    def __call__(self) -> bool:
        if not self.steps:
            return True
        self.steps.pop(0)()
        return False


def append(path, *lines):
    def step():
        with path.open("a") as handle:
            handle.write("".join(line + "\n" for line in lines))
    return step


def idle():
    pass


def test_a_followed_file_that_starts_empty_is_read_as_the_transcript_it_becomes(store, tmp_path):
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"")
    pulse = Pulse(append(live, assistant_line("s1", "MEMORY:fix:appended after the start", 0)), idle, idle)
    report = ingest_file(store, live, IngestOptions(follow=True), stopping=pulse)
    assert report.format == "transcript" and report.session_id == "s1"
    assert kinds(store, "s1") == {"assistant": 1, "marker": 1, "memory_created": 1}


@pytest.mark.parametrize("change", ["truncate", "replace", "rewrite"])
def test_a_file_changed_under_the_follower_is_said_and_what_was_read_kept(store, tmp_path, change):
    live = tmp_path / "live.jsonl"
    first = [assistant_line("s2", "first", 0), assistant_line("s2", "second", 1)]
    live.write_text("".join(line + "\n" for line in first))

    def change_it():
        other = assistant_line("s2", "something else entirely, longer than what was there", 9)
        if change == "truncate":
            live.write_text("")
        elif change == "replace":
            new = tmp_path / "new.jsonl"
            new.write_text(other + "\n")
            os.replace(new, live)
        else:  # rewritten in place, as long as before or longer
            with live.open("r+") as handle:
                handle.write(other + "\n" + other + "\n")

    with pytest.raises(InvalidInput) as raised:
        ingest_file(store, live, IngestOptions(follow=True), stopping=Pulse(change_it, idle, idle))
    message = str(raised.value)
    word = {"truncate": "truncated", "replace": "replaced", "rewrite": "rewritten"}[change]
    assert f"{live} was {word} while it was followed" in message
    assert "--session NEW" in message and "2 lines read before it changed are kept" in message
    assert kinds(store, "s2") == {"assistant": 2}
    assert store.sessions.get("s2").ended_at is not None  # the run ended; it is not left live
