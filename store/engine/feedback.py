"""An agent's verdict on a memory it was given, turned into the lifecycle rule that fits it, so
use feeds back into confidence:

- `helpful`: the memory is used once more (`Store.record_usage`: the usage boost, use count,
  last used, which restarts the idle time decay counts from);
- `wrong`: a contradiction (`lifecycle.contradict`: confidence drops, inactive below the line);
- `outdated` with a replacement: the replacement supersedes it (`store.relations.supersede`); without
  one, it is contradicted as a wrong memory is;
- `not_relevant`: the memory is right but does not belong to this task. Its confidence stays;
  the task is kept in its `meta["not_relevant"]` (the newest `KEEP_JUDGED`), and a later prime
  for a similar task leaves it out (`store.retrieval.judged`).

Each writes one event in the memory's history, carrying the verdict and the agent's note.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.engine.lifecycle import contradict
from store.engine.records import Memory

VERDICTS = ("helpful", "wrong", "outdated", "not_relevant")
# The tasks a memory was judged not relevant for that it keeps (the newest).
KEEP_JUDGED = 20


# Who is a person among the actors of events (the command line, the workbench), and the events
# by which a person stands behind a memory: wrote it, edited it, accepted it.
PERSON_ACTORS = ("cli", "ui")
VOUCHING = {"created": "a person wrote it", "edited": "a person edited it",
            "status_changed": "a person accepted it", "merged": "a person merged it",
            "restored": "a person restored it"}


@dataclass(frozen=True)
class FeedbackResult:
    before: Memory
    after: Memory
    replacement: Memory | None = None  # the memory that superseded it (`outdated`)
    held: Memory | None = None  # the inbox item holding the verdict for a person to review
    why_held: str = ""

    def to_json(self) -> dict:
        return {
            "id": self.after.id, "confidence_before": self.before.confidence,
            "confidence": self.after.confidence, "status": self.after.status,
            **({"replacement": self.replacement.id} if self.replacement else {}),
            **({"held": self.held.id, "held_because": self.why_held} if self.held else {}),
        }


def vouched(store: Store, memory: Memory) -> str:
    """Why a person stands behind `memory` (protected, written, edited or accepted by one), or ''."""
    if memory.protected:
        return "it is protected"
    if memory.source == "operator":
        return "a person wrote it"
    for event in reversed(store.events(memory.id)):
        if event.actor in PERSON_ACTORS and event.kind in VOUCHING:
            if event.kind == "status_changed" and event.detail.get("to") != "active":
                continue
            return VOUCHING[event.kind]
    return ""


def hold(store: Store, memory: Memory, verdict: str, why: str, *, note: str | None, replacement: str | None,
         session_id: str | None, actor: str, task: str | None = None,
         evidence: dict[str, float] | None = None) -> FeedbackResult:
    """An agent's verdict a person must confirm: a pending item in the inbox (the replacement
    itself for `outdated` with one; else a note naming the verdict), and a `judged` event with
    `held` on the memory, which keeps its confidence until the item is accepted (`settle`)."""
    with store.transaction():
        target = {"verdict": verdict, "target": memory.id, "why": why, "replacement": bool(replacement),
                  **({"task": task[:1000]} if task else {}), **({"evidence": evidence} if evidence else {}),
                  **({"note": note} if note else {}), **({"session": session_id} if session_id else {})}
        if replacement:
            content, title = replacement, None
        else:
            content = (f"An agent judged {memory.id} {verdict.replace('_', ' ')}: {note or '(no note)'}. "
                       f"Accept to apply it; reject to keep the memory as it is.\n\n> "
                       + " ".join(memory.content.split())[:400])
            title = f"Agent says {verdict.replace('_', ' ')}: {memory.title}"[:200]
        item = store.add(content, title=title, type=memory.type, scope=memory.scope, hat=memory.hat,
                         tags=memory.tags, file_refs=memory.file_refs, project=memory.project,
                         source="explicit", status="pending", session_id=session_id, reinforce=False,
                         actor=actor, meta={"held_feedback": target}).memory
        store.record_event(memory.id, "judged", before=memory.confidence, after=memory.confidence,
                           actor=actor, session_id=session_id,
                           detail={"verdict": verdict, "held": item.id, "why": why, **({"note": note} if note else {})})
    return FeedbackResult(memory, store.get(memory.id), held=item, why_held=why)


def settle(store: Store, memory_ids: Sequence[str], *, actor: str) -> list[str]:
    """A person accepted inbox items (pending until now: callers pass only those, so an undone
    accept can be accepted again): apply the agent verdicts they hold. A replacement (now
    active) supersedes its memory; another verdict is applied to its memory as the agent gave
    it, and its note goes to the trash. Returns the ids of the memories changed."""
    changed = []
    for item in store.get_many(memory_ids):
        held = item.meta.get("held_feedback")
        if not isinstance(held, dict) or not isinstance(held.get("target"), str):
            continue
        target_id, verdict = held["target"], held.get("verdict")
        with store.transaction():
            target = store.found([target_id]).get(target_id)
            if target is not None and target.status != "deleted":
                detail = {"verdict": verdict, "accepted": item.id, **({"note": held["note"]} if held.get("note") else {})}
                session_id = held.get("session")
                if held.get("replacement"):
                    store.relations.mark_superseded(target, item.id, actor, session_id, held.get("note"))
                elif verdict in ("wrong", "outdated"):
                    contradict(store, target_id, actor=actor, session_id=session_id, detail=detail)
                elif verdict == "helpful":
                    store.record_usage([target_id], session_id=session_id, actor=actor, detail=detail)
                elif verdict == "not_relevant":
                    judged_not_relevant(store, target_id, held.get("task"), actor=actor, session_id=session_id,
                                        detail=detail, evidence=held.get("evidence"))
                changed.append(target_id)
            if not held.get("replacement"):  # the note has said what it had to say
                store.edit(item.id, status="deleted", actor=actor)
    return changed


def held_targets(store: Store, memory_ids: Sequence[str]) -> list[str]:
    """The memories the agent verdicts held in these inbox items are about."""
    targets = []
    for item in store.get_many(memory_ids):
        held = item.meta.get("held_feedback")
        if isinstance(held, dict) and isinstance(held.get("target"), str) and store.found([held["target"]]):
            targets.append(held["target"])
    return list(dict.fromkeys(targets))

def give_feedback(store: Store, memory_id: str, verdict: str, *, note: str | None = None,
                  replacement: str | None = None, session_id: str | None = None,
                  actor: str = "agent", task: str | None = None,
                  evidence: dict[str, float] | None = None, guarded: bool = False,
                  held_because: str = "", keep_tasks: bool = True) -> FeedbackResult:
    """Apply an agent's `verdict` on a memory. `task`: what the agent was doing (the task of its
    last `context`), and `evidence`: the memory's relevance and cosine for it then; both are
    what `not_relevant` records.

    `guarded` (an agent's verdict, over MCP): a replacement, and `wrong` or `outdated` on a
    memory a person stands behind (`vouched`), are held for a person to review (`hold`) instead
    of applied; so is any verdict given with `held_because` (a burst of feedback).

    `keep_tasks`: whether the task is kept on the memory (its `meta`) for `helpful` and
    `not_relevant`, which changes later primes for similar tasks. Off for a team memory
    (store.layers.feedback): one agent's judgment of a task does not change what the
    whole team's primes inject, and a reader may write only the feedback columns; the task is
    in the event's detail instead."""
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
    if guarded:
        why = held_because
        if not why and replacement:
            why = "an agent's replacement text is reviewed before it replaces a memory"
        if not why and verdict in ("wrong", "outdated"):
            why = vouched(store, before)
            why = f"{why}: a person decides" if why else ""
        if why:
            return hold(store, before, verdict, why, note=note, replacement=replacement,
                        session_id=session_id, actor=actor, task=(task or "").strip() or None, evidence=evidence)
    if verdict == "not_relevant":
        return FeedbackResult(before, judged_not_relevant(store, memory_id, (task or "").strip() or note,
                                                          actor=actor, session_id=session_id, detail=detail,
                                                          evidence=evidence, keep=keep_tasks))
    if verdict == "helpful":
        with store.transaction():
            if (task or "").strip() and keep_tasks:  # what a memory judged not relevant elsewhere was right for
                keep_judgment(store, before, "helpful", task.strip(), evidence, session_id)
            elif (task or "").strip():
                detail = {**detail, "task": task.strip()[:1000]}
            after = store.record_usage([memory_id], session_id=session_id, actor=actor, detail=detail)[0]
        return FeedbackResult(before, after)
    if replacement is None:
        return FeedbackResult(before, contradict(store, memory_id, actor=actor, session_id=session_id,
                                                 detail=detail))
    added = store.relations.supersede(memory_id, replacement, actor=actor, session_id=session_id,
                            source="explicit", hat=before.hat, tags=before.tags,
                            file_refs=before.file_refs, note=note)
    return FeedbackResult(before, store.get(memory_id), added.memory)


def judged_not_relevant(store: Store, memory_id: str, task: str | None, *, actor: str,
                        session_id: str | None, detail: dict,
                        evidence: dict[str, float] | None = None, keep: bool = True) -> Memory:
    """Record that the memory did not belong to `task`: a `judged` event (confidence unchanged)
    and the task among the memory's judged tasks. Without a task (or without `keep`) only the
    event is written."""
    with store.transaction():
        memory = store.get(memory_id)
        if task and keep:
            keep_judgment(store, memory, "not_relevant", task, evidence, session_id)
        store.record_event(memory_id, "judged", before=memory.confidence, after=memory.confidence,
                           actor=actor, session_id=session_id,
                           detail={**detail, **({"task": task[:1000]} if task else {})})
    return store.get(memory_id)


def judged_evidence(evidence: dict | None) -> dict[str, float]:
    """What a judgment keeps of the memory's evidence for its task: its relevance and cosine, to
    4 places (an agent's values: anything else, or not a number, is dropped)."""
    return {k: round(float(v), 4) for k, v in (evidence or {}).items()
            if k in ("relevance", "cosine") and isinstance(v, (int, float)) and not isinstance(v, bool)}


def keep_judgment(store: Store, memory: Memory, key: str, task: str, evidence: dict[str, float] | None,
                  session_id: str | None) -> None:
    """Add the task (and the memory's evidence for it) to `meta[key]`, the newest `KEEP_JUDGED`."""
    judged = [j for j in memory.meta.get(key, []) if isinstance(j, dict)]
    kept = judged_evidence(evidence)
    judged = [*judged, {"task": task[:1000], "at": store.now(), **kept,
                        **({"session": session_id} if session_id else {})}]
    meta = {**memory.meta, key: judged[-KEEP_JUDGED:]}
    store.backend.memory_table.update(memory.id, {"meta": json.dumps(meta, ensure_ascii=False)})
