"""`memdeck share ID…`: own memories copied to the team store with their history, recording who
shared them (docs/team.md).

Each memory keeps its id, so the copy and the original are one memory in the layered reads.
Its anchors (docs/anchors.md) go with it, and its events (each keeps the name of who recorded
it in its detail, as `recorded_by`: PostgreSQL names the sharer on every row it writes),
followed by a `shared` event. When the team
store is set to review what is shared (`memdeck team init --review`), an active memory arrives
pending, in the reviewers' inbox. Everything goes in one transaction of the team store: a
refusal (a reader's role may not add) leaves both stores as they were. The own store records a
`shared` event on each memory only after the team store took them. The tasks this person's
agents judged the memory relevant or not relevant for (`PERSONAL_META`) stay behind.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from store.backends import share_rows
from store.engine.errors import InvalidInput
from store.interop.import_writes import MEMORY_INSERT_COLUMNS
from store.index.identifiers import index_words

if TYPE_CHECKING:
    from store.engine.core import Store

EVENT_COLUMNS = ("kind", "at", "actor", "session_id", "confidence_before", "confidence_after", "detail", "author")
# An anchor's columns a share carries: where it points and what it saw, and its last check's
# verdict. Not the file's size and mtime, which are the sharer's checkout's (a member's first
# check of the team's copy reads the file).
ANCHOR_COLUMNS = ("path", "start_line", "end_line", "line_hash", "snapshot", "commit_id", "blob_id", "status",
                  "checked_at", "created_at")


# What a memory's meta keeps of this person's agents' verdicts (the tasks it was judged relevant or
# not relevant for, `store.engine.feedback`): theirs, not the team's, so they stay behind; the
# sharer's primes still judge the team's copy by them (`store.layers.prime`).
PERSONAL_META = ("not_relevant", "helpful")


@dataclass(frozen=True)
class Shared:
    id: str
    title: str
    status: str  # as it arrived: pending when the team store reviews what is shared
    already: bool = False  # the team store held it already: nothing was copied
    anchors: int = 0  # how many anchors (docs/anchors.md) went with it


def reviews_shared(team: "Store") -> bool:
    """Whether the team store holds shared memories for review (`memdeck team init --review`)."""
    from store.backends.postgres_roles import team_setting

    return team.backend.name == "postgresql" and team_setting(team.db, "review") == "on"


def share(own: "Store", team: "Store", ids: Sequence[str], *, actor: str = "cli") -> list[Shared]:
    """Copy the own memories `ids` (with their events) into `team`, in one transaction. The team
    store's refusal (this database user's role may not add) is `Refused`, one line."""
    import peewee

    from store.backends.postgres_roles import refusal

    try:
        return _share(own, team, ids, actor)
    except peewee.DatabaseError as exc:
        refused = refusal(exc, team.db)
        if refused is not None:
            raise refused from None
        raise


def _share(own: "Store", team: "Store", ids: Sequence[str], actor: str) -> list[Shared]:
    if not ids:
        raise InvalidInput("name the memories to share: memdeck share ID…")
    memories = own.get_many(ids)
    for memory in memories:
        if memory.status == "deleted":
            raise InvalidInput(f"memory {memory.id} is in the trash; restore it before sharing it")
    review = reviews_shared(team)
    done: list[Shared] = []
    now = team.now()
    with team.transaction():
        present = set(team.found([m.id for m in memories]))
        for memory in memories:
            if memory.id in present:
                done.append(Shared(memory.id, memory.title, team.get(memory.id).status, already=True))
                continue
            row = list(share_rows.memory_row(own.backend, memory.id, MEMORY_INSERT_COLUMNS))
            row[MEMORY_INSERT_COLUMNS.index("project_id")] = team.project_id(memory.project)
            status = "pending" if review and memory.status == "active" else memory.status
            row[MEMORY_INSERT_COLUMNS.index("status")] = status
            row[MEMORY_INSERT_COLUMNS.index("owner")] = team.author
            meta = {k: v for k, v in memory.meta.items() if k not in PERSONAL_META}
            meta["shared"] = {"by": team.author, "from": own.author, "at": now}
            row[MEMORY_INSERT_COLUMNS.index("meta")] = json.dumps(meta, ensure_ascii=False)
            words = index_words(memory.title, memory.content, row[MEMORY_INSERT_COLUMNS.index("tags")])
            share_rows.insert_memory(team.backend, MEMORY_INSERT_COLUMNS, row, words)
            anchors = _copy_anchors(own, team, memory.id)
            for event in own.events(memory.id):
                detail = dict(event.detail)
                if event.author:
                    detail["recorded_by"] = event.author
                team.record_event(memory.id, event.kind, before=event.confidence_before,
                                  after=event.confidence_after, actor=event.actor, session_id=event.session_id,
                                  at=event.at, detail=detail)
            team.record_event(memory.id, "shared", before=memory.confidence, after=memory.confidence, actor=actor,
                              detail={"by": team.author, "from": own.author, "review": review})
            done.append(Shared(memory.id, memory.title, status, anchors=anchors))
    with own.transaction():
        for item in done:
            if not item.already:
                own.record_event(item.id, "shared", before=None, after=None, actor=actor,
                                 detail={"to": "team", "by": team.author, "status": item.status})
    return done


def _copy_anchors(own: "Store", team: "Store", memory_id: str) -> int:
    """The memory's anchors, copied to the team store (`ANCHOR_COLUMNS`); how many."""
    rows = share_rows.anchors(own.backend, memory_id, ANCHOR_COLUMNS)
    share_rows.insert_anchors(team.backend, memory_id, ANCHOR_COLUMNS, rows)
    return len(rows)
