"""The real `memdeck` command, for tests that run it in a subprocess (`run_cli` in
`tests/conftest.py` runs it on the test's store)."""

from __future__ import annotations

import sys
from pathlib import Path


def memdeck_command() -> list[str]:
    """The argv that starts `memdeck`: the installed script beside this Python, else the module."""
    script = Path(sys.executable).parent / "memdeck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui.cli.main"]
