"""Real git repositories made in a test: files written, committed, moved and edited with git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           # Fixed dates: the same files make the same commit ids, for snapshots.
           "GIT_AUTHOR_DATE": "2026-02-20T10:00:00Z", "GIT_COMMITTER_DATE": "2026-02-20T10:00:00Z"}

REFUND = """\
def refund(order):
    # Refunds exclude the payment provider's fees.
    amount = order.total - order.fees
    if amount <= 0:
        return None
    return issue(order.customer, amount)


def issue(customer, amount):
    return {"customer": customer, "amount": amount}
"""


class Repo:
    def __init__(self, root: Path, *, init: bool = True) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        if init:
            self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.root), *args], check=True, capture_output=True, text=True,
                              env={**os.environ, **GIT_ENV}).stdout

    def write(self, path: str, text: str) -> Path:
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)
        return full

    def read(self, path: str) -> str:
        return (self.root / path).read_text()

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def insert_lines(self, path: str, at: int, lines: list[str]) -> None:
        """Put `lines` before line `at` (1-based)."""
        current = self.read(path).split("\n")
        self.write(path, "\n".join(current[:at - 1] + lines + current[at - 1:]))

    def move(self, old: str, new: str) -> None:
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", old, new)

    def replace(self, path: str, old: str, new: str) -> None:
        text = self.read(path)
        assert old in text
        self.write(path, text.replace(old, new))
