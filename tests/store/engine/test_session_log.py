"""The session log's data: sessions with their counts and duration, newest first, and the tail
of a session's log after the last entry shown."""

from __future__ import annotations

import pytest

from insight_support import LIVE_SESSION, add_live_session

from store import Config, Store
from store.engine.session_log import summaries, tail

pytestmark = pytest.mark.both_backends


def test_a_session_counts_its_markers_memories_and_errors(db_path, clock):
    add_live_session(db_path, "demo", clock.at)
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        store.sessions.append_activity(LIVE_SESSION, "memory_reinforced", "fix: reinforced", at=clock.at)
        (summary,) = summaries(store)
    assert summary.session.id == LIVE_SESSION and summary.live
    assert (summary.markers, summary.rejected, summary.created, summary.reinforced, summary.errors) == (1, 1, 1, 1, 1)
    assert summary.activities == 12
    assert summary.duration == 20 * 60  # still running: up to its latest entry


def test_an_ended_session_lasts_until_its_end_and_newest_come_first(store, clock):
    store.sessions.ensure("old", started_at=clock.at - 7200)
    store.sessions.update("old", ended_at=clock.at - 7200 + 600)
    store.sessions.ensure("new", started_at=clock.at - 60)
    store.sessions.ensure("elsewhere", project="other", started_at=clock.at)
    listed = summaries(store)
    assert [s.session.id for s in listed] == ["new", "old"]
    new, old = listed
    assert old.duration == 600 and not old.live
    assert new.activities == 0 and new.last_at is None and new.duration == 0


def test_the_tail_holds_only_entries_after_the_last_one_shown(store):
    store.sessions.ensure("s")
    for n, kind in enumerate(["prompt", "tool_use", "tool_error", "marker", "tool_use"]):
        store.sessions.append_activity("s", kind, f"entry {n}")
    assert [a.seq for a in tail(store, "s")] == [0, 1, 2, 3, 4]
    assert [a.summary for a in tail(store, "s", after_seq=2)] == ["entry 3", "entry 4"]
    assert [a.seq for a in tail(store, "s", after_seq=0, kinds=("tool_use", "marker"))] == [1, 3, 4]
    assert tail(store, "s", after_seq=4) == []
