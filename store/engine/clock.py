"""Time, injectable. Lifecycle rules take a `Clock` so tests can travel in time."""

from __future__ import annotations

import time
from datetime import datetime, timezone


class Clock:
    """The real clock: seconds since the epoch, UTC."""

    def now(self) -> float:
        return time.time()


class FrozenClock(Clock):
    """A clock that stands still until a test moves it."""

    def __init__(self, at: float | datetime) -> None:
        self.at = at.timestamp() if isinstance(at, datetime) else float(at)

    def now(self) -> float:
        return self.at

    def advance(self, *, days: float = 0, seconds: float = 0) -> None:
        self.at += days * 86400 + seconds


DAY = 86400.0


def to_datetime(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, tz=timezone.utc)


def iso(ts: float | None) -> str | None:
    """An ISO 8601 UTC time with seconds, the way memdeck prints and exports times."""
    if ts is None:
        return None
    from store.engine.limits import sane_time  # a stored time out of range still prints

    return datetime.fromtimestamp(sane_time(ts), tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_time(text: str, now: float) -> float:
    """A time the user typed: an ISO date or date-time (UTC unless it says otherwise), unix
    seconds, or an age such as `90m`, `36h`, `7d`, `2w` before `now`."""
    from store.engine.errors import InvalidInput

    value = text.strip()
    units = {"s": 1, "m": 60, "h": 3600, "d": DAY, "w": 7 * DAY}
    from store.engine.limits import check_datetime, check_time

    where = f"time {text!r}"
    if len(value) > 1 and value[-1] in units and value[:-1].replace(".", "", 1).isdigit():
        return check_time(now - float(value[:-1]) * units[value[-1]], where)
    try:
        number = float(value)
    except ValueError:
        pass
    else:
        return check_time(number, where)  # nan, inf and 1e300 are refused, not matched against
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"cannot read time {text!r}: use a date (2026-03-01), a date-time, or an age (7d, 36h)"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return check_datetime(parsed, where)
