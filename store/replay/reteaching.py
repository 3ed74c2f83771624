"""Re-teachings found without labels: a lesson captured in a later session that is the same as a
memory from an earlier one. Either capture strengthened the earlier memory itself (`Store.add`
judged the new candidate the same), or the new candidate resembles it as the review inbox
judges resemblance (`store.browse.look_alikes`, at `capture.resemblance`). For each: the prompt
the user said it again at (from the candidate's evidence lines), and whether the earlier memory
was in a block injected in that session before it (then memdeck had said it for them)."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from store.engine.core import Store
from store.engine.errors import NotFound


@dataclass(frozen=True)
class Reteaching:
    session: int  # the later session's index in the replay
    memory_id: str  # the earlier memory
    candidate_id: str  # what capture proposed this time (the same id when it was strengthened)
    prompt: int  # the prompt the user said it again at (index in the session's prompts)
    injected_before: bool  # the earlier memory was in a block of this session before that prompt
    at_the_prompt: bool  # ...or arrived with that very prompt
    similarity: float  # 100 for the same memory; else the resemblance


def _said_at(store: Store, memory_id: str, session_id: str, prompt_lines: list[int]) -> int:
    """The prompt of this session the memory's evidence points at: the last prompt at or before
    its first evidence line (the first prompt when there is none)."""
    try:
        evidence = store.get(memory_id).meta.get("evidence") or []
    except NotFound:
        return 0
    lines = [e.get("line") for e in evidence if isinstance(e, dict) and e.get("session") == session_id
             and isinstance(e.get("line"), int)]
    if not lines or not prompt_lines:
        return 0
    return max(0, bisect_right(prompt_lines, min(lines)) - 1)


def find(store: Store, replayed, before: dict, prompt_lines: list[int]) -> list[Reteaching]:
    """The re-teachings among `replayed`'s candidates (`engine.SessionReplay`), against the
    memories there were before it (`before`: id -> MemoryText)."""
    from store.browse.look_alikes import resembling

    found: list[Reteaching] = []
    for candidate in replayed.candidates:
        if candidate in before:
            earlier, similarity = candidate, 100.0
        else:
            try:
                memory = store.get(candidate)
            except NotFound:
                continue
            near = [(m, score) for m, score in resembling(store, memory, limit=3) if m.id in before]
            if not near:
                continue
            earlier, similarity = near[0][0].id, float(near[0][1])
        if any(r.memory_id == earlier for r in found):
            continue  # the same lesson said again in this session: one re-teaching
        prompt = _said_at(store, candidate, replayed.session_id, prompt_lines)
        at_prompt = prompt < len(replayed.prompts) and earlier in replayed.prompts[prompt].ids
        found.append(Reteaching(replayed.index, earlier, candidate, prompt,
                                earlier in replayed.injected_before(prompt), at_prompt, similarity))
    return found
