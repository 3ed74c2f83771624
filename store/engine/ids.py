"""Memory ids: `mem-<unix seconds>-<4 hex>`, as Ralph (seed 002) and Nova26 (seed 003) write them.
They sort by creation time and are short enough to type."""

from __future__ import annotations

import re
import secrets

MEMORY_ID = re.compile(r"^mem-\d{9,12}-[0-9a-f]{4}$")


def new_memory_id(now: float) -> str:
    return f"mem-{int(now)}-{secrets.token_hex(2)}"


def is_memory_id(text: str) -> bool:
    return bool(MEMORY_ID.match(text))
