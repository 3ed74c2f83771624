"""The JSON Claude Code sends a hook on stdin, read so that no stdin can hold the agent up: at
most `MAX_BYTES`, for at most `DEADLINE_S` seconds, and done as soon as one whole JSON object has
arrived (a writer that never closes the pipe does not matter). `/dev/zero`, a stream that never
ends, a stdin left open and silent, bytes that are not UTF-8 and text that is not one JSON object
are each refused with a `HookInputError` saying which; a terminal on stdin is no input at all.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import Any

from store.api import MemdeckError, whole_characters

MAX_BYTES = 1 << 20  # a hook's JSON is a few hundred bytes; Claude Code's largest are a few KiB
DEADLINE_S = 5.0  # Claude Code writes its JSON at once; this only ends a wait that would not
_CHUNK = 65536


class HookInputError(MemdeckError):
    """The hook's stdin is not the JSON object Claude Code sends: the hook has nothing to do, and
    says so in one line with exit 0 (never block the agent; docs/safety.md)."""

    exit_code = 0


def read_payload(fd: int | None = None, *, max_bytes: int = MAX_BYTES, deadline_s: float = DEADLINE_S) -> dict[str, Any]:
    """The hook's JSON object; {} when stdin is a terminal, closed, or empty."""
    if fd is None:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, ValueError, OSError):
            return {}
    if os.isatty(fd):
        return {}
    raw = _read_capped(fd, max_bytes, deadline_s)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HookInputError(f"the hook input is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        return {}
    try:
        payload = whole_characters(json.loads(text))
    except ValueError as exc:
        raise HookInputError(f"the hook input is not JSON ({getattr(exc, 'msg', exc)})") from None
    except RecursionError:
        raise HookInputError("the hook input is nested too deeply to be Claude Code's") from None
    if not isinstance(payload, dict):
        raise HookInputError(f"the hook input is a JSON {type(payload).__name__}, not an object")
    return payload


def _read_capped(fd: int, max_bytes: int, deadline_s: float) -> bytes:
    data = bytearray()
    ends = time.monotonic() + deadline_s
    while True:
        left = ends - time.monotonic()
        if left <= 0:
            if _whole_json(data):
                return bytes(data)
            raise HookInputError(f"the hook input did not end within {deadline_s:g} s "
                                 f"({len(data)} bytes read, no whole JSON object)")
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):
            ready = [fd]  # a file select cannot watch is read directly
        if not ready:
            continue
        try:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - len(data)))
        except OSError as exc:
            raise HookInputError(f"the hook input could not be read: {exc.strerror}") from None
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > max_bytes:
            raise HookInputError(f"the hook input is larger than {max_bytes >> 10} KiB; "
                                 "Claude Code's is a few hundred bytes")
        if chunk.rstrip().endswith(b"}") and _whole_json(data):
            return bytes(data)


def _whole_json(data: bytes) -> bool:
    """One whole JSON object, nothing after it but blanks: what Claude Code writes."""
    try:
        text = data.decode("utf-8")
        _, end = json.JSONDecoder().raw_decode(text.lstrip())
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return not text.lstrip()[end:].strip()
