"""What a terminal is shown of text memdeck did not write itself: the one function both front
ends (the command line and the workbench) pass every such field through.

Control characters (escape, bell, the C1 block with its 8-bit CSI) are spelled out as `\\x1b`,
and characters that act without being seen (bidi overrides such as U+202E, zero-width spaces and
joiners, invisible tag characters) as `\\u202e`, so a memory, a hat or a project name cannot
move the cursor, set the clipboard through OSC 52, recolour the terminal or reorder what a
person reads. Newlines and tabs are kept; `one_line` flattens them too. Nothing here imports
Textual or Rich: `memdeck prime` runs at every session start.
"""

from __future__ import annotations

import re

from store.api import INVISIBLE

_SHOWN_AS_ESCAPE = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{INVISIBLE}\\ud800-\\udfff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str | None) -> str:
    """`text` with every control and invisible character spelled out; newlines and tabs kept."""
    if not text:
        return ""
    return _SHOWN_AS_ESCAPE.sub(_escape, text)


def one_line(text: str | None, width: int | None = None) -> str:
    """`visible(text)` on one line (newlines and tabs as spaces), cut to `width` with an ellipsis."""
    flat = visible((text or "").replace("\r\n", " ").replace("\n", " ").replace("\t", " "))
    if width is None or len(flat) <= width:
        return flat
    return flat[: width - 1] + "…"
