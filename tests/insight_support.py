"""Store histories the insight views' tests share: a memory whose history holds every event
kind, and a session still being written (no end yet), each built through the real `Store` API
on a store file with a clock moved along."""

from __future__ import annotations

from pathlib import Path

from store import Config, FrozenClock, Store
from store.engine.clock import DAY
from store.engine.core import Change
from store.engine.curation import Curator
from store.engine.feedback import judged_not_relevant
from store.engine.lifecycle import contradict
from store.engine.openings import keep_opened
from store.engine.vocabulary import EVENT_KINDS

LIVE_SESSION = "5e55-live-critic"
EVERY_KIND_TITLE = "Ack killmails before the 30 s visibility timeout"


def add_every_event(store: Store, clock: FrozenClock, start: float, session_id: str | None = None) -> str:
    """A memory with one event of each kind, a few days apart from `start`; returns its id."""
    content = "RedisQ re-delivers a killmail whose ack comes after 30 s; ack first, then enrich."
    clock.at = start
    memory = store.add(content, type="pitfall", title=EVERY_KIND_TITLE, hat="critic", scope="zkill",
                       confidence=0.6, session_id=session_id, actor="ingest", reinforce=False,
                       memory_id=f"mem-{int(start)}-ac01").memory
    steps = [
        lambda: store.record_usage([memory.id], session_id=session_id),
        lambda: store.add(content, type="pitfall", scope="zkill", confidence=0.7, session_id=session_id,
                          actor="ingest"),
        lambda: store.apply_changes([Change(memory.id, store.get(memory.id).confidence, 0.4, "active", "active",
                                            {"policy": "grace-weekly"})], "decayed", actor="decay"),
        lambda: store.edit(memory.id, tags=["redisq", "ack"], actor="ui"),
        lambda: store.set_status([memory.id], "inactive", actor="ui"),
        lambda: store.record_event(memory.id, "imported", before=0.4, after=0.4, actor="import"),
        # Anchors need the code on disk (test_anchors.py): their events are written as a check would.
        lambda: store.record_event(memory.id, "anchored", before=0.4, after=0.4, actor="ui",
                                   detail={"added": ["src/feed/redisq.ts:40-52"]}),
        lambda: store.record_event(memory.id, "checked", before=0.4, after=0.4, actor="verify", detail={
            "status": "changed", "was": "fresh", "anchors": ["src/feed/redisq.ts:40-52 changed since 1a2b3c4"]}),
        lambda: _merge_a_weaker_copy(store, memory.id),
        lambda: store.relations.supersede(memory.id, "Ack RedisQ killmails at once; enrichment runs after the ack.",
                                title="Ack RedisQ killmails at once", actor="ui",
                                memory_id=f"mem-{int(start)}-ac03"),
        # A proposal and its resolution (test_sameness_store.py makes real ones): as a write would.
        lambda: store.record_event(memory.id, "proposed", before=None, after=None, actor="ingest",
                                   detail={"kind": "update", "with": f"mem-{int(start)}-ac03"}),
        lambda: store.record_event(memory.id, "resolved", before=None, after=None, actor="ui",
                                   detail={"choice": "keep-both", "with": f"mem-{int(start)}-ac03"}),
        # Taught again in a later session (test_capture_retaught.py recognises it for real).
        lambda: store.record_event(memory.id, "retaught", before=0.6, after=0.7, actor="ingest",
                                   session_id=session_id, detail={"title": "Ack RedisQ killmails at once"}),
        # Shared with the team store (`memdeck share`; test_team_share.py shares for real).
        lambda: store.record_event(memory.id, "shared", before=None, after=None, actor="cli",
                                   detail={"to": "team", "by": "ana", "status": "active"}),
        lambda: store.trash.delete([memory.id], actor="ui"),
        lambda: store.trash.restore([memory.id], actor="ui"),
        lambda: contradict(store, memory.id, actor="mcp", session_id=session_id,
                           detail={"verdict": "wrong", "note": "acks are async now"}),
        lambda: judged_not_relevant(store, memory.id, "Plan the killboard's caching", actor="mcp",
                                    session_id=session_id, detail={"verdict": "not_relevant"}),
        lambda: keep_opened(store, store.get(memory.id), "Plan the killboard's retries", session_id=session_id,
                            actor="mcp"),
    ]
    for step in steps:
        clock.at += 4 * DAY
        step()
    kinds = {e.kind for e in store.events(memory.id)}
    assert kinds == set(EVENT_KINDS), set(EVENT_KINDS) - kinds
    return memory.id


def _merge_a_weaker_copy(store: Store, memory_id: str) -> None:
    weaker = store.add("RedisQ acks late re-deliver kills.", type="pitfall", title="Late acks re-deliver",
                       confidence=0.2, actor="ui", reinforce=False, memory_id=f"{memory_id[:-4]}ac02").memory
    Curator(store, actor="ui").merge([memory_id, weaker.id])


def add_live_session(path: Path, project: str, now: float) -> str:
    """A critic session started 20 minutes before `now` with a log of every common kind and
    no end: what the session log shows while an agent is at work."""
    with Store.open(path, project=project, clock=FrozenClock(now - 20 * 60), config=Config.defaults()) as store:
        start = now - 20 * 60
        store.sessions.ensure(LIVE_SESSION, agent="claude-code", hat="critic",
                             task="Review the reconnect logic in the feed client before release", started_at=start)
        memory = store.add("Reconnects must reset the backoff after a successful connect.", type="fix",
                           title="Reset the backoff after a successful reconnect", hat="critic",
                           session_id=LIVE_SESSION, actor="ingest", reinforce=False,
                           memory_id=f"mem-{int(start)}-11fe").memory
        log = [
            ("prompt", "Review the reconnect logic in the feed client before release", None),
            ("injected", "injected 4 memories (~310 tokens)", None),
            ("tool_use", "Read src/feed/socket.ts", None),
            ("tool_result", "218 lines", None),
            ("assistant", "The reconnect path never resets the backoff after a success.", None),
            ("marker", "[MEMORY:fix:zkill] Reset the backoff after a successful reconnect", None),
            ("memory_created", "fix: Reset the backoff after a successful reconnect", memory.id),
            ("tool_use", "Bash npm test", None),
            ("tool_error", "exit 1: 2 failing tests in test/feed/reconnect.test.ts", None),
            ("marker_rejected", "[MEMORY:pitfall] (empty: no text after the marker)", None),
            ("thinking", "The failing tests expect the old 60 s cap.", None),
        ]
        for seq, (kind, summary, memory_id) in enumerate(log):
            store.sessions.append_activity(LIVE_SESSION, kind, summary, at=start + seq * 70, memory_id=memory_id, seq=seq)
    return LIVE_SESSION


async def open_live_log(pilot) -> None:
    """Open the live session's log and wait until it shows its newest entries: the log scrolls
    to its tail once the layout has given it its height (`ActivityLog._scroll_to_tail`), which on
    a loaded machine can come after the workers are done."""
    from tui.testing import settle
    from tui.widgets.activity_log import ActivityLog

    pilot.app.open_sessions(LIVE_SESSION)
    await settle(pilot)
    for _ in range(200):
        logs = pilot.app.screen.query(ActivityLog)
        log = logs.first() if logs else None
        if log is not None and log.activities:
            tail = min(max(0, len(log.activities) - log.scrollable_content_region.height), log.max_scroll_y)
            if log.scrollable_content_region.height > 0 and round(log.scroll_y) == round(tail):
                return
        await pilot.pause(0.01)
    raise AssertionError("the session log did not scroll to its newest entries")
