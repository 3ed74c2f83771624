"""The workbench's first paint, as a person sees it: the whole `memdeck` process started in a
tmux pane, timed until the pane shows what `ready` looks for. Used by bench_ui.py and
bench_scale.py."""

from __future__ import annotations

import subprocess
import time
from contextlib import contextmanager
from typing import Callable, Iterator


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


@contextmanager
def first_paint(session: str, command: str, size: tuple[int, int], ready: Callable[[str], bool],
                timeout: float = 60) -> Iterator[tuple[float, str]]:
    """Start `command` in a new tmux session of `size`; yield (seconds until the pane showed a
    screen `ready` accepts, the pane's pid) while the session is still open; kill it after."""
    started = time.perf_counter()
    tmux("new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]), command)
    try:
        pid = tmux("list-panes", "-t", session, "-F", "#{pane_pid}").strip()
        while True:
            screen = tmux("capture-pane", "-p", "-t", session)
            if ready(screen):
                painted = time.perf_counter() - started
                break
            if time.perf_counter() - started > timeout:
                raise RuntimeError(f"no first paint within {timeout:.0f} s:\n" + screen)
            time.sleep(0.005)
        yield painted, pid
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
