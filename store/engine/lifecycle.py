"""The confidence rules: reinforcement, usage boost and supersede (what a memory's confidence
becomes when it is re-learned, used or replaced; `Store` applies them in its writes), and the
rules over time: decay of unused memories and cleanup of dead ones.

The decay policies are pure functions of a memory's numbers and the time, chosen by
`decay.policy` in config, because the seeds disagree:

- `linear` (seed 000): after `idle_days` unused, lose `per_week` a week, never below `floor`.
- `grace-weekly` (seed 001, the default): after `grace_days` without an update, lose `per_week`
  a week.
- `exponential` (seed 004): confidence x exp(-rate_per_day x idle days), from the first day.
- `none`: memories keep their confidence.

What a policy's days are is `decay.clock`: only the days on which a session of the memory's
project started (`sessions`, the default; `WorkDays`), or every calendar day (`calendar`). On the
sessions clock a project left alone for two months comes back with the rules it was taught,
where the calendar had faded them out; a project no session worked on does not decay.

Decay is applied from where it was last applied (`decayed_at`), so running it every session
start gives the same confidence as running it once: the seed-001 algorithm, which subtracts the
whole decay since the grace period on every run, would compound it. Protected memories never
decay; an active memory that falls below `confidence.inactive_below` becomes inactive.
Inactive memories keep decaying (seed 001 stops at inactive): that is what brings them down to
cleanup's threshold, and it keeps decay the same whether it runs daily or once.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from store.engine.clock import DAY
from store.engine.config import Config
from store.engine.core import Change, Memory, Store
from store.engine.errors import ConfigError

WEEK = 7 * DAY
POLICIES = ("linear", "grace-weekly", "exponential", "none")
CLOCKS = ("calendar", "sessions")
# Smaller decay than this is left to accumulate, so history is not flooded with tiny events.
MIN_STEP = 0.005


@dataclass(frozen=True)
class DecayInput:
    confidence: float
    idle_since: float  # the last time the memory was created, imported, updated, reinforced, used or verified
    decayed_at: float | None  # decay already applied up to here


Elapsed = Callable[[float, float], float]  # days between two times, as a clock counts them


def calendar_days(start: float, end: float) -> float:
    return (end - start) / DAY


class WorkDays:
    """The days a project was worked on: the UTC days on which one of its sessions started.
    `between(a, b)` counts those after `a`'s day, up to and including `b`'s."""

    def __init__(self, starts: Iterable[float]) -> None:
        self.days = sorted({math.floor(at / DAY) for at in starts})

    def between(self, start: float, end: float) -> float:
        if end <= start:
            return 0.0
        return float(bisect.bisect_right(self.days, math.floor(end / DAY))
                     - bisect.bisect_right(self.days, math.floor(start / DAY)))


def decayed_confidence(policy: str, params: dict[str, Any], item: DecayInput, now: float,
                       elapsed: Elapsed = calendar_days) -> float:
    """The confidence `item` has at `now` under `policy`, given what was already applied, its
    days counted by `elapsed` (calendar days unless told)."""
    if policy == "none":
        return item.confidence
    if policy == "exponential":
        start = max(item.idle_since, item.decayed_at or item.idle_since)
        days = max(0.0, elapsed(start, now))
        return item.confidence * math.exp(-float(params["rate_per_day"]) * days)
    if policy == "linear":
        grace, per_week, floor = float(params["idle_days"]), float(params["per_week"]), float(params["floor"])
    elif policy == "grace-weekly":
        grace, per_week, floor = float(params["grace_days"]), float(params["per_week"]), 0.0
    else:
        raise ConfigError(f"decay.policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    # Days idle past the grace period, less those decay has already been applied for.
    done = elapsed(item.idle_since, item.decayed_at) if item.decayed_at is not None else 0.0
    weeks = max(0.0, elapsed(item.idle_since, now) - max(grace, done)) / 7
    if weeks == 0:
        return item.confidence
    # The floor only stops decay; it never raises a memory that is already below it.
    return max(min(floor, item.confidence), item.confidence - per_week * weeks)


def _clocks(store: Store, rows: list[tuple]) -> Callable[[int], Elapsed]:
    """Each project's clock under `decay.clock`."""
    clock = store.config.decay.clock
    if clock == "calendar":
        return lambda project_id: calendar_days
    if clock != "sessions":
        raise ConfigError(f"decay.clock must be one of {', '.join(CLOCKS)}, not {clock!r}")
    starts: dict[int, list[float]] = {}
    for project_id, started_at in store.backend.session_table.starts(sorted({row[8] for row in rows})):
        starts.setdefault(project_id, []).append(started_at)
    work = {project_id: WorkDays(times).between for project_id, times in starts.items()}
    return lambda project_id: work.get(project_id, _never)


