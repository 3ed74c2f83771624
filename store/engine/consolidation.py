"""`memdeck consolidate`: near-duplicates and chains of updates in a project, proposed for review.

Every active or pending memory of the project is read once (`sameness.read`); an inverted index
of their subject words and specifics proposes, for each memory, the earlier memories of the same
type and scope that share enough of them (words held by more than `COMMON` memories are left out
of the index: they say nothing about which memories are alike); of those sharing at least
`sameness.related` of their words, the `DECIDED` closest are decided by `sameness.compare`,
older first. Then:

- **same**: the newer memory gets a `same` proposal naming the older one (resolving it `merge`
  keeps one memory, both histories);
- **update**: successive statements of one fact with a changing value (a commit range, a
  version, a port, a path) make a **chain**: each memory updates the latest older one, a -> b ->
  c -> d. The newest is kept and holds one `update` proposal naming the memory before it, with
  the whole chain (oldest first): resolving it `supersede` retires every older memory of the
  chain at once. Two memories are a chain of two;
- **contradiction**: the newer one gets a `contradiction` proposal naming the older one.

A memory already holding a proposal is left as it is, and a pair a person resolved "keep both"
(`distinct_from` in the memory's meta; for a chain, every pair of it) is not proposed again.
Proposals are written with `store.relations.propose` (a compare-and-set against the version read
at the start: a memory changed meanwhile is skipped and counted), with a `proposed` event in the
history of every memory concerned. Nothing else changes unless `consolidate.apply` is true: then
`same` pairs are merged and chains whose every link is a sure update superseded at once, through
`Curator.resolve`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from store.engine.clock import iso
from store.engine.core import Store, memory_from_row
from store.engine.sameness import Sameness, compare_readings, read

COMMON = 200  # a word held by more memories than this does not propose candidates
PROGRESS_EVERY = 0.5  # seconds between progress calls
DECIDED = 5  # the earlier memories closest to one memory that are decided, at most


@dataclass(frozen=True)
class Link:
    """One memory of a finding's chain, as a person reads it."""

    id: str
    title: str
    created_at: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created_at": iso(self.created_at)}


@dataclass(frozen=True)
class Finding:
    kind: str  # same | update | contradiction
    memory_id: str  # the newer memory, which holds the proposal
    other_id: str  # the older one (of a chain: the one just before the newest)
    sure: bool  # of a chain: every link sure
    why: str
    verdict: Sameness
    chain: tuple[Link, ...] = ()  # the memories concerned, oldest first, `memory_id` last

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "memory": self.memory_id, "other": self.other_id, "sure": self.sure,
                "why": self.why, "chain": [link.to_json() for link in self.chain]}


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
    decided: dict[int, tuple[int, Sameness]] = {}  # memory -> (the earlier memory it bears on most, how)
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
            decided[i] = (best[1], best[2])
    if progress is not None:
        progress(total, total)
    findings = _findings(memories, decided)
    return memories, ConsolidationReport(len(memories), compared, findings, seconds=time.monotonic() - started)


def _findings(memories: list[Any], decided: dict[int, tuple[int, Sameness]]) -> list[Finding]:
    """The findings, newer memory by newer memory: a same or contradiction pair as it was
    decided; the updates joined into chains (each memory updating the one before it), one
    finding per chain, held by its newest memory. A memory two newer ones update (a fork) stays
    in the newer chain and closes the other one, as the memory that one updates."""
    def link(k: int) -> Link:
        return Link(memories[k].id, memories[k].title, memories[k].created_at)

    before = {i: j for i, (j, verdict) in decided.items() if verdict.kind == "update"}
    updated = set(before.values())
    taken: set[int] = set()
    chains: dict[int, list[int]] = {}
    for tip in sorted((i for i in before if i not in updated), reverse=True):  # newest first
        chain = [tip]
        while chain[-1] in before:  # always an older memory: no cycle
            chain.append(before[chain[-1]])
            if chain[-1] in taken:
                break  # a fork: that memory is in a newer chain, and this one ends at it
        taken.update(chain)
        chains[tip] = chain[::-1]
    findings = []
    for i in sorted(decided):
        j, verdict = decided[i]
        if verdict.kind != "update":
            findings.append(Finding(verdict.kind, memories[i].id, memories[j].id, verdict.sure, verdict.explain(),
                                    verdict, (link(j), link(i))))
        elif i in chains:
            chain = chains[i]
            sure = all(decided[k][1].sure for k in chain[1:])
            why = verdict.explain() if len(chain) == 2 else f"chain of {len(chain)}; " + verdict.explain()
            findings.append(Finding("update", memories[i].id, memories[j].id, sure, why, verdict,
                                    tuple(link(k) for k in chain)))
    return findings


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
        chain = [link.id for link in finding.chain] if len(finding.chain) > 2 else None
        verdict = replace(finding.verdict, sure=finding.sure)  # of a chain: sure if every link is
        if not store.relations.propose(finding.memory_id, finding.other_id, verdict, actor=actor,
                                       expected_version=versions.get(finding.memory_id), chain=chain):
            report.skipped += 1
            continue
        report.proposed += 1
        if apply and (finding.kind == "same" or (finding.kind == "update" and finding.sure)):
            curator.resolve(finding.memory_id, "merge" if finding.kind == "same" else "supersede")
            report.applied += 1
    report.seconds = round(report.seconds, 2)
    return report
