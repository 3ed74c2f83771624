"""The only way the command line writes: data on stdout (plain text, JSON with `--json`, or an
export's file content), diagnostics on stderr.

Every line of text goes through `tui.visible.visible`, so a field from outside (a memory's text,
a hat, a project name, a session id) is shown, never obeyed by the terminal. JSON escapes the
same characters as `\\uXXXX`, which keeps the data exact. An export written to stdout is a file's
content: it goes out as it is into a pipe or a file, and made visible only on a terminal.

A failed write to stdout (a reader that went away, a full disk) becomes `OutputError`: one line
on stderr and exit 1, never a traceback. `tests/tui/cli/test_output.py` checks that no other module of
the command line writes to stdout or stderr.
"""

from __future__ import annotations

import io
import json
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Sequence

from store.api import hide_passwords, iso, MemdeckError, json_safe
from tui.visible import one_line, visible

__all__ = ["MEMORY_HEADERS", "Captured", "ClosedPipe", "OutputError", "captured", "date", "flush", "flush_streams", "info",
           "memory_rows", "one_line", "out", "parser_message", "print_json", "print_json_line", "stdout_bytes", "table",
           "visible", "write_data"]


class OutputError(MemdeckError):
    """stdout could not be written: the reader went away, or the device is full."""

    exit_code = 1


class ClosedPipe(OutputError):
    """The reader of stdout went away (`memdeck list | head`): normal in a pipe, so the command
    ends quietly with exit 0, as Unix tools do."""

    exit_code = 0


def _write(stream, text: str) -> None:
    try:
        stream.write(text)
    except OSError as exc:
        raise _output_error(exc) from None


def _output_error(exc: OSError) -> OutputError:
    silence_stdout()
    if isinstance(exc, BrokenPipeError):
        return ClosedPipe("stdout was closed before all the output was written (broken pipe)")
    return OutputError(f"cannot write to stdout: {exc.strerror or exc}")


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not fail again on the way out."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def out(text: str = "", *, end: str = "\n") -> None:
    """A line of data on stdout, made visible."""
    _write(sys.stdout, visible(text) + end)


def info(message: str) -> None:
    """A diagnostic line on stderr, made visible, any database password in it hidden. A
    stderr that cannot be written is let be."""
    try:
        sys.stderr.write(visible(hide_passwords(message)) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def progress(message: str, *, done: bool) -> None:
    """A progress line on stderr: redrawn in place on a terminal (the last one ends the line),
    else written only when `done`, so a log gets one line, not hundreds."""
    try:
        if sys.stderr.isatty():
            sys.stderr.write("\r" + visible(message) + ("\n" if done else ""))
            sys.stderr.flush()
        elif done:
            info(message)
    except (OSError, ValueError):
        pass


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal (a table may take its width; a pipe has none)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (a progress bar is redrawn there; a log gets lines)."""
    try:
        return sys.stderr.isatty()
    except (OSError, ValueError):
        return False


def parser_message(message: str, file) -> None:
    """argparse's usage, help and errors, which quote back what was typed."""
    if message:
        (info if file is sys.stderr else out)(message.rstrip("\n"))


def print_json(data: Any) -> None:
    """`data` as JSON whose every character is safe on a terminal, and means the same."""
    _write(sys.stdout, json_safe(json.dumps(data, ensure_ascii=False, indent=2)) + "\n")


def print_json_line(data: Any) -> None:
    """`data` as one line of JSON (a stream of records, as `log --follow --json` prints), safe on
    a terminal, flushed at once so a reader sees it as it happens."""
    _write(sys.stdout, json_safe(json.dumps(data, ensure_ascii=False)) + "\n")
    flush()


def write_data(text: str) -> None:
    """A file's content on stdout (an export, the skill): exact into a pipe or a file, made
    visible on a terminal, where a memory's escape sequence would otherwise be obeyed."""
    _write(sys.stdout, visible(text) if sys.stdout.isatty() else text)


def stdout_bytes():
    """The binary stdout, for `ingest --tee`, which copies its input through byte for byte."""
    return sys.stdout.buffer


def flush() -> None:
    """Flush stdout now, inside the command, so a failure is reported like any other."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        raise _output_error(exc) from None
    except ValueError:
        pass  # already closed


def flush_streams() -> None:
    """Flush stdout and stderr before a process leaves without Python's own exit (`os._exit`)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


class _Buffer(io.BytesIO):
    """A captured stream's bytes; a terminal or not, as the stream it stands for."""

    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


class Captured:
    """What a block wrote on stdout and on stderr, as bytes (set when the block ends)."""

    stdout: bytes = b""
    stderr: bytes = b""


@contextmanager
def captured(stdout: tuple[str, str, bool], stderr: tuple[str, str, bool]) -> Iterator[Captured]:
    """stdout and stderr written into buffers while the block runs, each with the (encoding, error
    handler, is a terminal) of the process it stands for: the hook server runs a hook for a hook
    process, and the bytes are what that process would have written."""
    result = Captured()
    saved = sys.stdout, sys.stderr
    buffers = _Buffer(stdout[2]), _Buffer(stderr[2])
    wrappers = (io.TextIOWrapper(buffers[0], encoding=stdout[0], errors=stdout[1], newline="\n"),
                io.TextIOWrapper(buffers[1], encoding=stderr[0], errors=stderr[1], newline="\n", line_buffering=True))
    sys.stdout, sys.stderr = wrappers
    try:
        yield result
    finally:
        sys.stdout, sys.stderr = saved
        for wrapper in wrappers:
            try:
                wrapper.flush()
            except (OSError, ValueError, UnicodeError):
                pass
        result.stdout, result.stderr = (buffer.getvalue() for buffer in buffers)


def table(rows: Iterable[Sequence[Any]], headers: Sequence[str]) -> None:
    """Columns padded to their widest cell; every cell on one line and made visible."""
    rows = [[one_line(str(c)) for c in r] for r in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    out("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
    for row in rows:
        out("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def date(ts: float | None) -> str:
    return (iso(ts) or "-")[:10]


def memory_rows(memories) -> list[list[str]]:
    return [
        [m.id, m.type, f"{m.confidence:.2f}", m.status, m.hat or "-", one_line(m.title, 60)]
        for m in memories
    ]


MEMORY_HEADERS = ("id", "type", "conf", "status", "hat", "title")