def _never(start: float, end: float) -> float:
    return 0.0  # a project no session worked on: no day of it has passed


def plan_decay(store: Store, project: str | None = None, *, all_projects: bool = False) -> list[Change]:
    """The decay changes due now, without writing them."""
    config: Config = store.config
    policy = config.decay.policy
    if policy not in POLICIES:
        raise ConfigError(f"decay.policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    if policy == "none":
        return []
    params = config.decay.params(policy)
    threshold = float(config.confidence.inactive_below)
    now = store.now()
    rows = store.backend.memory_table.decay_inputs(None if all_projects else store.project_id(project))
    clock_of = _clocks(store, rows)
    changes: list[Change] = []
    for memory_id, confidence, created, updated, used, verified, decayed_at, status, project_id in rows:
        # The clock starts at the last time memdeck had reason to trust the memory: stored or
        # imported (an import's update time is when it was imported), changed, used or verified.
        item = DecayInput(confidence, max(created, updated, used or 0.0, verified or 0.0), decayed_at)
        after = round(decayed_confidence(policy, params, item, now, clock_of(project_id)), 6)
        if confidence - after < MIN_STEP:
            continue
        status_after = "inactive" if after < threshold else status
        changes.append(Change(memory_id, confidence, after, status, status_after,
                              {"policy": policy, **({"status": status_after} if status_after != status else {})}))
    return changes


def run_decay(store: Store, project: str | None = None, *, dry_run: bool = False,
              all_projects: bool = False, actor: str = "decay") -> list[Change]:
    if dry_run:
        return plan_decay(store, project, all_projects=all_projects)
    # Planned under the write lock: a change computed from a confidence another process then
    # raises (a reinforcement, a use) would write over that raise.
    with store.transaction():
        changes = plan_decay(store, project, all_projects=all_projects)
        if changes:
            store.apply_changes(changes, "decayed", actor=actor)
    return changes


def plan_contradiction(store: Store, memory: Memory, detail: dict[str, Any]) -> Change:
    """Seed 001's contradiction, for a memory judged wrong with nothing to replace it: confidence
    drops by `confidence.contradiction_penalty` (never below 0), and an active memory that falls
    below `confidence.inactive_below` becomes inactive. A protected memory keeps its confidence:
    a person protected it, so a person decides; the verdict is still recorded."""
    before = memory.confidence
    if memory.protected:
        return Change(memory.id, before, before, memory.status, memory.status, {**detail, "protected": True})
    after = round(max(0.0, before - float(store.config.confidence.contradiction_penalty)), 6)
    status = memory.status
    if status == "active" and after < float(store.config.confidence.inactive_below):
        status = "inactive"
    return Change(memory.id, before, after, memory.status, status,
                  {**detail, **({"status": status} if status != memory.status else {})})


def contradict(store: Store, memory_id: str, *, actor: str, session_id: str | None = None,
               detail: dict[str, Any] | None = None) -> Memory:
    """Apply `plan_contradiction` to one memory as a `contradicted` event."""
    # Planned under the write lock, as decay is: a confidence read before another process
    # raised it would be written back over that raise.
    with store.transaction():
        change = plan_contradiction(store, store.get(memory_id), detail or {})
        store.apply_changes([change], "contradicted", actor=actor, session_id=session_id)
    return store.get(memory_id)


def plan_cleanup(store: Store, project: str | None = None) -> list[Memory]:
    """Seed 000's cleanup, limited to memories already out of use: inactive or in the trash,
    never used, below `cleanup.max_confidence`, and unchanged for `cleanup.min_idle_days`."""
    config = store.config
    cutoff = store.now() - float(config.cleanup.min_idle_days) * DAY
    from store.engine.core import memory_from_row

    rows = store.backend.memory_table.cleanup_candidates(store.project_id(project),
                                                         float(config.cleanup.max_confidence), cutoff)
    return [memory_from_row(r) for r in rows]


def run_cleanup(store: Store, project: str | None = None, *, dry_run: bool = False) -> list[Memory]:
    if dry_run:
        return plan_cleanup(store, project)
    # Chosen under the write lock, so a memory used or restored meanwhile is not purged.
    with store.transaction():
        victims = plan_cleanup(store, project)
        if victims:
            store.trash.delete_rows([m.id for m in victims])
    return victims
