"""The same lesson taught again in a later session (issue 40, item 4).

A candidate states a rule or fact in its title (`store.capture.phrasing` writes titles as the
rule, not the user's words). Before it goes to the inbox, its title is compared with the titles
of the project's memories (active or pending) by `store.engine.sameness` — the decision behind
reinforcement, not word overlap:

- **same**: the lesson was taught before. The earlier memory is reinforced, and no second inbox
  item is made. When it was taught in another session, a `retaught` event records the session,
  the new wording and why it is the same; said twice in one session ("Don't write any code",
  later "Don't write code"), it is only reinforced: one lesson, one memory;
- **update** or **contradiction** of another session's memory: the candidate changes it. It goes
  to the inbox as a proposal naming the earlier memory (a person decides; never merged
  silently). Within one session a changed wording is the user refining what they said, left to
  the review as a candidate of its own;
- otherwise the candidate is new.

The type is not compared: the same lesson is often read once as a `convention` and once as a
`preference` or `pitfall` (the words of the rule differ in force, not in what they say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from store.engine.sameness import Sameness, compare_readings, read

if TYPE_CHECKING:
    from store.engine.core import Store
    from store.engine.records import Memory

_WORD = re.compile(r"[^\W_]{3,}")
RECENT = 5_000  # titles read at most (the project's most recently changed)
COMPARED = 8  # of those, the ones sharing the most words are compared closely


@dataclass(frozen=True)
class Earlier:
    """A memory of another session that a candidate's title bears on."""

    memory: "Memory"
    verdict: Sameness


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower())}


def earlier_lesson(store: "Store", title: str, session: str) -> Earlier | None:
    """The memory (active or pending) whose title says what `title` says ("same"), or of
    another session whose title it changes ("update", "contradiction"); the same statement first."""
    mine = _words(title)
    if len(mine) < 2:
        return None
    shared: list[tuple[float, str, str]] = []
    for memory_id, other in store.recent_titles(RECENT):
        theirs = _words(other)
        common = len(mine & theirs)
        if common >= 2:
            shared.append((common / min(len(mine), len(theirs)), memory_id, other))
    if not shared:
        return None
    # The closest first; among as close, the most recently changed (the order the titles came
    # in, kept by a stable sort): by id, a tie went to the random end of the ids.
    shared.sort(key=lambda item: item[0], reverse=True)
    reading = read(title)
    thresholds = store.config.sameness
    best: tuple[tuple[int, float], str, Sameness] | None = None
    priority = {"same": 3, "contradiction": 2, "update": 1}
    for _, memory_id, other in shared[:COMPARED]:
        verdict = compare_readings(read(other), reading, thresholds=thresholds)
        if verdict.kind == "distinct":
            continue
        key = (priority[verdict.kind], verdict.overlap)
        if best is None or key > best[0]:
            best = (key, memory_id, verdict)
    if best is None:
        return None
    memory = store.get(best[1])
    if memory.status not in ("active", "pending"):
        return None
    if memory.session_id == session and best[2].kind != "same":
        return None
    return Earlier(memory, best[2])


def record_reteaching(store: "Store", earlier: Earlier, title: str, incoming: float,
                      session: str, now: float) -> "Memory":
    """The earlier memory reinforced (its confidence as a re-learning raises it) and, when it
    was taught in another session, a `retaught` event in its history naming the session and the
    new wording."""
    memory = earlier.memory
    reinforced = store.relations.reinforce(memory, incoming, (), (), earlier.verdict, memory.content,
                                           session, "ingest", now)
    if memory.session_id == session:
        return reinforced  # said twice in one session: one lesson, not a re-teaching
    store.record_event(memory.id, "retaught", before=memory.confidence, after=reinforced.confidence,
                       actor="ingest", session_id=session, at=now,
                       detail={"title": title, "why": earlier.verdict.explain()})
    return reinforced
