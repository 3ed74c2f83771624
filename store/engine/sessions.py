"""Sessions and their activity log (`store.sessions`): what an agent's run writes (a session is
created or filled in, ended, reopened when followed; each step appended to its log)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from store.engine.errors import NotFound
from store.engine.limits import check_time
from store.engine.models import ActivityRow, ProjectRow, SessionRow
from store.engine.records import Activity, Session
from store.engine.text import clean_list

if TYPE_CHECKING:
    from store.engine.keeper import Keeper


class Sessions:
    """A store's sessions and their activities: `store.sessions`."""

    def __init__(self, store: "Keeper") -> None:
        self.store = store

    def ensure(self, session_id: str, *, project: str | None = None, agent: str | None = None,
                       hat: str | None = None, task: str | None = None, started_at: float | None = None,
                       source_path: str | None = None, meta: dict[str, Any] | None = None) -> Session:
        """The session with this id, created if new; known fields are filled in, never erased."""
        with self.store.db.atomic():
            row = SessionRow.get_or_none(SessionRow.id == session_id)
            if row is None:
                SessionRow.insert(
                    id=session_id, project=self.store.project_id(project), agent=agent, hat=hat, task=task,
                    started_at=self.outside_time(started_at, "a session's start"),
                    source_path=source_path, meta=json.dumps(meta or {}, ensure_ascii=False),
                ).execute()
            else:
                update = {k: v for k, v in dict(agent=agent, hat=hat, task=task, source_path=source_path).items()
                          if v is not None and getattr(row, k) is None}
                if meta:
                    update["meta"] = json.dumps({**json.loads(row.meta), **meta}, ensure_ascii=False)
                if update:
                    SessionRow.update(**update).where(SessionRow.id == session_id).execute()
        return self.get(session_id)

    def outside_time(self, value: float | None, where: str) -> float:
        """A session's or an activity's time from outside (a transcript's record, a caller):
        within the dates memdeck keeps (else `InvalidInput`, like every other time from outside);
        None is now. Unlike a memory's times it is not brought back to now when later: it is the
        agent's clock, kept as recorded so a session's log reads in its own time (ingest reads a
        transcript whose clock runs ahead of the store's, and its entries keep their spacing)."""
        return self.store.now() if value is None else check_time(value, where)

    def get(self, session_id: str) -> Session:
        row = (SessionRow.select(SessionRow, ProjectRow.name).join(ProjectRow)
               .where(SessionRow.id == session_id).first())
        if row is None:
            raise NotFound(f"no session with id {session_id!r}")
        return _session_from_row(row)

    def recent(self, project: str | None = None, limit: int = 200) -> list[Session]:
        """The project's sessions, newest first."""
        rows = (SessionRow.select(SessionRow, ProjectRow.name).join(ProjectRow)
                .where(SessionRow.project == self.store.project_id(project))
                .order_by(SessionRow.started_at.desc()).limit(limit))
        return [_session_from_row(r) for r in rows]

    def update(self, session_id: str, *, ended_at: float | None = None,
                       files_touched: Iterable[str] | None = None, meta: dict[str, Any] | None = None) -> Session:
        self.save(session_id, ended_at=ended_at, files_touched=files_touched, meta=meta)
        return self.get(session_id)

    def save(self, session_id: str, *, ended_at: float | None = None,
             files_touched: Iterable[str] | None = None, meta: dict[str, Any] | None = None) -> None:
        """`update` without reading the session back: ingest saves its state so after every
        batch, and reading back a long session's meta (the heuristics' state: 118 KB in the
        ingest benchmark's session) cost about 2 ms a batch."""
        with self.store.db.atomic():
            row = SessionRow.get_or_none(SessionRow.id == session_id)
            if row is None:
                raise NotFound(f"no session with id {session_id!r}")
            update: dict[str, Any] = {}
            if ended_at is not None:
                update["ended_at"] = ended_at
            if files_touched is not None:
                merged = clean_list([*json.loads(row.files_touched), *files_touched])
                update["files_touched"] = json.dumps(list(merged), ensure_ascii=False)
            if meta:
                update["meta"] = json.dumps({**json.loads(row.meta), **meta}, ensure_ascii=False)
            if update:
                SessionRow.update(**update).where(SessionRow.id == session_id).execute()

    def end(self, session_id: str, at: float | None) -> Session:
        """End a session at `at` (without it, its latest activity, or now if it has none). An end
        never moves earlier, nor before the start: another input of the session (a subagent's
        file) may end sooner than the part already read."""
        table = self.store.backend.session_table
        with self.store.db.atomic():
            if at is None:
                at = table.last_activity_at(session_id) or self.store.now()
            else:
                at = self.outside_time(at, "a session's end")
            table.end(session_id, at)
        return self.get(session_id)

    def reopen(self, session_id: str) -> None:
        """A session being followed is live again until the follow stops."""
        with self.store.db.atomic():  # a model write in this store's transaction goes to this store
            SessionRow.update(ended_at=None).where(SessionRow.id == session_id).execute()

    def append_activity(self, session_id: str, kind: str, summary: str, *, at: float | None = None,
                        memory_id: str | None = None, detail: dict[str, Any] | None = None,
                        seq: int | None = None) -> Activity | None:
        """Add an entry to a session's log. With an explicit `seq` the call is idempotent: an
        entry already at that position is left alone and None is returned."""
        at = self.outside_time(at, "an activity's time")
        with self.store.db.atomic():
            if seq is None:
                last = (ActivityRow.select(ActivityRow.seq).where(ActivityRow.session == session_id)
                        .order_by(ActivityRow.seq.desc()).scalar())
                seq = 0 if last is None else last + 1
            elif ActivityRow.get_or_none(ActivityRow.session == session_id, ActivityRow.seq == seq):
                return None
            activity_id = ActivityRow.insert(
                session=session_id, seq=seq, at=at, kind=kind,
                summary=summary, memory_id=memory_id, detail=json.dumps(detail or {}, ensure_ascii=False),
            ).execute()
        return Activity(activity_id, session_id, seq, at, kind, summary,
                        memory_id, detail or {})

    def activities(self, session_id: str, *, after_seq: int = -1, kinds: Sequence[str] | None = None,
                   limit: int = 10000) -> list[Activity]:
        query = ActivityRow.select().where(ActivityRow.session == session_id, ActivityRow.seq > after_seq)
        if kinds:
            query = query.where(ActivityRow.kind.in_(list(kinds)))
        rows = query.order_by(ActivityRow.seq).limit(limit).tuples()
        return [Activity(id=r[0], session_id=r[1], seq=r[2], at=r[3], kind=r[4], summary=r[5],
                         memory_id=r[6], detail=json.loads(r[7])) for r in rows]


def _session_from_row(row: SessionRow) -> Session:
    return Session(
        id=row.id, project=row.project.name, agent=row.agent, hat=row.hat, task=row.task,
        started_at=row.started_at, ended_at=row.ended_at, source_path=row.source_path,
        files_touched=tuple(json.loads(row.files_touched)), meta=json.loads(row.meta),
    )
