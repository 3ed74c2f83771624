"""Bulk curation: one action over many memories, in one transaction, with an event in every
memory's history, and an undo of the last action (a bulk action or an edit from the form).

`Curator` wraps a `Store` and remembers, for the last action it ran, each memory as it was
before and after. Undo reverts exactly the fields that action changed, field by field, and only
a field still as the action left it: a change someone made since (another process, a
reinforcement) is kept, and the result says what was not undone. Undo writes through
`Store.update`, so it is itself recorded in every history (actor `<actor>:undo`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from store.engine.core import EDITABLE_FIELDS, Store, clean_list
from store.engine.errors import InvalidInput, NotFound, brief_value
from store.engine.records import Memory

# How far `raise` / `lower` move confidence.
CONFIDENCE_STEP = 0.1
# A person's choices on a proposal (`Curator.resolve`): keep both as they are; the new memory
# supersedes the other; merge the new text into the other (one memory, both histories); they
# contradict and the other (`wrong-old`) or the new one (`wrong-new`) is wrong.
RESOLUTIONS = ("keep-both", "supersede", "merge", "wrong-old", "wrong-new")
# The meta keys an undo puts back as they were.
_UNDONE_META = ("proposal", "superseded_by", "distinct_from")


@dataclass(frozen=True)
class BulkResult:
    """What a bulk action did, in words for a notification, and to which memories."""

    action: str
    memory_ids: tuple[str, ...]
    kept: str | None = None  # merge: the memory the others were merged into
    not_undone: tuple[str, ...] = ()  # undo: each change it left alone, and why

    @property
    def summary(self) -> str:
        n = len(self.memory_ids)
        text = f"{self.action}: {n} {'memory' if n == 1 else 'memories'}"
        if self.not_undone:
            text += "; not undone (changed since): " + "; ".join(self.not_undone)
        return text


@dataclass
class _Undo:
    result: BulkResult
    before: list[Memory] = field(default_factory=list)
    after: list[Memory] = field(default_factory=list)


def _rest_of_chain(store: Store, proposal: dict[str, Any], memory_id: str, other_id: str, choice: str) -> list[str]:
    """Of a proposal ending a chain of updates, the memories before `other` that `choice`
    concerns, oldest first, without those purged since: all of them for `supersede` and
    `keep-both`, none for the choices about two memories."""
    if choice not in ("supersede", "keep-both"):
        return []
    rest = [str(c) for c in proposal.get("chain") or () if str(c) not in (memory_id, other_id)]
    present = store.found(rest)
    return [c for c in rest if c in present]


def strongest(memories: Sequence[Memory]) -> Memory:
    """The memory a merge keeps: highest confidence, then most used, then most recently updated."""
    return max(memories, key=lambda m: (m.confidence, m.use_count, m.updated_at, m.id))


class Curator:
    """Bulk actions on one store. Keep one per open app: it holds the undo of the last action."""

    def __init__(self, store: Store, actor: str = "ui") -> None:
        self.store = store
        self.actor = actor
        self._last: _Undo | None = None

    @property
    def can_undo(self) -> bool:
        return self._last is not None

    @property
    def last_action(self) -> str | None:
        return self._last.result.action if self._last else None

    def _run(self, action: str, ids: Sequence[str], change: Callable[[Memory], None],
             kept: str | None = None) -> BulkResult:
        ids = tuple(dict.fromkeys(ids))
        if not ids:
            raise InvalidInput("nothing selected")
        # Read and written under one write lock: each write is a compare-and-set against the
        # version just read, so nothing another process wrote is overwritten.
        with self.store.transaction():
            before = self.store.get_many(ids)
            for memory in before:
                change(memory)
            after = self.store.get_many(ids)
        result = BulkResult(action, ids, kept)
        self._last = _Undo(result, before, after)
        return result

    def _update(self, memory: Memory, **fields: Any) -> Memory:
        return self.store.update(memory.id, memory, actor=self.actor, **fields)

    def _edit(self, **fields: Any) -> Callable[[Memory], None]:
        return lambda m: self._update(m, **fields)

    def edit(self, read: Memory, **changes: Any) -> Memory:
        """Save a person's edit of `read` (the memory as they saw it): a compare-and-set that
        raises `Conflict` if it changed since; undoable like a bulk action."""
        with self.store.transaction():
            before = self.store.get(read.id)
            edited = self.store.update(read.id, read, actor=self.actor, **changes)
        self._last = _Undo(BulkResult("edit", (read.id,)), [before], [edited])
        return edited

    # -- the actions --------------------------------------------------------------------------

    def delete(self, ids: Sequence[str]) -> BulkResult:
        """Move to the trash (restorable)."""
        def change(m: Memory) -> None:
            if m.status != "deleted":
                self._update(m, status="deleted")
        return self._run("moved to trash", ids, change)

    def set_status(self, ids: Sequence[str], status: str) -> BulkResult:
        if status not in ("active", "inactive", "pending"):
            raise InvalidInput(f"bulk status is active, inactive or pending, not {status!r}")
        result = self._run(f"set {status}", ids, self._edit(status=status))
        if status == "active" and self._last is not None:
            # Accepted: the agent verdicts held in them are applied, and undone with them.
            from store.engine.feedback import held_targets, settle

            accepted = [m.id for m in self._last.before if m.status == "pending"]
            targets = [t for t in held_targets(self.store, accepted) if t not in ids]
            if targets:
                before = [*self._last.before, *self.store.get_many(targets)]
                settle(self.store, accepted, actor=self.actor)
                self._last = _Undo(result, before, self.store.get_many([m.id for m in before]))
        return result

    def set_type(self, ids: Sequence[str], type: str) -> BulkResult:
        type = self.store.check_type(type)
        return self._run(f"set type {type}", ids, self._edit(type=type))

    def set_hat(self, ids: Sequence[str], hat: str | None) -> BulkResult:
        hat = (hat or "").strip() or None
        if hat is not None and hat not in self.store.vocabulary.hats:
            raise InvalidInput(f"unknown hat {hat!r}; one of {', '.join(self.store.vocabulary.hats)}")
        return self._run(f"set hat {hat or '(none)'}", ids, self._edit(hat=hat))

    def add_tags(self, ids: Sequence[str], tags: Sequence[str] | str) -> BulkResult:
        new = clean_list(tags)
        if not new:
            raise InvalidInput("no tags given")
        return self._run(f"tagged {', '.join(new)}", ids,
                         lambda m: self._update(m, tags=[*m.tags, *new]))

    def remove_tags(self, ids: Sequence[str], tags: Sequence[str] | str) -> BulkResult:
        gone = set(clean_list(tags))
        if not gone:
            raise InvalidInput("no tags given")
        return self._run(f"untagged {', '.join(sorted(gone))}", ids,
                         lambda m: self._update(m, tags=[t for t in m.tags if t not in gone]))

    def adjust_confidence(self, ids: Sequence[str], delta: float) -> BulkResult:
        """Raise (delta > 0) or lower confidence, kept within 0 and 1."""
        verb = "raised" if delta > 0 else "lowered"
        return self._run(f"{verb} confidence {abs(delta):.2f}", ids, lambda m: self._update(
            m, confidence=round(min(1.0, max(0.0, m.confidence + delta)), 6)))

    def set_confidence(self, ids: Sequence[str], value: float) -> BulkResult:
        return self._run(f"set confidence {value}", ids, self._edit(confidence=value))

    def protect(self, ids: Sequence[str], protected: bool = True) -> BulkResult:
        return self._run("protected" if protected else "unprotected", ids, self._edit(protected=protected))

    def merge(self, ids: Sequence[str], into: str | None = None) -> BulkResult:
        """Merge into the strongest memory (or `into`, one of `ids` or not: review merges
        candidates into a memory they resemble): it gains the highest confidence and the union
        of all tags and file refs; every memory's history records a `merged` event; the others
        go to the trash."""
        ids = list(dict.fromkeys([*([into] if into else []), *ids]))
        if len(ids) < 2:
            raise InvalidInput("merging needs two or more memories")
        with self.store.transaction():  # the strongest is chosen from what is merged
            memories = self.store.get_many(ids)
            keep = memories[0] if into else strongest(memories)
            others = [m for m in memories if m.id != keep.id]
            merged_ids = [m.id for m in others]

            def change(m: Memory) -> None:
                if m.id == keep.id:
                    after = max(x.confidence for x in memories)
                    self._update(m, confidence=after, tags=[t for x in memories for t in x.tags],
                                 file_refs=[f for x in memories for f in x.file_refs])
                    self.store.record_event(m.id, "merged", before=m.confidence, after=after,
                                            actor=self.actor, detail={"from": merged_ids})
                else:
                    self.store.record_event(m.id, "merged", before=m.confidence, after=m.confidence,
                                            actor=self.actor, detail={"into": keep.id})
                    self._update(m, status="deleted")
            return self._run(f"merged into {keep.id}", [keep.id, *merged_ids], change, kept=keep.id)

    def resolve(self, memory_id: str, choice: str, text: str | None = None) -> BulkResult:
        """A person's decision on the proposal `memory_id` holds (store.engine.sameness): one of
        `RESOLUTIONS`. Both memories' histories record a `resolved` event; nothing is purged (a
        memory taken out goes to the trash or becomes inactive, superseded), and it is undoable
        like a bulk action, the proposal included. A proposal ending a chain of updates
        (`consolidate`): `supersede` retires every older memory of the chain and `keep-both` keeps
        them all apart for good (each history records it); the other choices are about this memory
        and the one before it."""
        if choice not in RESOLUTIONS:
            raise InvalidInput(f"unknown choice {choice!r}; one of {', '.join(RESOLUTIONS)}")
        store = self.store
        with store.transaction():
            memory = store.get(memory_id)
            proposal = memory.meta.get("proposal")
            if not isinstance(proposal, dict):
                raise InvalidInput(f"{memory_id} holds no proposal")
            other_id = str(proposal.get("other"))
            try:
                other = store.get(other_id)
            except NotFound:
                if choice != "keep-both":
                    raise InvalidInput(f"{other_id} was purged: only keep-both is left") from None
                other = None
            chained = _rest_of_chain(store, proposal, memory_id, other_id, choice)
            ids = [memory_id] + ([other_id] if other is not None else []) + chained
            before = store.get_many(ids)
            if choice in ("keep-both", "supersede", "wrong-old") and memory.status == "pending":
                memory = self._update(memory, status="active")
            if other is not None and choice in ("supersede", "wrong-old"):
                if choice == "wrong-old":
                    from store.engine.lifecycle import contradict

                    other = contradict(store, other.id, actor=self.actor, detail={"by": memory_id})
                store.relations.mark_superseded(other, memory_id, self.actor, None, note=f"resolved: {choice}")
            if other is not None and choice == "merge":
                merged = (text or "").strip() or memory.content
                self._update(other, content=merged, confidence=max(other.confidence, memory.confidence),
                             tags=[*other.tags, *memory.tags], file_refs=[*other.file_refs, *memory.file_refs])
                store.record_event(other_id, "merged", before=other.confidence, after=store.get(other_id).confidence,
                                   actor=self.actor, detail={"from": [memory_id], "text": memory.content})
                store.record_event(memory_id, "merged", before=memory.confidence, after=memory.confidence,
                                   actor=self.actor, detail={"into": other_id})
                memory = self._update(store.get(memory_id), status="deleted")
            if choice == "wrong-new":
                from store.engine.lifecycle import contradict

                memory = contradict(store, memory_id, actor=self.actor, detail={"by": other_id})
                memory = self._update(memory, status="deleted")
            now = store.get(memory_id)
            meta = {k: v for k, v in now.meta.items() if k != "proposal"}
            if choice == "keep-both":  # a person said they are two memories: consolidate asks no more
                meta["distinct_from"] = sorted({*meta.get("distinct_from", ()), other_id, *chained})
            store.set_meta(memory_id, meta, now.version)
            if chained:
                self._settle_chain(choice, memory_id, [i for i in ids if i != memory_id])
            chain = {"chain": proposal["chain"]} if proposal.get("chain") else {}
            for one, about in ((memory_id, other_id), (other_id, memory_id), *((c, memory_id) for c in chained)):
                if one in ids:
                    store.record_event(one, "resolved", before=None, after=None, actor=self.actor,
                                       detail={"choice": choice, "kind": proposal.get("kind"), "other": about,
                                               **chain})
            after = store.get_many(ids)
        result = BulkResult(f"resolved {memory_id}: {choice}", tuple(ids),
                            kept=other_id if choice == "merge" else memory_id)
        self._last = _Undo(result, before, after)
        return result

    def _settle_chain(self, choice: str, memory_id: str, older_ids: list[str]) -> None:
        """The rest of a chain `memory_id` ends, once `other` is settled: `supersede` retires
        each older memory (one in the trash stays there, as it is); `keep-both` keeps every two
        of the chain apart (`distinct_from`), so consolidate asks about none of them again."""
        for one in self.store.get_many(older_ids):
            if choice == "supersede" and one.status != "deleted" and "superseded_by" not in one.meta:
                self.store.relations.mark_superseded(one, memory_id, self.actor, None, note="resolved: supersede (chain)")
            elif choice == "keep-both":
                apart = {*one.meta.get("distinct_from", ()), memory_id, *older_ids} - {one.id}
                self.store.set_meta(one.id, {**one.meta, "distinct_from": sorted(apart)}, one.version)

    def export(self, ids: Sequence[str], path: Path) -> BulkResult:
        """Write the memories as a JSON array (the `memdeck export` record shape). Not undoable:
        it changes nothing in the store."""
        memories = self.store.get_many(ids)
        try:
            path.write_text(json.dumps([m.to_json() for m in memories], ensure_ascii=False, indent=2)
                            + "\n", encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"{path}: cannot write the export: {exc.strerror}") from None
        return BulkResult(f"exported to {path}", tuple(m.id for m in memories))

    # -- undo -----------------------------------------------------------------------------------

    def undo(self) -> BulkResult:
        """Revert what the last action changed, in one transaction: each field it changed goes
        back to its value before, if it is still the value the action left; a field changed
        since is kept and named in the result's `not_undone`."""
        if self._last is None:
            raise InvalidInput("nothing to undo")
        undo, actor = self._last, f"{self.actor}:undo"
        not_undone: list[str] = []
        with self.store.transaction():
            for before, after in zip(undo.before, undo.after):
                try:
                    current = self.store.get(before.id)
                except NotFound:
                    not_undone.append(f"{before.id} was purged")
                    continue
                reverts: dict[str, Any] = {}
                for name in EDITABLE_FIELDS:
                    done, was, now = getattr(after, name), getattr(before, name), getattr(current, name)
                    if done == was:
                        continue  # the action did not change it
                    if now == done:
                        reverts[name] = was
                    elif now != was:
                        not_undone.append(f"{before.id} {name} (now {brief_value(now)})")
                if reverts:
                    current = self.store.update(before.id, current, actor=actor, **reverts)
                # A resolved proposal comes back; a supersession made by the action is undone.
                meta = dict(current.meta)
                for key in _UNDONE_META:
                    if before.meta.get(key) != after.meta.get(key) and meta.get(key) == after.meta.get(key):
                        if key in before.meta:
                            meta[key] = before.meta[key]
                        else:
                            meta.pop(key, None)
                if meta != current.meta:
                    self.store.set_meta(before.id, meta, current.version)
        self._last = None
        return BulkResult(f"undid {undo.result.action}", undo.result.memory_ids,
                          not_undone=tuple(not_undone))
