"""An agent's verdict on a memory it was given, turned into the lifecycle rule that fits it, so
use feeds back into confidence:

- `helpful`: the memory is used once more (`Store.record_usage`: the usage boost, use count,
  last used, which restarts the idle time decay counts from);
- `wrong`: a contradiction (`lifecycle.contradict`: confidence drops, inactive below the line);
- `outdated` with a replacement: the replacement supersedes it (`Store.supersede`); without
  one, it is contradicted as a wrong memory is;
- `not_relevant`: the memory is right but does not belong to this task. Its confidence stays;
  the task is kept in its `meta["not_relevant"]` (the newest `KEEP_JUDGED`), and a later prime
  for a similar task leaves it out (`store.retrieval.judged`).

Each writes one event in the memory's history, carrying the verdict and the agent's note.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.engine.lifecycle import contradict
from store.engine.records import Memory

VERDICTS = ("helpful", "wrong", "outdated", "not_relevant")
# The tasks a memory was judged not relevant for that it keeps (the newest).
KEEP_JUDGED = 20


@dataclass(frozen=True)
class FeedbackResult:
    before: Memory
    after: Memory
    replacement: Memory | None = None  # the memory that superseded it (`outdated`)

    def to_json(self) -> dict:
        return {
            "id": self.after.id, "confidence_before": self.before.confidence,
            "confidence": self.after.confidence, "status": self.after.status,
            **({"replacement": self.replacement.id} if self.replacement else {}),
        }


def give_feedback(store: Store, memory_id: str, verdict: str, *, note: str | None = None,
                  replacement: str | None = None, session_id: str | None = None,
                  actor: str = "agent", task: str | None = None,
                  evidence: dict[str, float] | None = None) -> FeedbackResult:
    """Apply an agent's `verdict` on a memory. `task`: what the agent was doing (the task of its
    last `context`), and `evidence`: the memory's relevance and cosine for it then; both are
    what `not_relevant` records."""
    if verdict not in VERDICTS:
        raise InvalidInput(f"unknown verdict {verdict!r}; one of {', '.join(VERDICTS)}")
    note = (note or "").strip() or None
    replacement = (replacement or "").strip() or None
    if replacement and verdict != "outdated":
        raise InvalidInput("a replacement goes with the verdict outdated")
    before = store.get(memory_id)
    if before.status == "deleted":
        raise InvalidInput(f"memory {memory_id} is in the trash")
    detail = {"verdict": verdict, **({"note": note} if note else {})}
    if verdict == "not_relevant":
        return FeedbackResult(before, judged_not_relevant(store, memory_id, (task or "").strip() or note,
                                                          actor=actor, session_id=session_id, detail=detail,
                                                          evidence=evidence))
    if verdict == "helpful":
        with store.transaction():
            if (task or "").strip():  # what a memory judged not relevant elsewhere was right for
                keep_judgment(store, before, "helpful", task.strip(), evidence, session_id)
            after = store.record_usage([memory_id], session_id=session_id, actor=actor, detail=detail)[0]
        return FeedbackResult(before, after)
    if replacement is None:
        return FeedbackResult(before, contradict(store, memory_id, actor=actor, session_id=session_id,
                                                 detail=detail))
    added = store.supersede(memory_id, replacement, actor=actor, session_id=session_id,
                            source="explicit", hat=before.hat, tags=before.tags,
                            file_refs=before.file_refs, note=note)
    return FeedbackResult(before, store.get(memory_id), added.memory)


def judged_not_relevant(store: Store, memory_id: str, task: str | None, *, actor: str,
                        session_id: str | None, detail: dict,
                        evidence: dict[str, float] | None = None) -> Memory:
    """Record that the memory did not belong to `task`: a `judged` event (confidence unchanged)
    and the task among the memory's judged tasks. Without a task only the event is written."""
    with store.transaction():
        memory = store.get(memory_id)
        if task:
            keep_judgment(store, memory, "not_relevant", task, evidence, session_id)
        store.record_event(memory_id, "judged", before=memory.confidence, after=memory.confidence,
                           actor=actor, session_id=session_id,
                           detail={**detail, **({"task": task[:1000]} if task else {})})
    return store.get(memory_id)


def keep_judgment(store: Store, memory: Memory, key: str, task: str, evidence: dict[str, float] | None,
                  session_id: str | None) -> None:
    """Add the task (and the memory's evidence for it) to `meta[key]`, the newest `KEEP_JUDGED`."""
    from store.engine.models import MemoryRow

    judged = [j for j in memory.meta.get(key, []) if isinstance(j, dict)]
    kept = {k: round(float(v), 4) for k, v in (evidence or {}).items() if k in ("relevance", "cosine")}
    judged = [*judged, {"task": task[:1000], "at": store.now(), **kept,
                        **({"session": session_id} if session_id else {})}]
    meta = {**memory.meta, key: judged[-KEEP_JUDGED:]}
    (MemoryRow.update(meta=json.dumps(meta, ensure_ascii=False), version=MemoryRow.version + 1)
     .where(MemoryRow.id == memory.id).execute())
