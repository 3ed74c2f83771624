"""Counts that describe a project's memories, for `memdeck stats` and the UI's header (read by
the back-end: `store.backends.browse_rows.project_figures`)."""

from __future__ import annotations

from typing import Any

from store.backends import browse_rows
from store.engine.core import Store


def project_stats(store: Store, project: str | None = None) -> dict[str, Any]:
    figures = browse_rows.project_figures(store.backend, store.project_id(project))
    by_status = figures["by_status"]
    return {
        "project": project or store.project,
        "total": sum(by_status.values()),
        "by_status": by_status,
        "by_type": figures["by_type"],
        "by_hat": figures["by_hat"],
        "by_source": figures["by_source"],
        "mean_confidence": round(figures["mean_confidence"] or 0.0, 4),
        "protected": figures["protected"],
        "events": figures["events"],
        "sessions": figures["sessions"],
    }
