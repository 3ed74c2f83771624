"""The timeline's data, read from events: a point per event with the confidence it left, and
the project view's spread of confidence and counts of memories gaining and losing it."""

from __future__ import annotations

import pytest

from insight_support import add_every_event

from store.engine.clock import DAY
from store.engine.core import Change
from store.browse.timeline import EVENT_MARKS, memory_timeline, points, project_confidence
from store.engine.vocabulary import EVENT_KINDS

pytestmark = pytest.mark.both_backends


def test_every_event_kind_is_a_point_with_its_own_mark(store, clock):
    session = store.sessions.ensure("s-1", hat="critic", task="review the feed").id
    memory_id = add_every_event(store, clock, clock.at - 60 * DAY, session_id=session)
    timeline = memory_timeline(store, memory_id)
    assert [p.kind for p in timeline.points] == [e.kind for e in store.events(memory_id)]
    assert {p.kind for p in timeline.points} == set(EVENT_KINDS)
    assert len(set(EVENT_MARKS.values())) == len(EVENT_KINDS)
    assert [p.mark for p in timeline.points][:4] == ["C", "U", "R", "D"]
    assert timeline.points[-1].confidence == store.get(memory_id).confidence
    assert timeline.sessions["s-1"].task == "review the feed"


def test_a_point_says_how_much_its_event_moved_confidence(store, clock):
    memory = store.add("Backoff caps at 60 s", type="fix", confidence=0.6).memory
    clock.at += DAY
    store.record_usage([memory.id])
    clock.at += DAY
    store.apply_changes([Change(memory.id, 0.62, 0.42, "active", "active", {})], "decayed", actor="decay")
    used, decayed = memory_timeline(store, memory.id).points[1:]
    assert round(used.change, 2) == 0.02 and used.confidence == 0.62
    assert round(decayed.change, 2) == -0.2 and decayed.confidence == 0.42


def test_an_event_without_a_confidence_keeps_the_one_before(store):
    memory = store.add("Backoff caps at 60 s", type="fix", confidence=0.7).memory
    store.record_event(memory.id, "edited", before=None, after=None, actor="ui")
    created, edited = memory_timeline(store, memory.id).points
    assert edited.confidence == created.confidence == 0.7 and edited.change == 0


def test_a_history_with_no_recorded_confidence_starts_from_the_memorys(store):
    memory = store.add("Backoff caps at 60 s", type="fix", confidence=0.7).memory
    events = [e.__class__(**{**e.__dict__, "confidence_after": None}) for e in store.events(memory.id)]
    assert [p.confidence for p in points(events, 0.7)] == [0.7]


def test_the_project_view_spreads_confidence_and_counts_who_gains_and_loses(store, clock):
    start = clock.at
    clock.at = start - 60 * DAY
    old = {name: store.add(f"{name} memory text", type="fix", title=name, confidence=c, reinforce=False).memory
           for name, c in (("gains", 0.5), ("loses", 0.8), ("holds", 0.65), ("trashed", 0.9))}
    clock.at = start - 5 * DAY
    store.record_usage([old["gains"].id])
    store.apply_changes([Change(old["loses"].id, 0.8, 0.25, "active", "inactive", {})], "decayed", actor="decay")
    store.trash.delete([old["trashed"].id])
    clock.at = start
    store.add("a memory learned today", type="pattern", confidence=0.95)
    spread = project_confidence(store, days=30)
    assert spread.total == 4  # the trash is not in play
    assert spread.buckets[2] == 1 and spread.buckets[5] == 1 and spread.buckets[6] == 1 and spread.buckets[9] == 1
    assert (spread.gaining, spread.losing, spread.steady) == (1, 1, 2)
    assert spread.inactive_below == 0.3
