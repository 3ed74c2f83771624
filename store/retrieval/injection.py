"""Injection, the read path: `prime` chooses the memories worth putting in an agent's prompt for
an injection context (project, hat, task, paths in play, tags, the reading session), packs them
into a token budget and renders the block, and says why every candidate is in or out.

A dry run (the default) writes nothing. With `record=True` (the session-start hook) each
injected memory is used once more (`Store.record_usage`: use count, last used, the usage boost,
a `used` event; a team memory's in the team store: `store.layers.feedback`), and the
session's log gets one `injected` activity listing them. A filler
(`injection.gate.fill`) is in the block and the activity, but not used: nothing said it was
about the task, and the boost it would get (confidence, recency) would make it the next
block's filler again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from store.engine.core import Store
from store.engine.errors import ConfigError, InvalidInput
from store.engine.openings import settle_listings
from store.retrieval.packing import CharTokenizer, Index, Tokenizer, pack, pack_index
from store.retrieval.ranked import RankedMemory, is_targeted
from store.retrieval.ranking import rank
from store.engine.records import InjectionContext

GROUPINGS = ("type", "scope")
# The signals an included memory's reason names (the ones that say it is about the task).
WHY_SIGNALS = ("text", "semantic", "path", "tag", "hat")
# The events by which a memory is new knowledge for `--since` (seed 000's parallel task sharing).
NEWS_EVENTS = ("created", "imported", "reinforced")


@dataclass(frozen=True)
class PrimeResult:
    block: str
    tokens: int
    budget: int
    included: list[RankedMemory]
    excluded: list[RankedMemory]
    relevant: int = 0  # the "of M memories" of the header: all that passed the relevance gate
    weights: dict[str, float] = field(default_factory=dict)  # each signal's weight in the scores
    filler: int = 0  # of `relevant`, those let in only as filler (`injection.gate.fill`)
    # The gate's task-level verdict (`Evidence.to_json`): confidence, chance level, margins; None
    # when the gate was lifted (no task, paths or tags).
    gate: dict[str, Any] | None = None
    # The memories after the block as one line each (`injection.index_lines`), best first; they
    # are in `excluded` too, with the reason they are not in whole. `tokens` counts their lines.
    index: list[RankedMemory] = field(default_factory=list)
    index_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "block": self.block, "tokens": self.tokens, "budget": self.budget, "gate": self.gate,
            "included": [r.to_json() for r in self.included],
            "index": [{"id": r.memory.id, "type": r.memory.type, "title": r.memory.title, "layer": r.memory.layer}
                      for r in self.index],
            "index_tokens": self.index_tokens,
            "excluded": [r.to_json() for r in self.excluded],
        }


def _budget(store: Store, context: InjectionContext) -> int:
    budget = store.config.injection.budget if context.budget is None else context.budget
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InvalidInput(f"the budget must be a positive number of tokens, not {budget!r}")
    return budget


def _grouping(store: Store) -> str:
    grouping = store.config.injection.grouping
    if grouping not in GROUPINGS:
        raise ConfigError(f"injection.grouping must be one of {', '.join(GROUPINGS)}, not {grouping!r}")
    return grouping


def news_since(store: Store, context: InjectionContext) -> set[str]:
    """Memories of the project that sessions other than the reader's created or reinforced since
    `context.since`, read from their events."""
    return store.backend.memory_table.news_since(store.project_id(context.project), context.since, NEWS_EVENTS,
                                                 context.session_id or "")


def why_in(item: RankedMemory, targeted: bool = True) -> str:
    """The signals that earned a memory its place, strongest first."""
    if item.signals.get("critical"):
        lead = "critical"
    elif item.filler:
        return (f"filler (room left on an on-topic task; nothing says it is about it): confidence "
                f"{item.signals.get('confidence', 0):.2f}, hat {item.signals.get('hat', 0):.2f}")
    elif not targeted:
        return (f"trusted (no task given): confidence {item.signals.get('confidence', 0):.2f}, "
                f"hat {item.signals.get('hat', 0):.2f}")
    else:
        lead = "relevant"
    named = sorted(((v, k) for k, v in item.signals.items() if k in WHY_SIGNALS and v > 0), reverse=True)
    return lead + (": " + ", ".join(f"{k} {v:.2f}" for v, k in named) if named else "")


# Why a memory is out of a prompt's block: the session has it already.
ALREADY_RECEIVED = "already injected in this session"

def received(store: Store, session_id: str | None, what: str = "ids") -> set[str]:
    """The memories this session has been given already (its `injected` activities): in whole
    (`ids`), or as a line of the index (`indexed`)."""
    if not session_id:
        return set()
    ids: set[str] = set()
    for activity in store.sessions.activities(session_id, kinds=("injected",)):
        ids.update(str(i) for i in (activity.detail or {}).get(what, []))
    return ids


def prime_for_prompt(store: Store, context: InjectionContext, record: bool = False, *,
                     layers: Any = None) -> PrimeResult:
    """The block for one prompt of a session (the user-prompt-submit hook; MCP `context` may use
    the same rules): the prompt is the task; only memories with evidence (the gate's, no filler
    unless it is sure) that this session has not already received, within
    `injection.prompt_budget` unless the context says otherwise; nothing when nothing is about
    it (a prompt with no task words injects nothing, not the trusted memories)."""
    context = _task_capped(context)
    if not is_targeted(context):
        return PrimeResult("", 0, _budget(store, context), [], [])
    if context.budget is None:
        context = replace(context, budget=int(store.config.injection.prompt_budget))
    result = prime(store, context, exclude=received(store, context.session_id), layers=layers,
                   indexed=received(store, context.session_id, "indexed"))
    if record and result.included:  # a prompt that gets nothing leaves no trace
        _record(store, context, result, layers=layers)
    return result


def prime_session_start(store: Store, context: InjectionContext, record: bool = False, *,
                        layers: Any = None) -> PrimeResult:
    """The session-start block: only always-on memories, the critical types and the standing
    rules' (`injection.session_start`: its types, at its bar or the critical one if lower, at most
    its limit, the most confident first), within `injection.session_budget` unless the context
    says otherwise. Recorded as the session's `injected` activity (so the prompt hook does not repeat
    them) but not as a use: no task matched them."""
    injection = store.config.injection
    standing = injection.session_start
    types = tuple(dict.fromkeys([*injection.critical.types, *standing.types]))
    # Every layer's store holds to the rule for the call (a team store's own `untargeted:
    # trusted` would otherwise fill the block with its most trusted memories); a hook is one
    # call in its own process, and no other thread reads these stores meanwhile.
    stores = [store, *(other for _, other in (layers.others if layers is not None else ()))]
    saved = [each.config for each in stores]
    for each in stores:
        each.config = each.config.with_overrides(
            {"injection.untargeted": "critical", "injection.critical.types": list(types),
             "injection.critical.min_confidence": min(injection.critical.min_confidence, standing.min_confidence),
             "injection.critical.limit": standing.limit}, "session start")
    try:
        context = replace(context, task="", paths=(), tags=(),
                          budget=context.budget if context.budget is not None else int(injection.session_budget))
        return prime(store, context, record, count_use=False, layers=layers)
    finally:
        for each, config in zip(stores, saved):
            each.config = config


def candidates(store: Store, context: InjectionContext, save: bool):
    """(the ranking, its candidates after the anchor check and supersession)."""
    only = news_since(store, context) if context.since is not None else None
    # Each step gives every candidate its verdict; a candidate with a reason is out. Ranking
    # applies eligibility and the relevance gate, then the anchor check, before packing.
    ranking = rank(store, context, only=only)
    return ranking, without_superseded(trusted(store, ranking.items, save=save))


# The words of a task a prime reads: its first 16,000 characters (some 2,500 words), cut at a
# blank. A prompt of a megabyte (a pasted log) is a task of its start: every step after this is
# then bounded, and a team layer's statements (a word's matches, its statistics) are too.
MAX_TASK_CHARS = 16_000


def _task_capped(context: InjectionContext) -> InjectionContext:
    task = context.task or ""
    if len(task) <= MAX_TASK_CHARS:
        return context
    cut = task[:MAX_TASK_CHARS]
    blank = max(cut.rfind(" "), cut.rfind("\n"))
    return replace(context, task=cut[:blank] if blank > MAX_TASK_CHARS // 2 else cut)


def prime(store: Store, context: InjectionContext, record: bool = False, *,
          tokenizer: Tokenizer | None = None, exclude: set[str] | None = None,
          count_use: bool = True, layers: Any = None, indexed: set[str] | None = None) -> PrimeResult:
    """The memory block for `context`, and every candidate with the reason it is in or out.
    `exclude`: memories left out as already received (`ALREADY_RECEIVED`). `count_use`: with
    `record`, whether the injected memories are used once more (the session-start block is not).
    `layers` (`store.layers.layers.Layers`): the candidates of every layer, merged. `indexed`:
    memories the session's index listed already, not listed again."""
    context = _task_capped(context)
    budget = _budget(store, context)
    grouping = _grouping(store)
    ranking, ranked = (layers.candidates if layers is not None else candidates)(store, context, record)
    if ranking.evidence is not None:  # on a targeted task: below the first few, rarely one it needs
        from store.retrieval.gate import capped

        ranked = capped(ranked, store.config.injection.gate.most_memories,
                        layers=1 + len(layers.others) if layers is not None else 1)
    # The critical limit holds in every block (the session start's is its standing rules' limit).
    from store.retrieval.gate import critical_capped

    ranked = critical_capped(ranked, int(store.config.injection.critical.limit))
    if exclude:
        ranked = [r.with_reason(ALREADY_RECEIVED) if r.memory.id in exclude and not r.reason else r for r in ranked]
    # Filler (`injection.gate.fill`) after every memory with evidence, in the block as in the list.
    injectable = sorted((r for r in ranked if not r.reason), key=lambda r: r.filler)
    tokenizer = tokenizer or CharTokenizer()

    def packed_in(room: int):
        return pack([r.memory for r in injectable if not r.filler], budget=room,
                    heading=str(store.config.injection.heading), total=len(injectable),
                    grouping=grouping, tokenizer=tokenizer, long=float(store.config.injection.long_memory),
                    filler=[r.memory for r in injectable if r.filler])

    settings = None
    packed = None
    if ranking.evidence is not None:
        from store.retrieval.gate import spend_share

        settings = store.config.injection.gate
        # Spend in proportion to confidence: a task barely on topic gets a few memories, not the
        # budget; but always room for its best one, if the budget holds it.
        share = spend_share(settings, ranking.evidence.strength)
        if share < 1.0:
            packed = packed_in(max(1, int(budget * share)))
            if not packed.included and injectable:
                packed = pack([injectable[0].memory], budget=budget, heading=str(store.config.injection.heading),
                              total=len(injectable), grouping=grouping, tokenizer=tokenizer,
                              long=float(store.config.injection.long_memory))
    packed = packed or packed_in(budget)
    chosen = set(packed.included)
    targeted = ranking.targeted
    included = [r.with_reason(why_in(r, targeted)) for r in injectable if r.memory.id in chosen]
    excluded = [r if r.reason else r.with_reason("over budget") for r in ranked if r.memory.id not in chosen]
    gate = ranking.evidence.to_json(settings, ranking.chance) if ranking.evidence is not None else None
    if gate is not None and ranking.by_layer:  # with layers: whose evidence it is, and each layer's
        gate.update(layer=ranking.layer, layers={k: round(v, 3) for k, v in ranking.by_layer.items()})
    index = _index(store, ranking, excluded, included, tokenizer, indexed or set(), budget - packed.tokens)
    listed = [r for r in excluded if r.memory.id in index.ids]
    listed.sort(key=lambda r: index.ids.index(r.memory.id))
    block = packed.block + index.text if packed.block else ""
    tokens = tokenizer.count(block) if index.ids else packed.tokens  # never above the two parts' sum
    result = PrimeResult(block, tokens, _budget(store, context), included, excluded, len(injectable),
                         ranking.weights, sum(1 for r in injectable if r.filler), gate, listed, index.tokens)
    if record:
        _record(store, context, result, count_use=count_use, layers=layers)
        if count_use and layers is not None:  # a team memory's use goes to the team store
            layers.record_use([r.memory for r in result.included if not r.filler], session_id=context.session_id)
    return result


