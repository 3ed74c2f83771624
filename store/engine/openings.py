"""Opening is a use (issue 39, item 2): what an agent does with the memories a prime of its
session listed tells which of them it wanted for that task.

- Opened: the agent opens (MCP `get`, a memory resource) a memory a prime of the session listed,
  as a line of the index or in the block. The memory was wanted for that prime's task: the task
  is kept in `meta["opened"]` (the shape of `meta["helpful"]`) and an `opened` event is written,
  its confidence unchanged (issue 40: being shown is not being wanted, and an opening is weaker
  than a verdict; `store.retrieval.judged` weighs it, `injection.feedback.opened_weight`). Once
  per memory and session: the second opening is a lookup. A memory no prime of the session
  listed is a lookup, nothing more: the agent found it on its own, for no task we know.
- Unopened: a line of the index the agent did not open before the session's next prime (or
  before the session ended) is weak evidence it was not wanted for that task, once a session:
  `meta["unopened"]`, no event (every unopened line would flood the history), read by
  `store.retrieval.judged` (`unopened_weight`, only once a memory has `unopened_after` of them).
  Only in a session that opens memories (a `get` of any memory): an agent with no MCP server,
  or one that never opens what it is offered, leaves lines unopened for reasons that say nothing
  of the memories, and would otherwise make every listed memory sink.

What a prime listed is read from the session's `injected` activities (their `task`, `ids` and
`indexed`); what the agent opened from its `lookup` activities with an `opened` task; which
listings are settled from `note` activities naming them (`settled`), so settling twice (the
next prime and the server's close) counts a listing once.

Another layer's memories (the team store, the team file) keep these in the own store
(`store.layers.judgments`), as its verdicts do: callers above this floor pass `keep`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from store.engine.core import Store
from store.engine.errors import NotFound
from store.engine.feedback import keep_judgment
from store.engine.records import Activity, Memory

OPENED = "opened"
UNOPENED = "unopened"

# keep(memory_id, key, task, session_id) -> whether it was kept: the judgment of a memory that
# is not the own store's (`Layers.keep_listing`); without it, only own memories are judged.
Keeper = Callable[[str, str, str, Optional[str]], bool]


def listing_of(store: Store, session_id: str | None, memory_id: str) -> Activity | None:
    """The newest prime of the session that listed `memory_id` (in its block or as a line of its
    index) for a task, or None."""
    if not session_id:
        return None
    found = None
    for activity in store.sessions.activities(session_id, kinds=("injected",)):
        detail = activity.detail or {}
        if detail.get("task") and memory_id in (*detail.get("ids", ()), *detail.get("indexed", ())):
            found = activity
    return found


def opened_before(store: Store, session_id: str, memory_id: str) -> bool:
    return any((a.detail or {}).get(OPENED) and a.memory_id == memory_id
               for a in store.sessions.activities(session_id, kinds=("lookup",)))


def opening(store: Store, session_id: str | None, memory_id: str) -> str | None:
    """The task an opening of `memory_id` now counts for: the task of the newest prime of the
    session that listed it, unless the session opened it already; else None (a lookup)."""
    listing = listing_of(store, session_id, memory_id)
    if listing is None or opened_before(store, session_id, memory_id):
        return None
    return str(listing.detail["task"])


def keep_opened(store: Store, memory: Memory, task: str, *, session_id: str | None, actor: str,
                evidence: dict[str, float] | None = None) -> None:
    """An own memory was wanted for `task`: the task in `meta["opened"]` and an `opened` event
    (confidence unchanged)."""
    with store.transaction():
        keep_judgment(store, store.get(memory.id), OPENED, task, evidence, session_id)
        store.record_event(memory.id, OPENED, before=memory.confidence, after=memory.confidence,
                           actor=actor, session_id=session_id, detail={"task": task[:1000]})


def settle_listings(store: Store, session_id: str | None, keep: Keeper | None = None) -> list[str]:
    """Each listing of the session not settled yet: the lines of its index that were not opened
    after it are kept as `unopened` for its task; then a `note` says it is settled. Only once
    the session has opened a memory (see the module's doc): until then nothing is settled, so a
    later call (the next prime, the end of the session) may still count it. Returns the ids kept."""
    if not session_id:
        return []
    log = store.sessions.activities(session_id, kinds=("injected", "lookup", "note"))
    if not any(a.kind == "lookup" and a.memory_id for a in log):
        return []
    notes = [a.detail or {} for a in log if a.kind == "note"]
    settled = {n.get("settled") for n in notes}
    # Once a session: a memory listed again (MCP `context` lists it each time) or opened at any
    # point of the session is not unopened again.
    counted = {str(i) for n in notes for i in n.get(UNOPENED, ())}
    counted |= {a.memory_id for a in log if a.kind == "lookup" and (a.detail or {}).get(OPENED)}
    kept: list[str] = []
    for listing in (a for a in log if a.kind == "injected"):
        detail = listing.detail or {}
        if listing.id in settled or not detail.get("indexed") or not detail.get("task"):
            continue
        opened_after = {a.memory_id for a in log if a.kind == "lookup" and a.seq > listing.seq}
        unopened = [i for i in map(str, detail["indexed"]) if i not in opened_after and i not in counted]
        counted.update(unopened)
        with store.transaction():
            for memory_id in unopened:
                if _keep(store, memory_id, str(detail["task"]), session_id, keep):
                    kept.append(memory_id)
            store.sessions.append_activity(
                session_id, "note", f"{len(unopened)} of {len(detail['indexed'])} listed lines not opened",
                detail={"settled": listing.id, UNOPENED: unopened})
    return kept


def _keep(store: Store, memory_id: str, task: str, session_id: str, keep: Keeper | None) -> bool:
    if keep is not None:
        return keep(memory_id, UNOPENED, task, session_id)
    try:
        memory = store.get(memory_id)
    except NotFound:  # another layer's, and no keeper for it
        return False
    keep_judgment(store, memory, UNOPENED, task, None, session_id)
    return True


def opening_detail(task: str) -> dict[str, Any]:
    """What the `lookup` activity of an opening carries."""
    return {OPENED: task[:300]}
