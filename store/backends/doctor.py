"""`memdeck doctor`: the checks (and with `--fix` the safe repairs) of the store at a path or
URL, by its back-end: an SQLite file's in `store.backends.sqlite_doctor`, a server's in
`store.backends.postgres_doctor`. What a report holds: `store.engine.doctor_report`.
"""

from __future__ import annotations

from pathlib import Path

from store.backends.choice import backend_class
from store.engine.doctor_report import DoctorReport, Finding  # noqa: F401 (re-exported)


def check(path: Path | str) -> DoctorReport:
    """Every check, writing nothing. A location that is not a usable store raises `StoreError`."""
    return backend_class(path).doctor_check(path)


def repair(path: Path | str) -> DoctorReport:
    """Check, and if anything safe needs repair, repair it; then check again. The report holds the
    second check, the backup made first (SQLite) and the repairs."""
    return backend_class(path).doctor_repair(path)
