"""Running `memdeck` in a test: in this process through `main(argv)` (`run_in_process`, what the
`run_cli` fixture of `tests/conftest.py` does), or as a real process (`run_process`, the
`run_cli_process` fixture, `memdeck_command`) for the tests where the process is the point:
hooks as Claude Code runs them, the MCP server on stdio, signals, processes racing each other,
what a process imports, a closed pipe. Both return a `subprocess.CompletedProcess`
(`returncode`, `stdout`, `stderr`: text, or bytes when the input is bytes).

In-process, a call sees what a process would: its environment in `os.environ`, its cwd, its
stdin (a pipe carrying `input`, else /dev/null, as under pytest-xdist), stdout and stderr
captured as bytes and decoded as `subprocess.run(text=True)` does, the exit code (a
`SystemExit` included; an uncaught exception is a traceback on stderr and exit 1), and module
caches empty as a new process finds them. All of it is put back after the call.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import Mapping, Sequence


def memdeck_command() -> list[str]:
    """The argv that starts `memdeck`: the installed script beside this Python, else the module."""
    script = Path(sys.executable).parent / "memdeck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui.cli.main"]


def run_process(args: Sequence[str], *, env: Mapping[str, str], cwd: Path | str,
                input: str | bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`memdeck ARGS` as a real process with exactly `env`."""
    return subprocess.run([*memdeck_command(), *args], input=input, capture_output=True,
                          text=not isinstance(input, bytes), env=dict(env), cwd=cwd, timeout=timeout)


# Read by the interpreter as it starts: a process can have them, a call in this process cannot.
_PROCESS_ONLY = ("PYTHON", "LC_", "LANG")

# Caches a process fills as it runs, each kept correct in a long-lived process (the workbench,
# the MCP server) by a key that names the store's version; a new process starts with them empty,
# and so does each call here (`_title_cache` is keyed by `id(store)`, which a later call's store
# can reuse). (module, attribute, the value a new process has)
_PROCESS_CACHES = (
    ("store.browse.search", "_title_cache", lambda: None),
    ("store.retrieval.semantic", "_cache", dict),
    ("store.backends.postgres_search", "_stem_cache", dict),
    ("store.backends.postgres_search", "_stats", dict),
    ("store.backends.postgres_search", "_matches", None),  # an OrderedDict: emptied in place
    ("store.backends.postgres_search", "_matches_size", lambda: 0),
)

_one_at_a_time = threading.Lock()  # stdio, cwd and os.environ belong to the whole process


def run_in_process(args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | str | None = None,
                   input: str | bytes | None = None, text: bool | None = None) -> subprocess.CompletedProcess:
    """`memdeck ARGS` through `tui.cli.main.main` in this process, as `run_process` would run it
    (or `subprocess.run(text=...)`: by default text unless `input` is bytes); `env` is the whole
    environment (default: this process's), `cwd` the folder (default: this process's)."""
    from tui.cli.main import main

    env = dict(os.environ) if env is None else env
    cwd = os.getcwd() if cwd is None else cwd
    changed = sorted(k for k in {*env, *os.environ}
                     if k.startswith(_PROCESS_ONLY) and env.get(k) != os.environ.get(k))
    if changed:
        raise ValueError(f"{', '.join(changed)} take effect as a Python process starts: run this "
                         "call as a real process (run_cli_process)")
    text = not isinstance(input, bytes) if text is None else text
    with _one_at_a_time:
        saved_environ = dict(os.environ)
        saved_cwd = os.getcwd()
        saved_streams = sys.stdin, sys.stdout, sys.stderr
        saved_handlers = _signal_handlers()
        root = logging.getLogger()
        saved_handlers_of_root, saved_level = root.handlers[:], root.level
        out, err = _Captured(), _Captured()
        stdin, writer = _stdin(input)
        try:
            os.environ.clear()
            os.environ.update(env)
            os.chdir(cwd)
            sys.stdin = stdin
            sys.stdout = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape", newline="\n")
            sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", newline="\n",
                                          line_buffering=True)
            code = _exit_code(main, list(args))
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            stdin.close()
            if writer is not None:
                writer.join()
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_environ)
            for sig, handler in saved_handlers.items():
                signal.signal(sig, handler)
            root.handlers[:] = saved_handlers_of_root
            root.setLevel(saved_level)
            _empty_process_caches()
    stdout, stderr = out.getvalue(), err.getvalue()
    if text:  # as subprocess.run(text=True) reads a pipe: the locale's UTF-8, universal newlines
        stdout, stderr = (_text(data) for data in (stdout, stderr))
    return subprocess.CompletedProcess(["memdeck", *args], code, stdout, stderr)


class _Captured(io.BytesIO):
    """A captured stream's bytes, kept when the text stream over it is collected and closes it."""

    def close(self) -> None:
        pass


def _exit_code(main, argv: list[str]) -> int:
    """What the process's `sys.exit(main())` would exit with."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    except Exception:  # the interpreter's own last word on an uncaught exception
        traceback.print_exc(file=sys.stderr)
        return 1
    if code is None:
        return 0
    if not isinstance(code, int):
        print(code, file=sys.stderr)
        return 1
    return code & 0xFF


def _stdin(input: str | bytes | None):
    """The call's stdin, with a real file descriptor (the hooks and `ingest -` read it): a pipe
    a thread writes `input` into and closes, else /dev/null."""
    if input is None:
        return open(os.devnull, encoding="utf-8", errors="surrogateescape"), None
    data = input if isinstance(input, bytes) else input.encode("utf-8")
    read_fd, write_fd = os.pipe()

    def write() -> None:
        try:
            with open(write_fd, "wb", closefd=True) as pipe:
                pipe.write(data)
        except BrokenPipeError:
            pass  # the command stopped reading, as a process may

    writer = threading.Thread(target=write, name="memdeck-stdin", daemon=True)
    writer.start()
    return open(read_fd, encoding="utf-8", errors="surrogateescape", newline="\n"), writer


def _signal_handlers() -> dict:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


def _empty_process_caches() -> None:
    for module_name, attribute, fresh in _PROCESS_CACHES:
        module = sys.modules.get(module_name)
        if module is None or not hasattr(module, attribute):
            continue
        if fresh is None:
            getattr(module, attribute).clear()
        else:
            setattr(module, attribute, fresh())


def _text(data: bytes) -> str:
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
