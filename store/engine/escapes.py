"""Exports as text that is safe to print: JSON and YAML both have escapes, so the characters a
terminal would act on (C1 controls, DEL) or that reorder and hide text (bidi overrides,
zero-width and invisible tag characters, `redaction.INVISIBLE`) are written as `\\u202e`-style
escapes. The data read back is the same; `cat memories.json` can no longer set a clipboard or
turn a line around. (C0 controls and ESC are escaped by both formats already.)"""

from __future__ import annotations

import re

from store.engine.redaction import INVISIBLE

ACTING = re.compile(f"[\\x7f-\\x9f{INVISIBLE}\\ud800-\\udfff]")


def _json_escape(match: re.Match) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells a character beyond the BMP as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_safe(text: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`) with the acting characters escaped."""
    return ACTING.sub(_json_escape, text)


def _yaml_escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def yaml_safe(text: str) -> str:
    """YAML text whose scalars holding an acting character were written double-quoted (the only
    YAML style with escapes), with those characters escaped."""
    return ACTING.sub(_yaml_escape, text)


def needs_quoting(value: str) -> bool:
    return ACTING.search(value) is not None
