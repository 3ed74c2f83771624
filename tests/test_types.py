"""mypy reads `store/` and finds no attribute used that its object does not have: the Store's
parts are collaborators it holds (`store.sessions`, `store.trash`, `store.relations`), and the
ingest pipeline's (`Writer`, `ActivityLog`), rather than mixins that borrow attributes the type
checker cannot see. Other kinds of finding are not held
against the code yet (Peewee has no types, and many are about them)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

@pytest.mark.slow
def test_mypy_finds_no_missing_attribute_in_the_store(tmp_path):
    pytest.importorskip("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "store", "--ignore-missing-imports", "--cache-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert re.search(r"^(Found \d+ errors? in|Success:)", result.stdout, re.M), result.stdout + result.stderr
    findings = [line for line in result.stdout.splitlines() if line.endswith("[attr-defined]")]
    assert not findings, "attributes mypy cannot find:\n" + "\n".join(findings)
