"""Counts that describe a project's memories, for `memdeck stats` and the UI's header."""

from __future__ import annotations

from typing import Any

from store.engine.core import Store


def project_stats(store: Store, project: str | None = None) -> dict[str, Any]:
    p = store.backend.param
    pid = store.project_id(project)
    db = store.db

    def grouped(column: str, where: str = "status != 'deleted'") -> dict[str, int]:
        rows = db.execute_sql(
            f"SELECT COALESCE({column}, '-'), COUNT(*) FROM memory WHERE project_id = {p} AND {where} "
            f"GROUP BY 1 ORDER BY 2 DESC, 1", (pid,))
        return {k: v for k, v in rows}

    by_status = grouped("status", store.backend.true)
    mean = db.execute_sql(f"SELECT AVG(confidence) FROM memory WHERE project_id = {p} AND status = 'active'",
                          (pid,)).fetchone()[0]
    return {
        "project": project or store.project,
        "total": sum(by_status.values()),
        "by_status": by_status,
        "by_type": grouped("type"),
        "by_hat": grouped("hat"),
        "by_source": grouped("source"),
        "mean_confidence": round(mean or 0.0, 4),
        "protected": db.execute_sql(f"SELECT COUNT(*) FROM memory WHERE project_id = {p} AND protected = 1",
                                    (pid,)).fetchone()[0],
        "events": db.execute_sql("SELECT COUNT(*) FROM event JOIN memory ON memory.id = event.memory_id "
                                 f"WHERE memory.project_id = {p}", (pid,)).fetchone()[0],
        "sessions": db.execute_sql(f"SELECT COUNT(*) FROM session WHERE project_id = {p}", (pid,)).fetchone()[0],
    }
