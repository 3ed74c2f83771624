"""The SQL of the session and activity tables the engine asks for beyond the Peewee models
(`store.backend.session_table`; named in `store.engine.ports.SessionTable`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from store.engine.ports import Backend


class SessionTable:
    def __init__(self, backend: "Backend") -> None:
        self.backend = backend
        self.db = backend.db
        self.p = backend.param

    def last_activity_at(self, session_id: str) -> float | None:
        return self.db.execute_sql(f"SELECT MAX(at) FROM activity WHERE session_id = {self.p}",
                                   (session_id,)).fetchone()[0]

    def end(self, session_id: str, at: float) -> None:
        """End the session at `at`, never earlier than an end already written nor than its start."""
        p = self.p
        latest = self.backend.greatest(f"COALESCE(ended_at, {p})", p, "started_at")
        self.db.execute_sql(f"UPDATE session SET ended_at = {latest} WHERE id = {p}", (at, at, session_id))

    def counts(self, session_ids: Sequence[str], counted: Sequence[Sequence[str]]) -> list[tuple]:
        """(session id, activities, then one count per group of kinds in `counted`, the latest
        activity's time) of each session that has any."""
        columns = ", ".join(
            self.backend.count_true(f"kind IN ({', '.join(repr(k) for k in kinds)})") for kinds in counted)
        marks = ", ".join([self.p] * len(session_ids))
        return self.db.execute_sql(
            f"SELECT session_id, COUNT(*), {columns}, MAX(at) FROM activity "
            f"WHERE session_id IN ({marks}) GROUP BY session_id", list(session_ids)).fetchall()

    def first_prompts(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Each session's first prompt, by session id (those with one)."""
        marks = ", ".join([self.p] * len(session_ids))
        return dict(self.db.execute_sql(
            f"SELECT a.session_id, a.summary FROM activity a WHERE a.session_id IN ({marks}) AND a.kind = 'prompt' "
            "AND a.seq = (SELECT MIN(b.seq) FROM activity b WHERE b.session_id = a.session_id AND b.kind = 'prompt')",
            list(session_ids)).fetchall())

    def starts(self, project_ids: Sequence[int]) -> list[tuple[int, float]]:
        """(project id, started_at) of every session of the projects."""
        if not project_ids:
            return []
        marks = ", ".join([self.p] * len(project_ids))
        return self.db.execute_sql(f"SELECT project_id, started_at FROM session WHERE project_id IN ({marks})",
                                   list(project_ids)).fetchall()

    def ids_starting(self, project_id: int, prefix: str, limit: int) -> list[str]:
        """The project's session ids starting with `prefix`, newest first."""
        p = self.p
        rows = self.db.execute_sql(
            f"SELECT id FROM session WHERE project_id = {p} AND substr(id, 1, {p}) = {p} "
            f"ORDER BY started_at DESC LIMIT {limit:d}", (project_id, len(prefix), prefix)).fetchall()
        return [r[0] for r in rows]
