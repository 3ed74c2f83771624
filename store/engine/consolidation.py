"""`memdeck consolidate`: near-duplicates and chains of updates in a project, proposed for review.

Every active or pending memory of the project is read once (`sameness.read`); an inverted index
of their subject words and specifics proposes, for each memory, the earlier memories of the same
type and scope that share enough of them (words held by more than `COMMON` memories are left out
of the index: they say nothing about which memories are alike); of those sharing at least
`sameness.related` of their words, the `DECIDED` closest are decided by `sameness.compare`,
older first. Then:

- **same**: the newer memory gets a `same` proposal naming the older one (resolving it `merge`
  keeps one memory, both histories);
- **update**: the newer one gets an `update` proposal naming the latest older memory it updates,
  so a chain a -> b -> c becomes two proposals (b over a, c over b);
- **contradiction**: the newer one gets a `contradiction` proposal naming the older one.

A memory already holding a proposal is left as it is, and a pair a person resolved "keep both"
(`distinct_from` in the memory's meta) is not proposed again. Proposals are written with
`store.relations.propose` (a compare-and-set against the version read at the start: a memory changed
meanwhile is skipped and counted). Nothing else changes unless `consolidate.apply` is true: then
`same` pairs are merged and sure updates superseded at once, through `Curator.resolve`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from store.engine.core import Store, memory_from_row
from store.engine.sameness import Sameness, compare_readings, read

COMMON = 200  # a word held by more memories than this does not propose candidates
PROGRESS_EVERY = 0.5  # seconds between progress calls
DECIDED = 5  # the earlier memories closest to one memory that are decided, at most


@dataclass(frozen=True)
class Finding:
    kind: str  # same | update | contradiction
    memory_id: str  # the newer memory, which holds the proposal
    other_id: str  # the older one
    sure: bool
    why: str
    verdict: Sameness

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "memory": self.memory_id, "other": self.other_id, "sure": self.sure,
                "why": self.why}


@dataclass
class ConsolidationReport:
    memories: int
    compared: int
    findings: list[Finding]
    proposed: int = 0
    applied: int = 0
    skipped: int = 0  # changed meanwhile, or already holding a proposal
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"memories": self.memories, "compared": self.compared, "proposed": self.proposed,
                "applied": self.applied, "skipped": self.skipped, "seconds": round(self.seconds, 2),
                "findings": [f.to_json() for f in self.findings]}


def find(store: Store, project: str | None = None, *,  # noqa: C901 (one pass over the pairs, each kind of finding one branch)
         progress: Callable[[int, int], None] | None = None) -> tuple[list[Any], ConsolidationReport]:
    """The findings of a project, without writing anything; with the memories as read."""
    started = time.monotonic()
    rows = store.backend.memory_table.in_statuses(store.project_id(project), ("active", "pending"))
    memories = [memory_from_row(r) for r in rows]
    thresholds = store.config.sameness
    readings = [read(m.content) for m in memories]
    words = [r.subject | r.specifics for r in readings]
    index: dict[tuple[str, str | None, str], list[int]] = {}
    for i, (memory, held) in enumerate(zip(memories, words)):
        for word in held:
            index.setdefault((memory.type, memory.scope, word), []).append(i)
    common = {key for key, holders in index.items() if len(holders) > COMMON}
    findings: list[Finding] = []
    compared = 0
    last = time.monotonic()
    total = len(memories)
    for i, memory in enumerate(memories):
        if progress is not None and time.monotonic() - last >= PROGRESS_EVERY:
            progress(i, total)
            last = time.monotonic()
        if not words[i]:
            continue
        shared: dict[int, int] = {}
        for word in words[i]:
            key = (memory.type, memory.scope, word)
            if key in common:
                continue
            for j in index.get(key, ()):
                if j >= i:
                    break  # the index lists memories oldest first: only earlier ones
                shared[j] = shared.get(j, 0) + 1
        # The candidates whose overlap (all words, common ones included) reaches `related`,
        # closest first; only the closest few are decided.
        mine = words[i]
        close = []
        kept_apart = set(memory.meta.get("distinct_from") or ())
        for j in shared:
            if memories[j].id in kept_apart or memory.id in (memories[j].meta.get("distinct_from") or ()):
                continue  # a person resolved this pair "keep both"
            overlap = len(mine & words[j]) / (min(len(mine), len(words[j])) or 1)
            if overlap >= thresholds.related:
                close.append((overlap, j))
        close.sort(reverse=True)
        best: tuple[tuple[int, float], int, Sameness] | None = None
        for _, j in close[:DECIDED]:
            compared += 1
            verdict = compare_readings(readings[j], readings[i], thresholds=thresholds)
            if verdict.kind == "distinct":
                continue
            key = ({"same": 3, "contradiction": 2, "update": 1}[verdict.kind], memories[j].created_at)
            if best is None or key > best[0]:
                best = (key, j, verdict)
        if best is not None:
            _, j, verdict = best
            findings.append(Finding(verdict.kind, memory.id, memories[j].id, verdict.sure, verdict.explain(), verdict))
    if progress is not None:
        progress(total, total)
    return memories, ConsolidationReport(len(memories), compared, findings, seconds=time.monotonic() - started)


def consolidate(store: Store, project: str | None = None, *, dry_run: bool = False, actor: str = "consolidate",
                progress: Callable[[int, int], None] | None = None) -> ConsolidationReport:
    """Find, then (unless `dry_run`) propose; with `consolidate.apply`, also resolve what is sure."""
    memories, report = find(store, project, progress=progress)
    if dry_run:
        return report
    from store.engine.curation import Curator

    versions = {m.id: m.version for m in memories}
    apply = bool(store.config.consolidate.apply)
    curator = Curator(store, actor=actor)
    for finding in report.findings:
        if not store.relations.propose(finding.memory_id, finding.other_id, finding.verdict, actor=actor,
                             expected_version=versions.get(finding.memory_id)):
            report.skipped += 1
            continue
        report.proposed += 1
        if apply and (finding.kind == "same" or (finding.kind == "update" and finding.sure)):
            curator.resolve(finding.memory_id, "merge" if finding.kind == "same" else "supersede")
            report.applied += 1
    report.seconds = round(report.seconds, 2)
    return report
