"""Feedback on a memory of another layer (docs/team.md, "Feedback on team memories").

A memory read from the team store gets its feedback in the team store, written as the
connecting database user, within what that user's role allows (a reader may change only the
feedback columns: `store.backends.postgres_roles.FEEDBACK_COLUMNS`): an injected memory's use
(`prime --record`, the hooks, MCP `context`) and an agent's verdict (MCP `feedback`). PostgreSQL
names the user on every event it records, so `memdeck log --memory ID` says who gave it.

- Use and verdicts are the own store's rules (`Store.record_usage`, `store.engine.feedback`),
  run on the team store's connection; the use count goes up in the UPDATE (`use_count + 1`)
  and the confidence is planned under the team store's write lock, so members recording at
  once all count.
- A verdict's task is not kept on a team memory (`give_feedback(keep_tasks=False)`): one
  agent's "not relevant for this task" does not change what every member's prime injects; the
  task is in the event's detail. A `not_relevant` or `helpful` with a task is kept for you
  instead, in your own store (`store.layers.judgments`): your later primes judge the
  memory by it as they judge your own memories; nobody else's do. The team store first: a
  verdict it does not take (refused, busy past `LOCK_WAIT`, gone) is kept nowhere.
- A verdict a person must confirm (`feedback.hold`) waits in the team store's inbox, for its
  reviewers; a reader may not add that item, and is refused in one line.
- The file layer (`.memdeck/team.yaml`) is read-only: `wrong` and `outdated` on one of its
  memories are refused in one line (the file changes through pull requests); `not_relevant` and
  `helpful` with a task are kept for you alone, in your own store, and the file is not written;
  its use is not recorded anywhere.
- Recording a prime's use in the team store never fails the prime (a hook must not): a store
  that is gone, busy past `LOCK_WAIT`, or refuses, leaves the use unrecorded, with one line in
  `Layers.unrecorded`.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Protocol, Sequence

from store.engine.errors import InvalidInput, MemdeckError, StoreError
from store.engine.feedback import FeedbackResult
from store.layers.judgments import KEPT_VERDICTS, keep

if TYPE_CHECKING:
    from store.engine.core import Store
    from store.engine.records import Memory


class Layers(Protocol):
    """What feedback needs of the open layers (`store.layers.layers.Layers` is it): your own
    store, each layer's by name, and where a use that could not be recorded is told."""

    own: "Store"
    unrecorded: list[tuple[str, str]]

    def store(self, name: str) -> "Store | None": ...

# Layers no feedback is written to: the repository's team file changes through pull requests.
READ_ONLY_LAYERS = ("file",)
# The longest a feedback write waits for the team store's write lock (another member's long
# import holds it): a prime or a hook goes on without recording rather than hang.
LOCK_WAIT = "2s"


# What a verdict kept for you says in its answer (`kept_for_you`).
KEPT_SAYS = {
    "not_relevant": "kept in your own store: your later primes leave this memory out for this task and "
                    "tasks like it; other members' primes and the {layer}'s memory are unchanged",
    "helpful": "kept in your own store: it counts against your not_relevant verdicts on this memory "
               "for tasks like this one; other members' primes and the {layer}'s memory are unchanged",
}
_LAYER_WORDS = {"team": "team store", "file": "team file"}


@dataclass(frozen=True)
class LayerFeedbackResult(FeedbackResult):
    """A verdict on another layer's memory; `kept`: what keeping it for you means, or ''."""

    kept: str = ""

    def to_json(self) -> dict:
        return {**super().to_json(), **({"kept_for_you": self.kept} if self.kept else {})}


def read_only(layer: str, memory_id: str) -> InvalidInput:
    """The one line for feedback on a memory of a read-only layer."""
    return InvalidInput(f"memory {memory_id} is in the {layer} layer, read-only here: the team file "
                        "changes through a pull request, not through feedback (only not_relevant and "
                        "helpful are kept, for you alone)")