# Why a candidate with evidence is out of the block but may be listed in its index: the cap, or
# the room (the budget, or the share of it an on-topic task may spend).
INDEXED_REASONS = ("below the cap", "over budget")


def _index(store: Store, ranking: Any, excluded: list[RankedMemory], included: list[RankedMemory],
           tokenizer: Tokenizer, indexed: set[str], room: int) -> Index:
    """The block's index: on an on-topic task whose block holds memories, the best of the others
    with evidence of their own, as one line each, within `injection.index_budget` and the room the
    block leaves of the budget (the whole stays within it). A task the gate finds about nothing
    here, or only weakly, gets none (the noise rules stay)."""
    most = int(store.config.injection.index_lines)
    evidence = ranking.evidence
    if most <= 0 or not included or evidence is None or evidence.strength < 1.0:
        return Index("", 0, ())
    pool = sorted((r for r in excluded if r.evidence > 0 and not r.filler and r.memory.id not in indexed
                   and r.reason.startswith(INDEXED_REASONS)), key=lambda r: -r.score)
    return pack_index([r.memory for r in pool], budget=min(int(store.config.injection.index_budget), room),
                      most=most, tokenizer=tokenizer)


def without_superseded(ranked: list[RankedMemory]) -> list[RankedMemory]:
    """A memory whose successor is among the candidates still in is left out, with its reason:
    the block never holds a memory and the one that supersedes it (a successor names its
    predecessor in `supersedes`; the predecessor names it in `meta.superseded_by`)."""
    still_in = {r.memory.id for r in ranked if not r.reason}
    successor: dict[str, str] = {}
    for r in ranked:
        if r.memory.supersedes and r.memory.id in still_in:
            successor[r.memory.supersedes] = r.memory.id
        later = r.memory.meta.get("superseded_by")
        if isinstance(later, str) and later in still_in:
            successor.setdefault(r.memory.id, later)
    if not successor:
        return ranked
    return [r.with_reason(f"superseded by {successor[r.memory.id]}")
            if not r.reason and r.memory.id in successor else r for r in ranked]


