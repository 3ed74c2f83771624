"""Where the tests' data lives, and the moment they read it at.

`DATA` holds the project's own small fixtures, so every core behaviour is tested in a clone that
stands alone; `SHARED` (`../shared`, beside the clone) holds the real sample data. A test on the
real data carries `needs_shared` and skips without it; in CI a missing `../shared` fails the run
instead (`tests/conftest.py`)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]  # the repository
SHARED = ROOT.parent / "shared"
FIXTURES = SHARED / "fixtures"
DATA = Path(__file__).resolve().parent / "data"
SHARED_MISSING = "needs the real sample data in ../shared, which is not beside this clone"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=SHARED_MISSING)
# A fixed moment for every test that needs "now": 2026-03-01 12:00 UTC.
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc).timestamp()


def worked_on(store, start: float, days: int, *, project: str | None = None) -> None:
    """A session of the store's project (or `project`) started on each of `days` days from
    `start`: decay counts only the days a project was worked on (`decay.clock: sessions`)."""
    for day in range(days):
        at = start + day * 86400
        store.sessions.ensure(f"worked-{project or 'here'}-{int(at)}", project=project, started_at=at)
