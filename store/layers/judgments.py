"""Your own verdicts on another layer's memories, kept in your own store (docs/team.md, "Feedback
on team memories").

An agent's `not_relevant` or `helpful` on a memory of the team store or the team file teaches
this person's primes, not the team's: the task (with the relevance and cosine the memory had for
it) is kept in the own store's table `layer_judgment` (migration 14), by layer, the memory's
project and its id; the newest `KEEP_JUDGED` per memory and verdict, as an own memory keeps them
in `meta["not_relevant"]` / `meta["helpful"]`. Nothing is written to the team store's memory (one
agent's verdict does not change every member's prime; a reader may not write `meta`), nor to the
team file.

While prime ranks that layer's candidates, `reading` lets `store.retrieval.judged` read them
(`judged.KEPT`), one query per layer per prime: a long-lived MCP server sees judgments another
process wrote after it started. Rows of a memory the layer no longer holds are never read (only
the candidates' ids are asked for) and do no harm.

Two processes (the hooks, the MCP server) writing at once each write in a transaction of the own
store (its write lock), so the newest `KEEP_JUDGED` stay, whoever wrote last.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Sequence

from store.backends import layer_rows

if TYPE_CHECKING:
    from store.engine.core import Store
    from store.engine.records import Memory

# The verdicts kept for you: the two that say whether a memory belongs to a task.
KEPT_VERDICTS = ("not_relevant", "helpful")
# What is read back: those, and what the agent did with a listed memory (`store.engine.openings`:
# opened it, left its line unopened), kept the same way but never an agent's verdict to give.
KEPT_KEYS = (*KEPT_VERDICTS, "opened", "unopened")


def keep(own: "Store", memory: "Memory", verdict: str, task: str, evidence: dict | None,
         session_id: str | None) -> None:
    """Keep `verdict` on `memory` (of another layer, `memory.layer`) for `task` in the own store,
    with the memory's relevance and cosine for it (`evidence`); the newest `KEEP_JUDGED` of that
    memory and verdict stay."""
    from store.engine.feedback import KEEP_JUDGED, judged_evidence

    kept = judged_evidence(evidence)
    key = (memory.layer, memory.project, memory.id, verdict)
    with own.transaction():
        layer_rows.add_judgment(own.backend, *key, task[:1000], kept.get("relevance"), kept.get("cosine"),
                                session_id, own.now())
        layer_rows.keep_newest_judgments(own.backend, *key, KEEP_JUDGED)


def kept(own: "Store", layer: str, memories: Sequence["Memory"]) -> dict[str, dict[str, list[dict]]]:
    """This person's judgments of these memories of `layer`: id -> {verdict: [judgment, ...]},
    oldest first, each as an own memory keeps it in its meta (task, relevance, cosine, at)."""
    wanted = {m.id: m.project for m in memories}
    found: dict[str, dict[str, list[dict]]] = {}
    if not wanted:
        return found
    for memory_id, project, verdict, task, relevance, cosine, at in layer_rows.judgments(own.backend, layer, list(wanted)):
        if wanted.get(memory_id) != project or verdict not in KEPT_KEYS:
            continue  # the same id in another project's team file: not this memory
        judgment = {"task": task, "at": at, **({"relevance": relevance} if relevance is not None else {}),
                    **({"cosine": cosine} if cosine is not None else {})}
        found.setdefault(memory_id, {}).setdefault(verdict, []).append(judgment)
    return found


@contextmanager
def reading(own: "Store", layer: str) -> Iterator[None]:
    """While `layer`'s candidates are ranked: its memories judged with this person's judgments."""
    from store.retrieval.judged import KEPT

    token = KEPT.set(lambda memories: kept(own, layer, memories))
    try:
        yield
    finally:
        KEPT.reset(token)