def trusted(store: Store, ranked: list[RankedMemory], *, save: bool) -> list[RankedMemory]:
    """The anchor check (`store.anchors.verify.trust`) over the candidates still in: a stale memory is
    left out with its reason, or kept with a visible "(verify: PATH changed)" in its text."""
    in_play = [r.memory for r in ranked if not r.reason]
    if all(m.anchor_status is None for m in in_play):
        return ranked  # no anchors (each memory's row says so): nothing to check, nothing to load
    from store.anchors.verify import trust

    verdict = trust(store, in_play, save=save)
    if not verdict.left_out and not verdict.flagged:
        return ranked
    checked = []
    for item in ranked:
        if item.memory.id in verdict.left_out:
            item = item.with_reason(verdict.left_out[item.memory.id])
        elif item.memory.id in verdict.flagged:
            note = verdict.flagged[item.memory.id]
            item = replace(item, memory=replace(item.memory, content=f"{item.memory.content} {note}"))
        checked.append(item)
    return checked


def _record(store: Store, context: InjectionContext, result: PrimeResult, *, count_use: bool = True,
            layers: Any = None) -> None:
    ids: Sequence[str] = [r.memory.id for r in result.included]
    filler = [r.memory.id for r in result.included if r.filler]
    # The own store's memories; a team memory's use is recorded in the team store (`prime`).
    used = [r.memory.id for r in result.included if not r.filler and r.memory.layer == "own"] if count_use else []
    with store.transaction():
        if used:
            store.record_usage(used, session_id=context.session_id, boost=False)  # shown, not yet wanted
        if context.session_id:
            store.sessions.ensure(context.session_id, project=context.project, hat=context.hat,
                                 task=context.task or None)
            noun = "memory" if len(ids) == 1 else "memories"
            detail: dict[str, Any] = {"ids": list(ids), "tokens": result.tokens}
            if filler:
                detail["filler"] = filler
            if result.index:
                detail["indexed"] = [r.memory.id for r in result.index]
            if context.task and (result.index or ids):
                # What an opening counts for, and what its unopened lines were not wanted for
                # (`store.engine.openings`).
                detail["task"] = context.task[:1000]
            # The session's earlier index lines not opened by this prime: settled now.
            settle_listings(store, context.session_id, getattr(layers, "keep_listing", None))
            store.sessions.append_activity(context.session_id, "injected",
                                  f"injected {len(ids)} {noun} (~{result.tokens} tokens)", detail=detail)
