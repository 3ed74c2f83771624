"""The prime's candidates over every layer (`store.layers.layers`): each layer ranked in its own
store, by that store's statistics and relevance gate, then merged best first. A memory in two
layers (shared, same id) is a candidate once: the first copy still in, in the layers' order
(own, team, file); the other copies are out, saying where it is. The task-level verdict (what
the block may spend, what `--explain` prints) is the layer's with the strongest evidence: a
task the own store knows nothing of but the team's does is on topic, by the team's evidence.

Another layer's candidates are judged with this person's own verdicts on them, kept in the own
store (`store.layers.judgments`), by the same rules as an own memory's (`store.retrieval.judged`):
a team memory judged not relevant stays out of this person's later primes for a similar task. A
memory judged out in one layer's copy is out in the others' too."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:
    from store.engine.core import Store
    from store.engine.records import InjectionContext


# Which copy of a memory in two layers is shown: your own first, then the team file (reviewed in
# a pull request), then the team store. A team store's memory never takes the place of a file
# memory with its id: a writer could otherwise shadow what the team reviewed.
PRECEDENCE = {"own": 0, "file": 1, "team": 2}


def precedence(layer: str | None) -> int:
    return PRECEDENCE.get(layer or "own", len(PRECEDENCE))


class Layers(Protocol):
    """What the merge needs of the open layers (`store.layers.layers.Layers` is it)."""

    own: "Store"
    others: Sequence[tuple[str, "Store"]]
    dropped: list[tuple[str, str]]  # layers left out of this prime: (name, the one-line reason)


def merged_candidates(layers: "Layers", context: "InjectionContext", save: bool):
    """(the own store's ranking, every layer's candidates merged best first)."""
    from store.layers.judgments import reading
    from store.retrieval.injection import candidates
    from store.retrieval.judged import JUDGED_OUT

    ranking, ranked = candidates(layers.own, context, save)
    found = list(ranked)
    rankings = [ranking]
    for name, store in list(layers.others):
        # Only the own store's anchors' last check is saved: the other layers are read, not written.
        try:
            with reading(layers.own, name):
                theirs, items = candidates(store, context, False)
        except Exception as exc:  # a slow, silent or broken layer (a statement timed out): left out
            dropped = getattr(layers, "dropped", None)
            if dropped is not None:
                dropped.append((name, " ".join(str(exc).split())[:300] or type(exc).__name__))
            continue
        rankings.append(replace(theirs, layer=name))
        found += [replace(r, memory=replace(r.memory, layer=name)) for r in items]
    if not layers.others:
        return ranking, found
    if ranking.evidence is not None:
        strength = {r.layer: r.evidence.strength for r in rankings if r.evidence is not None}
        strongest = max((r for r in rankings if r.evidence is not None), key=lambda r: r.evidence.strength)
        ranking = replace(strongest, weights=ranking.weights, by_layer=strength)
    # A memory judged not relevant in one layer's copy (yours, shared to the team's with the same
    # id) is out in every copy: the other copy does not take its place.
    judged_out: dict[str, str] = {}
    for item in found:
        if item.reason.startswith(JUDGED_OUT):
            judged_out.setdefault(item.memory.id, item.reason)
    found = [item.with_reason(judged_out[item.memory.id]) if not item.reason and item.memory.id in judged_out
             else item for item in found]
    first_in: dict[str, str] = {}
    for item in found:
        if not item.reason:
            kept = first_in.get(item.memory.id)
            if kept is None or precedence(item.memory.layer) < precedence(kept):
                first_in[item.memory.id] = item.memory.layer
    merged = []
    for item in found:
        kept = first_in.get(item.memory.id)
        if kept is not None and kept != item.memory.layer and not item.reason:
            item = item.with_reason(f"the same memory is in from layer {kept}")
        merged.append(item)
    merged.sort(key=lambda r: -r.score)
    return ranking, merged
