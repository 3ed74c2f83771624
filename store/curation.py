"""Bulk curation: one action over many memories, in one transaction, with an event in every
memory's history, and an undo of the last action.

`Curator` wraps a `Store` and remembers, for the last bulk action it ran, each memory as it was
before. Undo writes those values back through `Store.edit` / `Store.restore`, so the undo is
itself recorded in every history (actor `<actor>:undo`) rather than erasing what happened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from store.core import EDITABLE_FIELDS, Store, clean_list
from store.errors import InvalidInput
from store.records import Memory

# How far `raise` / `lower` move confidence.
CONFIDENCE_STEP = 0.1
# The fields undo puts back (status is handled apart: the trash has its own rules).
RESTORED_FIELDS = tuple(f for f in EDITABLE_FIELDS if f not in ("status", "task", "verified_at"))


@dataclass(frozen=True)
class BulkResult:
    """What a bulk action did, in words for a notification, and to which memories."""

    action: str
    memory_ids: tuple[str, ...]
    kept: str | None = None  # merge: the memory the others were merged into

    @property
    def summary(self) -> str:
        n = len(self.memory_ids)
        return f"{self.action}: {n} {'memory' if n == 1 else 'memories'}"


@dataclass
class _Undo:
    result: BulkResult
    before: list[Memory] = field(default_factory=list)


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
        with self.store.transaction():
            before = self.store.get_many(ids)
            for memory in before:
                change(memory)
        result = BulkResult(action, ids, kept)
        self._last = _Undo(result, before)
        return result

    def _edit(self, **fields: Any) -> Callable[[Memory], None]:
        return lambda m: self.store.edit(m.id, actor=self.actor, **fields)

    # -- the actions --------------------------------------------------------------------------

    def delete(self, ids: Sequence[str]) -> BulkResult:
        """Move to the trash (restorable)."""
        def change(m: Memory) -> None:
            if m.status != "deleted":
                self.store.edit(m.id, status="deleted", actor=self.actor)
        return self._run("moved to trash", ids, change)

    def set_status(self, ids: Sequence[str], status: str) -> BulkResult:
        if status not in ("active", "inactive", "pending"):
            raise InvalidInput(f"bulk status is active, inactive or pending, not {status!r}")
        return self._run(f"set {status}", ids, self._edit(status=status))

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
                         lambda m: self.store.edit(m.id, tags=[*m.tags, *new], actor=self.actor))

    def remove_tags(self, ids: Sequence[str], tags: Sequence[str] | str) -> BulkResult:
        gone = set(clean_list(tags))
        if not gone:
            raise InvalidInput("no tags given")
        return self._run(f"untagged {', '.join(sorted(gone))}", ids,
                         lambda m: self.store.edit(m.id, tags=[t for t in m.tags if t not in gone],
                                                   actor=self.actor))

    def adjust_confidence(self, ids: Sequence[str], delta: float) -> BulkResult:
        """Raise (delta > 0) or lower confidence, kept within 0 and 1."""
        verb = "raised" if delta > 0 else "lowered"
        return self._run(f"{verb} confidence {abs(delta):.2f}", ids, lambda m: self.store.edit(
            m.id, confidence=round(min(1.0, max(0.0, m.confidence + delta)), 6), actor=self.actor))

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
        memories = self.store.get_many(ids)
        keep = memories[0] if into else strongest(memories)
        others = [m for m in memories if m.id != keep.id]
        merged_ids = [m.id for m in others]

        def change(m: Memory) -> None:
            if m.id == keep.id:
                after = max(x.confidence for x in memories)
                self.store.edit(m.id, actor=self.actor, confidence=after,
                                tags=[t for x in memories for t in x.tags],
                                file_refs=[f for x in memories for f in x.file_refs])
                self.store.record_event(m.id, "merged", before=m.confidence, after=after,
                                        actor=self.actor, detail={"from": merged_ids})
            else:
                self.store.record_event(m.id, "merged", before=m.confidence, after=m.confidence,
                                        actor=self.actor, detail={"into": keep.id})
                self.store.edit(m.id, status="deleted", actor=self.actor)
        return self._run(f"merged into {keep.id}", [keep.id, *merged_ids], change, kept=keep.id)

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
        """Put every memory of the last bulk action back as it was, in one transaction."""
        if self._last is None:
            raise InvalidInput("nothing to undo")
        undo, actor = self._last, f"{self.actor}:undo"
        with self.store.transaction():
            current = {m.id: m for m in self.store.get_many([m.id for m in undo.before])}
            for old in undo.before:
                if current[old.id].status == "deleted" and old.status != "deleted":
                    self.store.restore([old.id], actor=actor)
                self.store.edit(old.id, actor=actor, status=old.status,
                                **{f: getattr(old, f) for f in RESTORED_FIELDS})
        self._last = None
        return BulkResult(f"undid {undo.result.action}", undo.result.memory_ids)
