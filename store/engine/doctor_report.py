"""What `memdeck doctor` reports, on either back-end: findings and the report. The checks are the
back-ends' (`store.backends.doctor_checks` those the same on both, `store.backends.sqlite_doctor`,
`store.backends.postgres_doctor`); `store.backends.doctor` picks one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One check's result. `fixable`: `--fix` can repair it without losing a memory."""

    check: str
    ok: bool
    message: str
    fixable: bool = False
    count: int = 0
    note: bool = False  # sound, but not fully usable: read-only, or on a full disk

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "ok": self.ok, "message": self.message,
                "fixable": self.fixable, "count": self.count, "note": self.note}


@dataclass
class DoctorReport:
    path: Path
    findings: list[Finding] = field(default_factory=list)
    backup: Path | None = None
    repairs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def damaged(self) -> bool:
        """Damage doctor cannot repair: pages SQLite itself finds broken."""
        return any(not f.ok and not f.fixable for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "ok": self.ok, "findings": [f.to_json() for f in self.findings],
                "backup": str(self.backup) if self.backup else None, "repairs": self.repairs}
