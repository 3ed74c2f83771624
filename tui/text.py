"""How the workbench turns memory fields into screen text. Memory text is data: it becomes
`rich.text.Text` (never parsed as markup) with control and invisible characters spelled out by
`tui.visible` (the command line's function too), so a memory cannot recolour or move the
terminal, or reorder what is read."""

from __future__ import annotations

from datetime import datetime, timezone

from rich.text import Text

from tui.visible import one_line, visible

__all__ = ["age", "bar", "one_line", "plain", "stamp", "visible"]

EIGHTHS = " ▏▎▍▌▋▊▉█"


def plain(text: str | None, style: str = "") -> Text:
    """Memory text as a `Text`, never as markup."""
    return Text(one_line(text), style=style, no_wrap=True, overflow="ellipsis")


def bar(value: float, width: int = 4) -> str:
    """A confidence as a bar of `width` cells, in eighths, so a column of them reads as a shape."""
    eighths = round(max(0.0, min(1.0, value)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (EIGHTHS[part] if part else "")).ljust(width)


def age(ts: float | None, now: float) -> str:
    """How long ago, in the fewest characters: `now`, `5m`, `3h`, `12d`, `4mo`, `2y`."""
    if ts is None:
        return "-"
    seconds = max(0.0, now - ts)
    for limit, unit, size in ((60, "now", 1), (3600, "m", 60), (86400, "h", 3600),
                              (86400 * 60, "d", 86400), (86400 * 730, "mo", 86400 * 30)):
        if seconds < limit:
            return "now" if unit == "now" else f"{int(seconds // size)}{unit}"
    return f"{int(seconds // (86400 * 365))}y"


def stamp(ts: float | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime(fmt)
