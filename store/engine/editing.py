"""Editing a memory: compare-and-set writes on its version (`update`), the field checks, and the
shortcuts built on it (`edit`, `modify`, `set_status`). A write whose memory changed since it was
read raises `Conflict` with what changed."""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from store.engine.errors import Conflict, InvalidInput, NotFound
from store.engine.limits import check_field, check_time, clamp_time
from store.engine.models import MemoryRow
from store.engine.records import Memory
from store.engine.rows import _UNCHANGED, EDITABLE_FIELDS, _status_event, changed_fields
from store.engine.text import clean_list, content_hash
from store.engine.redaction import unify_line_breaks
from store.engine.vocabulary import STATUSES


class Editing:
    """Mixed into `Store` (uses its `db`, `backend`, `config`, `now`, `get`, `check_*` and `record_event`)."""

    def update(self, memory_id: str, expected: int | Memory, *, actor: str = "cli",
               session_id: str | None = None, **changes: Any) -> Memory:
        """Compare-and-set: write `changes` (fields of `EDITABLE_FIELDS`) only if the memory is
        still at the version the caller read, and return it as it is after the write.

        `expected` is the version read, or the `Memory` read (then a conflict names each field
        that changed meanwhile). Only fields whose value differs are written; the version goes
        up by one. On a conflict nothing is written and `Conflict` is raised, holding the memory
        as it is now. Records an `edited` event naming each field changed, and a status event
        when the status moves.
        """
        p = self.backend.param
        unknown = set(changes) - set(EDITABLE_FIELDS)
        if unknown:
            raise InvalidInput(f"cannot edit {', '.join(sorted(unknown))}")
        read = expected if isinstance(expected, Memory) else None
        expected_version = read.version if read is not None else int(expected)
        with self.db.atomic():
            old = self._current(memory_id, expected_version, read)
            update: dict[str, Any] = {}
            diff: dict[str, list[Any]] = {}
            for field_name, value in changes.items():
                value = self._checked_field(field_name, value)
                if isinstance(value, (str, tuple)):
                    check_field(field_name, value)
                if value is _UNCHANGED:
                    continue
                current = getattr(old, field_name)
                if value == current:
                    continue
                diff[field_name] = [list(current) if isinstance(current, tuple) else current,
                                    list(value) if isinstance(value, tuple) else value]
                update[field_name] = json.dumps(list(value), ensure_ascii=False) if isinstance(value, tuple) else value
            if not update:
                return old
            now = self.now()
            update["updated_at"] = now
            if "content" in update:
                update["content_hash"] = content_hash(update["content"])
            status_change = diff.pop("status", None)
            if status_change:
                update["status_changed_at"] = now
                if status_change[1] == "deleted":
                    update["meta"] = json.dumps({**old.meta, "status_before_delete": old.status}, ensure_ascii=False)
            assignments = ", ".join(f"{name} = {p}" for name in update)
            # The version in the WHERE clause is what makes this a compare-and-set on a store
            # whose writers do not all hold one lock (PostgreSQL); SQLite's write lock is held.
            cursor = self.db.execute_sql(
                f"UPDATE memory SET {assignments}, version = version + 1 WHERE id = {p} AND version = {p}",
                (*update.values(), memory_id, expected_version))
            if cursor.rowcount != 1:
                self._current(memory_id, expected_version, read)  # raises the conflict
                raise Conflict(memory_id, expected_version, self.get(memory_id))
            confidence_after = update.get("confidence", old.confidence)
            if diff:
                self.record_event(memory_id, "edited", before=old.confidence, after=confidence_after,
                                  actor=actor, session_id=session_id, at=now, detail={"changes": diff})
            if status_change:
                self.record_event(memory_id, _status_event(status_change[0], status_change[1]),
                                  before=confidence_after, after=confidence_after, actor=actor,
                                  session_id=session_id, at=now,
                                  detail={"from": status_change[0], "to": status_change[1]})
            self.index_pending()
        return self.get(memory_id)

    def _current(self, memory_id: str, expected_version: int, read: Memory | None) -> Memory:
        """The memory as stored, if it is still at `expected_version`; else the conflict."""
        try:
            current = self.get(memory_id)
        except NotFound:
            if read is None:
                raise
            raise Conflict(memory_id, expected_version, None) from None
        if current.version != expected_version:
            raise Conflict(memory_id, expected_version, current,
                           changed_fields(read, current) if read is not None else None)
        return current

    def _checked_field(self, field_name: str, value: Any) -> Any:
        """`value` as the store keeps `field_name`, or `_UNCHANGED` for a None that means "leave it"."""
        if value is None and field_name not in ("scope", "hat", "task", "verified_at"):
            return _UNCHANGED
        if field_name == "type":
            return self.check_type(value)
        if field_name == "confidence":
            return self._check_confidence(value)
        if field_name in ("tags", "file_refs"):
            return clean_list(value)
        if field_name == "content":
            value = unify_line_breaks(value.strip())
            if not value:
                raise InvalidInput("a memory needs some content")
            self.check_content(value)
        elif field_name == "title":
            value = unify_line_breaks(value.strip())
            if not value:
                raise InvalidInput("a memory needs a title")
        elif field_name == "status":
            if value not in STATUSES:
                raise InvalidInput(f"unknown status {value!r}; one of {', '.join(STATUSES)}")
        elif field_name == "protected":
            return bool(value)
        elif field_name in ("scope", "hat", "task") and isinstance(value, str):
            return value.strip() or None
        elif field_name == "verified_at":
            return clamp_time(check_time(value, "verified_at"), self.now())
        return value

    def edit(self, memory_id: str, *, actor: str = "cli", session_id: str | None = None,
             **changes: Any) -> Memory:
        """Change a memory's fields as it is now: read and written under one write lock, so only
        the fields given change and nothing written meanwhile is lost. For a change a person made
        to what they saw earlier, use `update` with the version they saw."""
        with self.db.atomic():
            current = self.get(memory_id)
            return self.update(memory_id, current.version, actor=actor, session_id=session_id, **changes)

    def modify(self, memory_id: str, change: Callable[[Memory], dict[str, Any]], *, actor: str = "cli",
               session_id: str | None = None) -> Memory:
        """Read the memory under the write lock, compute the changes from it with `change`, and
        write them: for edits relative to the current value (add a tag, raise confidence)."""
        with self.db.atomic():
            current = self.get(memory_id)
            return self.update(memory_id, current, actor=actor, session_id=session_id, **change(current))

    def set_status(self, memory_ids: Sequence[str], status: str, *, actor: str = "cli",
                   session_id: str | None = None) -> list[Memory]:
        """Move memories to `status` in one transaction, each with its event."""
        if status not in STATUSES:
            raise InvalidInput(f"unknown status {status!r}; one of {', '.join(STATUSES)}")
        with self.db.atomic():
            self.get_many(memory_ids)  # every id must exist before anything changes
            return [self.edit(i, status=status, actor=actor, session_id=session_id) for i in memory_ids]

    def append_evidence(self, memory_id: str, evidence: list[dict[str, Any]], *, keep: int) -> bool:
        """Add transcript lines to a memory's `meta.evidence` (a line already there is not added
        again; the latest `keep` are kept), with the version bumped so that an editor holding an
        older read still sees the memory changed. Evidence is ingest's own field: read and written
        here in one transaction, so another process's edit of the memory in between is kept.
        Whether anything was added."""
        with self.db.atomic():
            memory = self.get(memory_id)
            known = list(memory.meta.get("evidence") or [])
            seen = {(e.get("session"), e.get("line")) for e in known}
            added = [e for e in evidence if (e.get("session"), e.get("line")) not in seen]
            if not added:
                return False
            meta = {**memory.meta, "evidence": (known + added)[-keep:]}
            (MemoryRow.update(meta=json.dumps(meta, ensure_ascii=False), version=MemoryRow.version + 1)
             .where(MemoryRow.id == memory_id).execute())
        return True
