"""An agent's verdict on a memory it was given, turned into the lifecycle rule that fits it, so
use feeds back into confidence:

- `helpful`: the memory is used once more (`Store.record_usage`: the usage boost, use count,
  last used, which restarts the idle time decay counts from);
- `wrong`: a contradiction (`lifecycle.contradict`: confidence drops, inactive below the line);
- `outdated` with a replacement: the replacement supersedes it (`Store.supersede`); without
  one, it is contradicted as a wrong memory is.

Each writes one event in the memory's history, carrying the verdict and the agent's note.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.engine.lifecycle import contradict
from store.engine.records import Memory

VERDICTS = ("helpful", "wrong", "outdated")


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
                  actor: str = "agent") -> FeedbackResult:
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
    if verdict == "helpful":
        after = store.record_usage([memory_id], session_id=session_id, actor=actor, detail=detail)[0]
        return FeedbackResult(before, after)
    if replacement is None:
        return FeedbackResult(before, contradict(store, memory_id, actor=actor, session_id=session_id,
                                                 detail=detail))
    added = store.supersede(memory_id, replacement, actor=actor, session_id=session_id,
                            source="explicit", hat=before.hat, tags=before.tags,
                            file_refs=before.file_refs, note=note)
    return FeedbackResult(before, store.get(memory_id), added.memory)
