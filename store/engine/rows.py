"""A memory as the store reads and writes its row: the row (its columns in the order of
`Memory`'s fields, as `store.backends.memory_table` selects them) turned into the record, the fields an edit may change, a lifecycle
rule's change before it is applied, and ids in slices a statement can take."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from store.engine.limits import sane_confidence, sane_time
from store.engine.records import Memory

EDITABLE_FIELDS = (
    "title", "content", "type", "tags", "file_refs", "scope", "hat", "confidence",
    "protected", "status", "task", "verified_at",
)

# What a conflict names as changed meanwhile: the editable fields and the counters rules move.
SHOWN_FIELDS = (*EDITABLE_FIELDS, "last_used_at", "use_count", "supersedes")


def memory_from_row(row: Sequence[Any]) -> Memory:
    # Times and confidence pass through the limits: a store written before them (or by another
    # tool) may hold a year 9999 or a 1e300, which must still list, show and export.
    return Memory(
        id=row[0], project=row[1], type=row[2], title=row[3], content=row[4],
        confidence=sane_confidence(row[5]), tags=tuple(json.loads(row[6])), file_refs=tuple(json.loads(row[7])),
        scope=row[8], hat=row[9], source=row[10], status=row[11], protected=bool(row[12]),
        session_id=row[13], task=row[14], created_at=sane_time(row[15]), updated_at=sane_time(row[16]),
        last_used_at=sane_time(row[17]), verified_at=sane_time(row[18]), use_count=row[19], supersedes=row[20],
        meta=json.loads(row[21]) if row[21] else {}, version=row[22], anchor_status=row[23],
    )


@dataclass(frozen=True)
class Change:
    """One memory's confidence or status change computed by a lifecycle rule, before it is applied."""

    memory_id: str
    confidence_before: float
    confidence_after: float
    status_before: str
    status_after: str
    detail: dict[str, Any]


def id_chunks(ids: Sequence[str], p: str, size: int = 500) -> Iterator[tuple[list[str], str]]:
    """`ids` in slices within SQLite's limit on query parameters, each with its parameter marks."""
    for start in range(0, len(ids), size):
        chunk = list(ids[start:start + size])
        yield chunk, ", ".join([p] * len(chunk))


def changed_fields(read: Memory, current: Memory) -> dict[str, tuple[Any, Any]]:
    """Each field a person would recognise that differs between two reads of one memory:
    {name: (as read, as now)}."""
    return {name: (getattr(read, name), getattr(current, name)) for name in SHOWN_FIELDS
            if getattr(read, name) != getattr(current, name)}


# A None that means "leave the field as it is", told apart from a None that clears it.
_UNCHANGED = object()


def _status_event(before: str, after: str) -> str:
    if after == "deleted":
        return "deleted"
    if before == "deleted":
        return "restored"
    return "status_changed"
