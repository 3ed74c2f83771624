"""The JSON Claude Code sends a hook on stdin, read so that no stdin can hold the agent up: at
most `MAX_BYTES`, for at most `DEADLINE_S` seconds, and done as soon as one whole JSON object has
arrived (a writer that never closes the pipe does not matter). `/dev/zero`, a stream that never
ends, a stdin left open and silent, bytes that are not UTF-8 and text that is not one JSON object
are each refused with a `HookInputError` saying which; a terminal on stdin is no input at all.
"""

from __future__ import annotations

import json
from typing import Any

from store.api import MemdeckError, whole_characters
from tui.cli import hook_wire
from tui.cli.hook_wire import DEADLINE_S, MAX_BYTES  # noqa: F401 (the limits, read in the warm path)


class HookInputError(MemdeckError):
    """The hook's stdin is not the JSON object Claude Code sends: the hook has nothing to do, and
    says so in one line with exit 0 (never block the agent; docs/safety.md)."""

    exit_code = 0


def read_payload(fd: int | None = None, *, max_bytes: int = MAX_BYTES, deadline_s: float = DEADLINE_S) -> dict[str, Any]:
    """The hook's JSON object; {} when stdin is a terminal, closed, or empty. The stdin the warm
    path already read (`hook_wire.give`) is read in place of this process's own."""
    given = hook_wire.take() if fd is None else None
    if given is not None:
        if given.problem is not None:
            raise HookInputError(given.problem)
        raw = given.data
    else:
        try:
            raw = hook_wire.read_stdin(fd, max_bytes=max_bytes, deadline_s=deadline_s)
        except hook_wire.StdinProblem as exc:
            raise HookInputError(str(exc)) from None
    if raw is None:
        return {}
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
