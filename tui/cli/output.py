"""How the command line prints: data on stdout (plain text, or JSON with `--json`),
diagnostics on stderr. Memory text is printed as text; control characters are made visible so
a memory cannot move the cursor or recolour the terminal."""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Iterable, Sequence

from store.clock import iso

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: str | None) -> str:
    """Control characters shown as `\\x1b`-style escapes, so they are displayed, not obeyed."""
    if not text:
        return ""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def one_line(text: str | None, width: int) -> str:
    flat = safe((text or "").replace("\n", " ").replace("\t", " "))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def info(message: str) -> None:
    print(message, file=sys.stderr)


def table(rows: Iterable[Sequence[str]], headers: Sequence[str]) -> None:
    rows = [list(map(str, r)) for r in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    print(line.rstrip())
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def date(ts: float | None) -> str:
    return (iso(ts) or "-")[:10]


def memory_rows(memories) -> list[list[str]]:
    return [
        [m.id, m.type, f"{m.confidence:.2f}", m.status, m.hat or "-", one_line(m.title, 60)]
        for m in memories
    ]


MEMORY_HEADERS = ("id", "type", "conf", "status", "hat", "title")