def give(layers: "Layers", memory: "Memory", verdict: str, **options) -> FeedbackResult:
    """`store.engine.feedback.give_feedback` on `memory` (as `Layers.get` returned it) in the
    store of its layer: the own store, or the team store as this database user; then, on
    another layer's memory, a `not_relevant` or `helpful` with a task kept for you in the own
    store (`store.layers.judgments`). A read-only layer's memory takes only those two, kept
    for you, never written to the layer; what the team store's role may not do is `Refused`."""
    import peewee

    from store.engine.feedback import give_feedback

    task = _task(verdict, options)
    if memory.layer in READ_ONLY_LAYERS:
        if verdict not in KEPT_VERDICTS:
            raise read_only(memory.layer, memory.id)
        if not task:
            raise InvalidInput(f"memory {memory.id} is in the {memory.layer} layer, read-only here: a "
                               f"{verdict} verdict on it is kept for you with its task, and there is none "
                               "(ask for context first); nothing was changed")
        if options.get("guarded") and options.get("held_because"):  # a burst: nowhere to hold it
            raise InvalidInput(f"memory {memory.id} is in the {memory.layer} layer, read-only here, and "
                               f"this verdict would wait for review ({options['held_because']}); "
                               "nothing was changed")
        result = LayerFeedbackResult(memory, memory)
    else:
        store = layers.store(memory.layer)
        if store is None:  # the layer was closed meanwhile
            raise StoreError(f"the {memory.layer} layer is not open; nothing was changed")
        with _as_member(store):
            given = give_feedback(store, memory.id, verdict, keep_tasks=memory.layer == "own", **options)
        if memory.layer == "own":
            return given
        result = LayerFeedbackResult(given.before, given.after, given.replacement, given.held, given.why_held)
        if verdict not in KEPT_VERDICTS or not task or given.held is not None:
            return result  # a held verdict waits for the team's reviewers: not kept for you
    try:
        keep(layers.own, memory, verdict, task, options.get("evidence"), options.get("session_id"))
    except (MemdeckError, peewee.DatabaseError) as exc:  # the own store busy or gone: say so, in one line
        if memory.layer in READ_ONLY_LAYERS:
            raise StoreError(f"not kept for you: {_one_line(exc)}; nothing was changed") from None
        raise StoreError(f"recorded in the {memory.layer} layer, but not kept for you in your own store: "
                         f"{_one_line(exc)}") from None
    return LayerFeedbackResult(result.before, result.after, result.replacement,
                               kept=KEPT_SAYS[verdict].format(layer=_LAYER_WORDS.get(memory.layer, memory.layer)))


def _task(verdict: str, options: dict) -> str:
    """The task a verdict is kept for, as an own memory keeps it (`give_feedback`): the task, or
    for `not_relevant` without one, the note."""
    task = (options.get("task") or "").strip()
    if verdict == "not_relevant" and not task:
        task = (options.get("note") or "").strip()
    return task


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def record_use(layers: "Layers", used: Sequence["Memory"], *, session_id: str | None,
               actor: str = "prime", boost: bool = False) -> None:
    """The use of injected memories of the other layers, in their stores (the team store; the
    file is read-only). A layer that cannot take it is told in `layers.unrecorded`, never raised."""
    by_layer: dict[str, list[str]] = {}
    for memory in used:
        if memory.layer != "own" and memory.layer not in READ_ONLY_LAYERS:
            by_layer.setdefault(memory.layer, []).append(memory.id)
    for name, ids in by_layer.items():
        store = layers.store(name)
        if store is None:
            continue
        try:
            with _as_member(store):
                store.record_usage(ids, session_id=session_id, actor=actor, boost=boost)
        except MemdeckError as exc:
            layers.unrecorded.append((name, str(exc)))


@contextmanager
def _as_member(store: "Store") -> Iterator[None]:
    """Run a write of feedback on `store`: on PostgreSQL waiting at most `LOCK_WAIT` for its
    write lock; the role's refusal as `Refused` (one line), other database trouble as
    `StoreError`, each with nothing changed (the transaction is rolled back)."""
    import peewee

    from store.backends.postgres_roles import refusal

    server = store.backend.name == "postgresql"
    try:
        if server:
            store.db.execute_sql(f"SET lock_timeout = '{LOCK_WAIT}'")
        try:
            yield
        finally:
            if server and not store.db.in_transaction():
                store.db.execute_sql("RESET lock_timeout")
    except peewee.DatabaseError as exc:
        refused = refusal(exc, store.db)
        if refused is not None:
            raise refused from None
        if store.db.in_transaction():
            store.db.rollback()
        text = _one_line(exc)
        if "lock timeout" in text:
            text = f"the team store's write lock is held by another writer past {LOCK_WAIT}"
        raise StoreError(f"nothing was changed: {text}") from None
