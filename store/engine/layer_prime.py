"""The prime's candidates over every layer (`store.engine.layers`): each layer ranked in its own
store, by that store's statistics and relevance gate, then merged best first. A memory in two
layers (shared, same id) is a candidate once: the first copy still in, in the layers' order
(own, team, file); the other copies are out, saying where it is. The task-level verdict (what
the block may spend, what `--explain` prints) is the layer's with the strongest evidence: a
task the own store knows nothing of but the team's does is on topic, by the team's evidence.

Another layer's candidates are judged with this person's own verdicts on them, kept in the own
store (`store.engine.layer_judgments`), by the same rules as an own memory's (`store.retrieval.judged`):
a team memory judged not relevant stays out of this person's later primes for a similar task. A
memory judged out in one layer's copy is out in the others' too."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.engine.layers import Layers
    from store.engine.records import InjectionContext


def merged_candidates(layers: "Layers", context: "InjectionContext", save: bool):
    """(the own store's ranking, every layer's candidates merged best first)."""
    from store.engine.layer_judgments import reading
    from store.retrieval.injection import candidates
    from store.retrieval.judged import JUDGED_OUT

    ranking, ranked = candidates(layers.own, context, save)
    found = list(ranked)
    rankings = [ranking]
    for name, store in layers.others:
        # Only the own store's anchors' last check is saved: the other layers are read, not written.
        with reading(layers.own, name):
            theirs, items = candidates(store, context, False)
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
            first_in.setdefault(item.memory.id, item.memory.layer)
    merged = []
    for item in found:
        kept = first_in.get(item.memory.id)
        if kept is not None and kept != item.memory.layer and not item.reason:
            item = item.with_reason(f"the same memory is in from layer {kept}")
        merged.append(item)
    merged.sort(key=lambda r: -r.score)
    return ranking, merged
