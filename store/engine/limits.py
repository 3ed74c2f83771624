"""The ranges memdeck accepts for values that come from outside: times, confidence, sizes,
text fields and project names. One place, so `add`, `edit`, every import path, the MCP server,
the filters and `doctor` agree.

Every text field has a length limit (`FIELD_LIMITS`, documented in docs/safety.md) and none may
hold a NUL character (PostgreSQL cannot store one, and no tool means one): both are refused
with a message naming the field, before anything is written.

A value outside its range is refused with a message that names it (`check_*`). Times within
the range but later than now (a clock ahead of ours) are brought back to now (`clamp_time`):
a use or an update cannot have happened in the future. A store that already holds a value out
of range (written by an older memdeck or another tool) is read through `sane_time` and
`sane_confidence`, so it still lists and exports; `doctor` reports it and `--fix` clamps it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime, timezone

from store.engine.errors import InvalidInput

# 1970-01-01 to 2100-01-01 UTC: wide enough for any memory, narrow enough that every date
# function (formatting, adding a day, a recency in days) works on it.
EARLIEST_TIME = 0.0
LATEST_TIME = datetime(2100, 1, 1, tzinfo=timezone.utc).timestamp()
# The longest memory text anywhere (`add`, `edit`, imports): the default of
# `interop.max_memory_chars`, so a store's own export always imports again.
MAX_CONTENT_CHARS = 200_000
MAX_PROJECT_NAME = 200
# The longest value of each other text field, in characters (a tag, a file ref: each of them),
# and the most tags or file refs one memory is given at once. Scope, hat and session id are
# the widths of PostgreSQL's columns, so a store of either back-end copies to the other.
FIELD_LIMITS = {"title": 1_000, "tags": 200, "file_refs": 1_000, "scope": 255, "hat": 64, "task": 2_000,
                "session_id": 255}
MAX_LIST_ITEMS = 200
# The largest count (a use count, a line number) read from outside: fits every integer column.
MAX_COUNT = 2**31 - 1


def _stamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")


TIME_RANGE = f"{_stamp(EARLIEST_TIME)} to {_stamp(LATEST_TIME)}"


def time_in_range(value: float) -> bool:
    return math.isfinite(value) and EARLIEST_TIME <= value <= LATEST_TIME


def check_time(value: float, where: str) -> float:
    """`value` (unix seconds) if it is a time memdeck can keep, else `InvalidInput`."""
    try:
        value = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"{where}: {value!r} is not a time") from None
    if not time_in_range(value):
        raise InvalidInput(f"{where}: {_shown(value)} is outside the dates memdeck keeps ({TIME_RANGE})")
    return value


def check_datetime(moment: datetime, where: str) -> float:
    """A parsed date-time as unix seconds, if in range (year 1 with an offset overflows)."""
    try:
        value = moment.timestamp()
    except (OverflowError, ValueError, OSError):
        raise InvalidInput(f"{where}: {moment.isoformat()[:40]} is outside the dates memdeck keeps "
                           f"({TIME_RANGE})") from None
    return check_time(value, where)


def clamp_time(value: float | None, now: float) -> float | None:
    """A time from outside, never later than now."""
    return None if value is None else min(value, now)


def sane_time(value: float | None) -> float | None:
    """A stored time brought into range for reading (a store written before the limits)."""
    if value is None:
        return None
    if not math.isfinite(value):
        return EARLIEST_TIME if value != value or value < 0 else LATEST_TIME
    return min(max(value, EARLIEST_TIME), LATEST_TIME)


def sane_confidence(value: float) -> float:
    if value is None or value != value:
        return 0.0
    return min(max(value, 0.0), 1.0)


def check_confidence(value, where: str = "confidence") -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{where} must be a number from 0 to 1, got {value!r}") from None
    if not 0.0 <= number <= 1.0:  # also refuses nan
        raise InvalidInput(f"{where} must be from 0 to 1, got {value}")
    return number


def check_content(text: str, limit: int = MAX_CONTENT_CHARS, where: str = "a memory") -> str:
    if len(text) > limit:
        raise InvalidInput(f"{where} is {len(text)} characters long, over the limit of {limit} "
                           "(setting interop.max_memory_chars)")
    return text


def check_no_nul(text: str, where: str) -> str:
    if "\x00" in text:
        raise InvalidInput(f"{where} holds a NUL character (\\x00), which memdeck does not store; "
                           "nothing was changed")
    return text


def check_field(name: str, value, where: str | None = None):
    """A text field's value (a string, or a list of them for tags and file refs) if within its
    limit and without NUL, else `InvalidInput` naming it. `content` has its own limit (a
    setting: `check_content`) and is checked for NUL only."""
    if value is None:
        return value
    where = where or name
    if isinstance(value, str):
        check_no_nul(value, where)
        limit = FIELD_LIMITS.get(name)
        if limit is not None and len(value) > limit:
            raise InvalidInput(f"{where} is {len(value)} characters long, over the limit of {limit}")
        return value
    items = list(value)
    if len(items) > MAX_LIST_ITEMS:
        raise InvalidInput(f"{where}: {len(items)} of them, over the limit of {MAX_LIST_ITEMS}")
    for item in items:
        if isinstance(item, str):
            check_field(name, item, f"a value of {where}")
    return value


def fit_field(name: str, value: str | None) -> str | None:
    """A field taken from a transcript, cut to its limit instead of refused: a stranger's long
    scope must not stop the rest of the session from being ingested."""
    limit = FIELD_LIMITS[name]
    return value[:limit].strip() or None if value is not None and len(value) > limit else value


def fit_list(name: str, values) -> tuple[str, ...]:
    """Tags or file refs from a transcript: those over the limit dropped (half a path is no
    path), at most `MAX_LIST_ITEMS`."""
    return tuple(v for v in values if len(v) <= FIELD_LIMITS[name])[:MAX_LIST_ITEMS]


def check_fields(fields: dict, where: str = "") -> None:
    """`check_field` of every text field in `fields` (a memory's, by field name)."""
    for name in ("content", *FIELD_LIMITS):
        if name in fields:
            check_field(name, fields[name], f"{where}{name}")


def nul_in(value) -> bool:
    """Whether parsed data (text, and lists and mappings of it) holds a NUL anywhere."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, (list, tuple)):
        return any(map(nul_in, value))
    if isinstance(value, dict):
        return any(nul_in(k) or nul_in(v) for k, v in value.items())
    return False


# -- project names ---------------------------------------------------------------------------

_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a project's name, or None if it can."""
    if not name or not name.strip():
        return "a project name cannot be blank"
    if len(name) > MAX_PROJECT_NAME:
        return f"a project name is at most {MAX_PROJECT_NAME} characters, this one has {len(name)}"
    if name != name.strip():
        return "a project name cannot start or end with spaces"
    for char in name:
        if not char.isprintable() or _INVISIBLE.match(char) or unicodedata.category(char) in ("Cs", "Co"):
            return f"a project name holds only printable characters, not {char!r}"
    return None


def check_project_name(name: str, where: str = "project") -> str:
    problem = name_problem(name)
    if problem:
        raise InvalidInput(f"{where}: {_shown(name)}: {problem}")
    return name


def safe_project_name(name: str, fallback: str = "default") -> str:
    """A name derived automatically (from a directory) made acceptable instead of refused, so a
    hook never fails on it: undecodable bytes, control and invisible characters become `_`,
    surrounding blanks go, and it is cut to the longest name allowed."""
    cleaned = "".join(
        "_" if (not c.isprintable() or _INVISIBLE.match(c) or unicodedata.category(c) in ("Cs", "Co")) else c
        for c in name
    ).strip()[:MAX_PROJECT_NAME].strip()
    return cleaned or fallback


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…'"
