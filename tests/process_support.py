"""Real processes started together, for the concurrency tests: a ready-file barrier, no sleeps.

Each child does its slow start first (imports, opening the store), then says it is ready by
creating its ready file and waits for the go file. The test waits until every ready file exists,
failing at once if a child died first, and only then creates the go file: every child starts its
work together, however long the imports took on this machine, this time.

    gate = StartGate(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", CHILD_GATE + WORKER, str(gate.ready_file()), str(gate.go)])
             for _ in range(4)]
    gate.open(procs)  # WORKER calls `at_the_gate(ready, go)` once it has opened the store
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Sequence

# The child's half, to put in front of a `python -c` script: `at_the_gate(ready, go)`, called
# once the slow start is done.
CHILD_GATE = r'''
def at_the_gate(ready, go):
    """Say this process is ready, then wait until the test says go."""
    import os, time
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.001)
'''

# Longer than any start, on the slowest machine; only a child stuck before its gate meets it.
READY_TIMEOUT = 300.0


class StartGate:
    """The test's half: hands out ready files, and opens the gate once all of them exist."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "start-gate"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.go = self.folder / "go"
        self.go.unlink(missing_ok=True)
        self.readies: list[Path] = []

    def ready_file(self) -> Path:
        """A new child's ready file (one per child)."""
        ready = self.folder / f"ready-{len(self.readies)}"
        ready.unlink(missing_ok=True)
        self.readies.append(ready)
        return ready

    def wait_until_ready(self, processes: Sequence[subprocess.Popen], timeout: float = READY_TIMEOUT) -> None:
        """Return once every child has said it is ready; fail with the output of a child that
        exited before."""
        deadline = time.monotonic() + timeout
        while not all(ready.exists() for ready in self.readies):
            ended = [p for p in processes if p.poll() is not None]
            assert not ended, "a process exited before its start gate: " + "\n".join(
                f"exit {p.returncode}: {p.communicate()[1]}" for p in ended)
            assert time.monotonic() < deadline, \
                f"{sum(not r.exists() for r in self.readies)} of {len(self.readies)} processes never became ready"
            time.sleep(0.01)

    def open(self, processes: Sequence[subprocess.Popen], timeout: float = READY_TIMEOUT) -> None:
        """Wait until every child is ready, then let them all go at once."""
        self.wait_until_ready(processes, timeout)
        self.go.touch()
