"""The hooks' warm path: the half a hook process runs before it imports anything of the store.

The prompt hook runs at every prompt, the session-start hook at every session start, resume and
clear. As a whole process each pays Python, the store's modules (numpy too, with the semantic
signal) and a prime: 2-3 x `python -c "import peewee, rapidfuzz, yaml"` (docs/benchmarks.md,
Round 12). The hook server (`memdeck hook serve`, `tui/cli/hook_server.py`), which the
session-start hook starts, keeps all that loaded: `memdeck hook user-prompt-submit` and `memdeck
hook session-start` send it their command line, environment, folder, stdin and the processes
above them (`ancestors`: the session-start hook records the agent's) over a Unix socket only
its user can open, and print what it answers, which is what the hook would have printed here
(the server runs the same code on the same input). Whenever that is not certain (no server, a
stale socket, a server of other code or of another store, a refusal, a timeout, an answer that
is not one), the hook runs here as before, on the stdin read here (`take`): it never blocks the
agent, and it runs once.

Only the standard library's quick modules are imported here: with a server answering, this
module is the hook's whole cost. The hook's stdin is read here too, for both paths
(`read_stdin`: at most 1 MiB, for at most 5 s, done at the first whole JSON object). It reads
the environment itself (MEMDECK_NO_SERVE, MEMDECK_SERVE_VERBOSE, where the store and the socket
are): `store.engine.environment` cannot be imported without the store.
"""

from __future__ import annotations

import json
import os
import select
import stat
import struct
import sys
import time
import zlib

TYPE_CHECKING = False  # `typing` is not imported: a few ms of every hook
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

PROTOCOL = 2  # 2: a request says the asking hook's parent and grandparent (`ancestors`)
MAX_BYTES = 1 << 20  # a hook's JSON is a few hundred bytes; Claude Code's largest are a few KiB
DEADLINE_S = 5.0  # an agent writes its JSON at once; this only ends a wait that would not
_CHUNK = 65536

# The hooks the server answers, every agent's, with the options each may be given: the prompt
# hook, which runs at every prompt, and the session-start hook (the agent's process it records
# is the asking hook's, sent with the request: `ancestors`). Stop may ingest for seconds: it runs
# in its own process.
SERVED_HOOKS = {
    "user-prompt-submit": ("--agent", "--hat", "--budget"),
    "session-start": ("--agent", "--hat", "--task", "--budget"),
}
AGENTS = ("claude-code", "codex", "gemini", "cursor")

MAX_HEADER = 1 << 20  # a request's header: its environment, mostly (a few KiB)
CONNECT_S = 0.5  # a server listening accepts at once
READY_S = 3.0  # it answers one request at a time: another hook's prime may be ahead of this one
ANSWER_S = 20.0  # the hook itself, run by the server; a hook run here takes as long
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS

# The code a process runs: its Python's environment (the virtual environment, whichever of its
# `python` links started it) and version, and the folder holding `store/` and `tui/`. A server
# serves clients of the same code only (its socket's name says which; each request says it again).
CODE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def code_identity() -> list[str]:
    return [sys.prefix, sys.implementation.cache_tag or "", CODE_ROOT]


# -- the hook's stdin ---------------------------------------------------------------------------

class StdinProblem(Exception):
    """The hook's stdin is not what an agent sends: too long, never ending, unreadable."""


class Stdin:
    """What a hook read of its stdin: its bytes, None (no stdin, or a terminal), or the problem."""

    __slots__ = ("data", "problem")

    def __init__(self, data: bytes | None, problem: str | None = None) -> None:
        self.data = data
        self.problem = problem


_given: Stdin | None = None


def give(stdin: Stdin | None) -> None:
    """The stdin the hook reads (`tui.cli.hook_input.read_payload`) in place of its own, which is
    already read: by the warm path that fell back, or a request the server runs."""
    global _given
    _given = stdin


def take() -> Stdin | None:
    """The stdin given, once; None when the hook reads its own."""
    global _given
    given, _given = _given, None
    return given


def read_own_stdin() -> Stdin:
    try:
        return Stdin(read_stdin())
    except StdinProblem as exc:
        return Stdin(None, str(exc))


