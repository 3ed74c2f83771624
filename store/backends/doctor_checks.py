"""The checks of `memdeck doctor` whose SQL is the same on both back-ends: rows that lost their
parent, rows whose project is gone, values out of range, and their repairs. The back-ends run
them (`store.backends.sqlite_doctor`, `store.backends.postgres_doctor`)."""

from __future__ import annotations

import time
from typing import Callable

from store.engine.limits import EARLIEST_TIME

NOW = "now"  # in `RANGED_COLUMNS`: the highest value is now

# Rows whose parent is gone, as (name, what they are, the query counting them, the repair).
# Foreign keys with ON DELETE CASCADE keep these at zero while memdeck writes with
# `foreign_keys` on; another tool writing the file without it can leave them behind.
ORPHANS: tuple[tuple[str, str, str, str], ...] = (
    ("events", "events of a memory that no longer exists",
     "SELECT COUNT(*) FROM event WHERE memory_id NOT IN (SELECT id FROM memory)",
     "DELETE FROM event WHERE memory_id NOT IN (SELECT id FROM memory)"),
    ("activities", "activities of a session that no longer exists",
     "SELECT COUNT(*) FROM activity WHERE session_id NOT IN (SELECT id FROM session)",
     "DELETE FROM activity WHERE session_id NOT IN (SELECT id FROM session)"),
    ("anchors", "anchors of a memory that no longer exists",
     "SELECT COUNT(*) FROM anchor WHERE memory_id NOT IN (SELECT id FROM memory)",
     "DELETE FROM anchor WHERE memory_id NOT IN (SELECT id FROM memory)"),
)
# Rows that point at a missing project: they are kept, under a project made for them.
HOMELESS = (
    ("memories", "SELECT DISTINCT project_id FROM memory WHERE project_id NOT IN (SELECT id FROM project)",
     "SELECT COUNT(*) FROM memory WHERE project_id NOT IN (SELECT id FROM project)"),
    ("sessions", "SELECT DISTINCT project_id FROM session WHERE project_id NOT IN (SELECT id FROM project)",
     "SELECT COUNT(*) FROM session WHERE project_id NOT IN (SELECT id FROM project)"),
)
INTEGRITY_LINES = 20  # how many of integrity_check's messages are reported
# Memory columns that must lie in a range, and the range: confidence in 0..1; times from 1970
# to now (nothing was created, changed or used in the future). `NOW` is now, bound at the check.
RANGED_COLUMNS = (
    ("confidence", "0", "1"),
    ("created_at", str(EARLIEST_TIME), NOW),
    ("updated_at", str(EARLIEST_TIME), NOW),
    ("last_used_at", str(EARLIEST_TIME), NOW),
    ("verified_at", str(EARLIEST_TIME), NOW),
    ("decayed_at", str(EARLIEST_TIME), NOW),
    ("status_changed_at", str(EARLIEST_TIME), NOW),
)


def _out_of_range(column: str, low: str, high: str) -> str:
    return f"({column} IS NOT NULL AND ({column} < {low} OR {column} > {high}))"


def out_of_range_sql(param: str) -> str:
    """The condition that a memory holds a value out of range; each mark is now (`now_args`)."""
    return " OR ".join(_out_of_range(c, low, param if high == NOW else high) for c, low, high in RANGED_COLUMNS)


def clamp_sql(p: str, greatest: Callable[..., str], least: Callable[..., str]) -> str:
    """The repair of `out_of_range_sql`: every value into its range (a back-end's parameter mark,
    GREATEST and LEAST)."""
    return ("UPDATE memory SET " + ", ".join(
        f"{column} = CASE WHEN {column} IS NULL THEN NULL ELSE "
        f"{least(greatest(column, low), p if high == NOW else high)} END"
        for column, low, high in RANGED_COLUMNS) + f", version = version + 1 WHERE {out_of_range_sql(p)}")


def now_args(sql: str, param: str) -> tuple[float, ...]:
    """Now, for each parameter of `sql`."""
    return (time.time(),) * sql.count(param)
