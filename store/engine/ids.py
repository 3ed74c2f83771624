"""Memory ids: `mem-<unix seconds>-<4 hex>`, as Ralph (seed 002) and Nova26 (seed 003) write them.
They sort by creation time and are short enough to type."""

from __future__ import annotations

import re
import itertools
import secrets
from typing import Callable

MEMORY_ID = re.compile(r"^mem-\d{9,12}-[0-9a-f]{4}$")


def new_memory_id(now: float) -> str:
    return f"mem-{int(now)}-{secrets.token_hex(2)}"


def counted_memory_ids() -> Callable[[float], str]:
    """Ids drawn in order (`mem-SECOND-0000`, `-0001`, …) instead of at random: for a store whose
    runs must repeat exactly (a replay, whose frozen clock gives many memories one second, and
    whose rankings break ties by id)."""
    counter = itertools.count()
    return lambda now: f"mem-{int(now)}-{next(counter) % 0x10000:04x}"


def is_memory_id(text: str) -> bool:
    return bool(MEMORY_ID.match(text))