def read_stdin(fd: int | None = None, *, max_bytes: int = MAX_BYTES, deadline_s: float = DEADLINE_S) -> bytes | None:
    """The hook's stdin, read so that no stdin can hold the agent up; None when stdin is closed
    or a terminal. Raises `StdinProblem` saying what is wrong."""
    if fd is None:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, ValueError, OSError):
            return None
    if os.isatty(fd):
        return None
    return _read_capped(fd, max_bytes, deadline_s)


def _read_capped(fd: int, max_bytes: int, deadline_s: float) -> bytes:
    data = bytearray()
    ends = time.monotonic() + deadline_s
    while True:
        left = ends - time.monotonic()
        if left <= 0:
            if _whole_json(data):
                return bytes(data)
            raise StdinProblem(f"the hook input did not end within {deadline_s:g} s "
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
            raise StdinProblem(f"the hook input could not be read: {exc.strerror}") from None
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > max_bytes:
            raise StdinProblem(f"the hook input is larger than {max_bytes >> 10} KiB; "
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


# -- the processes above the hook ---------------------------------------------------------------

def parent_of(pid: int) -> int | None:
    """The parent process of `pid` (Linux's /proc), or None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as found:
            # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after it.
            return int(found.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def own_ancestors() -> list[int]:
    """This process's parent and grandparent (where the system says): an agent may run a hook's
    command through a shell, so the agent's own process is one of the two."""
    parent = os.getppid()
    grandparent = parent_of(parent)
    return [parent, *([grandparent] if grandparent else [])]


MAX_PID = (1 << 31) - 1  # a pid_t
_asking: list[int] | None = None


def serve_for(ancestors: list[int] | None) -> None:
    """In the hook server, while it runs one request: the ancestors of the hook process that asked
    (None once it is done)."""
    global _asking
    _asking = None if ancestors is None else list(ancestors)


def served() -> bool:
    """Whether the hook runs in the hook server, for a hook process that asked it."""
    return _asking is not None


def ancestors() -> list[int]:
    """The hook's parent and grandparent: its own process's, or, in the hook server, those of the
    hook process that asked, which sent them (the server, started detached by an earlier hook, has
    other ones)."""
    return list(_asking) if _asking is not None else own_ancestors()


# -- which hook, which store, which socket ------------------------------------------------------

def supported() -> bool:
    """Unix sockets, users and fork: Linux and macOS; elsewhere every hook runs in its own process."""
    return os.name == "posix"


def off(environ=os.environ) -> bool:
    """MEMDECK_NO_SERVE: set (and not 0), the hooks neither ask nor start a hook server."""
    return (environ.get("MEMDECK_NO_SERVE") or "0") != "0"


def verbose(environ=os.environ) -> bool:
    """MEMDECK_SERVE_VERBOSE: set (and not 0), a hook says on stderr why no server answered it."""
    return (environ.get("MEMDECK_SERVE_VERBOSE") or "0") != "0"


class NotServed(Exception):
    """The command line is not a hook the server answers."""


def served_db(argv: Sequence[str]) -> str | None:
    """The `--db` of a command line the server answers (None: none given), which is exactly
    `[--db DB] [--project NAME] hook user-prompt-submit [--agent A] [--hat H] [--budget N]` or
    `... hook session-start [--agent A] [--hat H] [--task T] [--budget N]`; anything else (help,
    an abbreviated option, another hook) raises `NotServed`."""
    words = list(argv)
    db, i = None, 0
    while i < len(words) and words[i].startswith("--"):
        name, equals, value = words[i].partition("=")
        if name not in ("--db", "--project"):
            raise NotServed(words[i])
        if not equals:
            if i + 1 >= len(words):
                raise NotServed(words[i])
            value, i = words[i + 1], i + 1
        if name == "--db":
            db = value
        i += 1
    if len(words) < i + 2 or words[i] != "hook" or words[i + 1] not in SERVED_HOOKS:
        raise NotServed(" ".join(words[i:i + 2]))
    options = SERVED_HOOKS[words[i + 1]]
    rest, j = words[i + 2:], 0
    while j < len(rest):
        name, equals, value = rest[j].partition("=")
        if name not in options:
            raise NotServed(rest[j])
        if not equals:
            if j + 1 >= len(rest):
                raise NotServed(rest[j])
            value, j = rest[j + 1], j + 1
        if name == "--agent" and value not in AGENTS:
            raise NotServed(rest[j])
        j += 1
    return db


def store_location(db: str | None, environ=os.environ) -> str | None:
    """The store file a command with `--db db` opens (MEMDECK_DB, else the default file under
    XDG_DATA_HOME, as `store.engine.environment` says), when it is named by an absolute path;
    None otherwise (a PostgreSQL URL, a path relative to a folder the hook moves to): such a
    store is not served."""
    where = db if db is not None else (environ.get("MEMDECK_DB") or None)
    if where is None:
        data = environ.get("XDG_DATA_HOME") or os.path.join(_home(environ), ".local", "share")
        where = os.path.join(data, "memdeck", "memdeck.db")
    return os.path.normpath(where) if os.path.isabs(where) else None


def _home(environ) -> str:
    home = environ.get("HOME")
    return home if home else os.path.expanduser("~")


def folder(environ=os.environ) -> str:
    """Where the sockets are: `$XDG_RUNTIME_DIR/memdeck`, else `$TMPDIR/memdeck-UID` (or
    `/tmp/memdeck-UID`); a folder of this user's alone (0700), made by the server."""
    runtime = environ.get("XDG_RUNTIME_DIR") or ""
    if os.path.isabs(runtime):
        return os.path.join(runtime, "memdeck")
    tmp = environ.get("TMPDIR") or ""
    return os.path.join(tmp if os.path.isabs(tmp) else "/tmp", f"memdeck-{os.getuid()}")


def folder_problem(path: str) -> str | None:
    """Why `path` is not a folder for this user's sockets (None: it is): it must be a real folder,
    not a link, owned by this user, that no one else may enter."""
    try:
        found = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISDIR(found.st_mode):
        return f"{path} is not a folder"
    if found.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {found.st_uid})"
    if found.st_mode & 0o077:
        return f"{path} may be entered by other users (mode {stat.S_IMODE(found.st_mode):o}; 700 expected)"
    return None


class Where:
    """The files of one store's hook server, named for the store and the code serving it."""

    def __init__(self, store: str, environ=os.environ) -> None:
        self.store = store
        self.folder = folder(environ)
        key = "\0".join([str(PROTOCOL), *code_identity(), store]).encode("utf-8", "surrogateescape")
        base = os.path.join(self.folder, f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}")
        self.socket, self.lock, self.log = base + ".sock", base + ".lock", base + ".log"

    @classmethod
    def of(cls, db: str | None, environ=os.environ) -> "Where | None":
        store = store_location(db, environ)
        if store is None:
            return None
        where = cls(store, environ)
        return where if len(os.fsencode(where.socket)) <= MAX_SOCKET_PATH else None


# -- the wire: length-prefixed frames -----------------------------------------------------------

def send_frame(conn, data: bytes, deadline: float) -> None:
    conn.settimeout(max(deadline - time.monotonic(), 0.001))
    conn.sendall(struct.pack(">I", len(data)) + data)


def recv_frame(conn, limit: int, deadline: float) -> bytes:
    (length,) = struct.unpack(">I", _recv_exact(conn, 4, deadline))
    if length > limit:
        raise ValueError(f"a message of {length} bytes, more than {limit}")
    return _recv_exact(conn, length, deadline)


def recv_json(conn, limit: int, deadline: float) -> dict[str, Any]:
    data = json.loads(recv_frame(conn, limit, deadline))
    if not isinstance(data, dict):
        raise ValueError("a message that is not a JSON object")
    return data


def send_json(conn, data: dict[str, Any], deadline: float) -> None:
    send_frame(conn, json.dumps(data).encode("ascii"), deadline)


def _recv_exact(conn, size: int, deadline: float) -> bytes:
    data = bytearray()
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer in time")
        conn.settimeout(left)
        chunk = conn.recv(min(size - len(data), 1 << 20))
        if not chunk:
            raise ConnectionError("the connection was closed")
        data += chunk
    return bytes(data)


def connect(path: str, timeout: float = CONNECT_S):
    import socket

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(path)
    except BaseException:
        conn.close()
        raise
    return conn


def peer_uid(conn) -> int | None:
    """The user at the other end of a Unix socket (Linux: SO_PEERCRED); None where the system
    does not say, and the folder's mode is the guard."""
    import socket

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    credentials = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return struct.unpack("3i", credentials)[1]


def ask(path: str, op: str, timeout: float = READY_S) -> dict[str, Any]:
    """A server's answer to `op` (status, stop). Raises OSError when none answers."""
    conn = connect(path)
    try:
        deadline = time.monotonic() + timeout
        send_json(conn, {"op": op, "protocol": PROTOCOL, "code": code_identity()}, deadline)
        send_frame(conn, b"", deadline)
        return recv_json(conn, MAX_HEADER, deadline)
    except (ValueError, TimeoutError) as exc:
        raise OSError(f"the hook server's answer is not one: {exc}") from None
    finally:
        conn.close()


# -- the client ---------------------------------------------------------------------------------

# Whether the hook found no server to answer it (none listening, a stale socket, one that
# refused): the prompt hook run here then starts one (`tui.cli.hook_server.start`), unless it
# is off. Not after a timeout: that server is there, busy.
found_none = False


def answered(argv: Sequence[str]) -> int | None:
    """The hook's exit code once the hook server answered it and its answer is printed; None when
    the hook is to run in this process (with the stdin read here given to it, when it was)."""
    global found_none
    if off() or not supported():
        return None
    try:
        where = Where.of(served_db(argv))
    except NotServed:
        return None
    if where is None:
        return None
    try:
        found = os.lstat(where.socket)
    except OSError:
        found_none = True
        return None
    # Only a socket of this user's, in a folder of this user's alone, is asked: what it answers
    # goes into the agent's prompt.
    unsafe = folder_problem(where.folder)
    if unsafe is None and (not stat.S_ISSOCK(found.st_mode) or found.st_uid != os.getuid()):
        unsafe = f"{where.socket} is not a socket of this user's"
        found_none = True  # a server starting removes it
    if unsafe is not None:
        _say(unsafe)
        return None
    try:
        conn = connect(where.socket)
        if peer_uid(conn) not in (None, os.getuid()):
            conn.close()
            _say("the hook server runs as another user")
            return None
    except OSError as exc:  # refused: a socket left by a server that died
        found_none = True
        _say(f"the hook server did not answer ({exc.strerror or exc})")
        return None
    stdin = read_own_stdin()
    try:
        with conn:
            return _asked(conn, argv, where, stdin)
    except _Refused as exc:
        found_none = True
        reason = str(exc)
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        found_none = isinstance(exc, ConnectionError)
        reason = f"{type(exc).__name__}: {exc}"
    give(stdin)
    _say(f"the hook server did not answer ({reason})")
    return None


class _Refused(Exception):
    pass


def _asked(conn, argv: Sequence[str], where: Where, stdin: Stdin) -> int:
    streams = {name: [stream.encoding, stream.errors, stream.isatty()]
               for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr))}
    mask = os.umask(0o077)
    os.umask(mask)
    request = {"op": "hook", "protocol": PROTOCOL, "code": code_identity(), "store": where.store,
               "argv": list(argv), "cwd": os.getcwd(), "env": dict(os.environ), "umask": mask, "streams": streams,
               "stdin": {"none": stdin.data is None, "problem": stdin.problem}, "ancestors": own_ancestors()}
    deadline = time.monotonic() + READY_S
    send_json(conn, request, deadline)
    send_frame(conn, stdin.data or b"", deadline)
    ready = recv_json(conn, MAX_HEADER, deadline)
    if ready.get("ready") is not True:
        raise _Refused(str(ready.get("refused", "refused")))
    # From here the server runs the hook: this process waits for its answer, and runs it itself
    # only if none comes.
    deadline = time.monotonic() + ANSWER_S
    send_frame(conn, b"go", deadline)
    answer = recv_json(conn, MAX_HEADER, deadline)
    code = answer["exit"]
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        raise ValueError(f"an exit code of {code!r}")
    out = recv_frame(conn, 64 * MAX_BYTES, deadline)
    err = recv_frame(conn, 64 * MAX_BYTES, deadline)
    _write(sys.stdout, out)
    _write(sys.stderr, err)
    return code


def _write(stream, data: bytes) -> None:
    """The server's bytes as they are: its output module made them what this process would have
    written (`tui.cli.output`). A stdout that went away is let be, as a hook lets it be."""
    if not data:
        return
    try:
        stream.flush()
        view = memoryview(data)
        fd = stream.fileno()
        while view:
            view = view[os.write(fd, view):]
    except (OSError, ValueError):
        pass


def _say(message: str) -> None:
    if verbose():
        shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in message)
        try:
            sys.stderr.write(f"memdeck hook: {shown}; running the hook in this process\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
