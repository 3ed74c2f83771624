"""`memdeck hook serve`: the hook server, a warm process that answers one store's prompt and
session-start hooks.

A prompt hook run as a whole process pays Python, memdeck's modules, numpy and a prime at every
prompt, a session-start hook the same and decay at every session start. The first session-start
hook of a store starts this server (`start`, detached) when none runs; the hooks after it then
send it their request (`tui/cli/hook_wire.py`, the client) and print its answer. Each request is
the hook run here as it would run in its own process: `tui.cli.program.main` on the request's
command line, in its folder, with its environment, umask, stdin and streams' encodings, and the
asking process's parent and grandparent for its own (`hook_wire.ancestors`: the session-start
hook records them as the agent's process). The store and the config files are opened afresh for
each one, so a write or a setting changed after the server started is seen, and the answer is
the same bytes and exit code, the store written the same. A hook run here starts no server.

A stranger's request is refused: the socket is in a folder of the user's alone (0700), is itself
0600, and on Linux a connection from another user is closed unanswered (SO_PEERCRED). A request is
at most 1 MiB of header and 1 MiB of stdin, read within 5 s; it may name only the prompt or the
session-start hook (`hook_wire.served_db`), on this server's store, and the server runs nothing
else for it.

It exits after its idle time (`--idle`, default `sessions.hook_server_minutes`), on SIGTERM,
SIGINT or SIGHUP, when a client of other code asks it something, when its own code changed on
disk, and when its socket or its store is gone or replaced; its socket goes with it.
"""

from __future__ import annotations

import argparse
import codecs
import os
import select
import signal
import sys
import time

from store.api import InvalidInput, NotFound
from tui.cli import hook_wire, values
from tui.cli.hook_wire import PROTOCOL, Where
from tui.cli.output import captured, info, out

REQUEST_S = 5.0  # a client sends its request at once
CHECK_S = 30.0  # how often an idle server looks for its socket and its store
STARTED_LATELY_S = 30.0  # a hook starts no server when one started (or failed to) this recently
MAX_LOG = 64 << 10
ERROR_HANDLERS = frozenset({"strict", "surrogateescape", "backslashreplace", "replace", "ignore",
                            "namereplace", "xmlcharrefreplace"})


def register(hooks: argparse._SubParsersAction) -> None:
    p = hooks.add_parser(
        "serve", help="answer the prompt and session-start hooks from a warm process (the session-start hook "
                      "starts it)",
        description="Serve the store's prompt and session-start hooks (`hook user-prompt-submit`, `hook "
                    "session-start`, every agent's) from this process, over a Unix socket only you can open "
                    "($XDG_RUNTIME_DIR/memdeck, else /tmp/memdeck-UID): a hook asks it instead of loading "
                    "memdeck, and gets the answer it would have printed. A hook that finds none runs in its "
                    "own process, as before, and starts one, detached, for the next hooks (a store's first "
                    "session start always does; sessions.hook_server_minutes: 0 or MEMDECK_NO_SERVE=1: "
                    "never). It exits after --idle seconds without a hook, on SIGTERM or SIGINT, or when "
                    "memdeck's code changed (docs/agents.md).")
    p.add_argument("--idle", type=values.seconds, default=None, metavar="SECONDS",
                   help="exit after this long without a hook (default: sessions.hook_server_minutes, 10 minutes)")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--status", action="store_true",
                        help="say whether a hook server runs for the store (exit 4 when none does)")
    action.add_argument("--stop", action="store_true", help="ask the store's hook server to exit")
    p.set_defaults(handler=cmd_hook_serve)


def cmd_hook_serve(ctx) -> int:
    args = ctx.args
    if not hook_wire.supported():
        raise InvalidInput("the hook server runs on Linux and macOS (a Unix socket and fork); "
                           "here every hook runs in its own process")
    where = _where(args.db)
    if args.status:
        return _status(where)
    if args.stop:
        return _stop(where)
    if not os.path.isfile(where.store):
        raise NotFound(f"no store at {where.store}: the hook server serves a store that exists")
    idle = args.idle
    if idle is None:
        from store.api import Config

        idle = 60.0 * (Config.load().sessions.hook_server_minutes or 10)
    return Server(where, idle).run()


def _where(db) -> Where:
    where = Where.of(None if db is None else str(db))
    if where is None:
        if hook_wire.store_location(None if db is None else str(db)) is None:
            raise InvalidInput("the hook server serves a store file named by an absolute path "
                               "(--db /path/to/memdeck.db); a PostgreSQL store's hooks run in their own process")
        raise InvalidInput(f"the hook server's socket path would be longer than {hook_wire.MAX_SOCKET_PATH} "
                           f"bytes under {hook_wire.folder()}: set XDG_RUNTIME_DIR to a shorter folder")
    return where


def _status(where: Where) -> int:
    try:
        answer = hook_wire.ask(where.socket, "status")["status"]
        up, answered, idle = (float(answer["up"]), int(answer["answered"]), float(answer["idle"]))
        pid = int(answer["pid"])
    except (OSError, KeyError, TypeError, ValueError):
        info(f"no hook server runs for {where.store} (socket {where.socket})")
        return NotFound.exit_code
    out(f"hook server: pid {pid}, up {up:.0f} s, {answered} hook{'' if answered == 1 else 's'} answered, "
        f"exits after {idle:g} s without one")
    out(f"store: {where.store}")
    out(f"socket: {where.socket}")
    out(f"log: {where.log}")
    return 0


def _stop(where: Where) -> int:
    try:
        answer = hook_wire.ask(where.socket, "stop")
    except OSError:
        info(f"no hook server runs for {where.store}: nothing to stop")
        return 0
    info(f"the hook server (pid {answer.get('pid')}) of {where.store} is stopping")
    return 0


# -- the server ---------------------------------------------------------------------------------

class Server:
    def __init__(self, where: Where, idle_s: float) -> None:
        self.where = where
        self.idle_s = idle_s
        self.stopping: str | None = None
        self.answered = 0
        self.started = time.monotonic()
        self.started_ns = time.time_ns()
        self.code_files: list[str] = []
        self.modules_seen = 0
        self.socket_inode: int | None = None
        self.store_file = _file_id(where.store)

    def run(self) -> int:
        import fcntl

        make_folder(self.where.folder)
        lock = os.open(self.where.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                _log(f"a hook server already serves {self.where.store}")
                return 0
            return self._serve_locked()
        finally:
            os.close(lock)  # the lock goes with it

    def _serve_locked(self) -> int:
        try:
            os.unlink(self.where.socket)  # a socket no server holds the lock of: left by one that died
        except FileNotFoundError:
            pass
        _warm_up()
        import socket

        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        wake_r, wake_w = os.pipe()
        saved = {}
        saved_wakeup = None
        try:
            # Signals first: from the moment the socket exists, an end removes it.
            for fd in (wake_r, wake_w):
                os.set_blocking(fd, False)
            saved_wakeup = signal.set_wakeup_fd(wake_w)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                saved[sig] = signal.signal(sig, self._signalled)
            mask = os.umask(0o177)
            try:
                listener.bind(self.where.socket)
            finally:
                os.umask(mask)
            os.chmod(self.where.socket, 0o600)
            self.socket_inode = os.stat(self.where.socket).st_ino
            listener.listen(16)
            _log(f"serving {self.where.store} (pid {os.getpid()}, socket {self.where.socket}); "
                 f"exits after {self.idle_s:g} s without a hook")
            self._loop(listener, wake_r)
        finally:
            if saved_wakeup is not None:
                signal.set_wakeup_fd(saved_wakeup)
            for sig, handler in saved.items():
                signal.signal(sig, handler)
            self._remove_socket()
            listener.close()
            os.close(wake_r)
            os.close(wake_w)
        _log(f"exiting: {self.stopping or 'stopped'} ({self.answered} hooks answered)")
        return 0

    def _signalled(self, signum, frame) -> None:
        self.stopping = signal.Signals(signum).name

    def _loop(self, listener, wake_r: int) -> None:
        last = time.monotonic()
        while self.stopping is None:
            left = self.idle_s - (time.monotonic() - last)
            if left <= 0:
                self.stopping = f"no hook for {self.idle_s:g} s"
                break
            ready, _, _ = select.select([listener, wake_r], [], [], min(left, CHECK_S))
            if wake_r in ready:
                _drain(wake_r)
                continue
            if listener not in ready:
                self.stopping = self._gone()
                continue
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                try:
                    if self._serve(conn):
                        last = time.monotonic()
                except Exception as exc:  # a request gone wrong is the client's to run itself
                    _log(f"a request failed: {type(exc).__name__}: {exc}")

    def _gone(self) -> str | None:
        try:
            if os.stat(self.where.socket).st_ino != self.socket_inode:
                return "its socket was replaced"
        except OSError:
            return "its socket was removed"
        found = _file_id(self.where.store)
        if found is None:
            return "its store is gone"
        if found != self.store_file:
            return "its store was replaced"
        return None

    def _remove_socket(self) -> None:
        try:
            if os.stat(self.where.socket).st_ino == self.socket_inode:
                os.unlink(self.where.socket)
        except OSError:
            pass

    # -- one request ----------------------------------------------------------------------------

    def _serve(self, conn) -> bool:
        """Answer one connection; True when it ran a hook."""
        uid = hook_wire.peer_uid(conn)
        if uid is not None and uid != os.getuid():
            _log(f"refused a connection from uid {uid}")
            return False
        deadline = time.monotonic() + REQUEST_S
        request = hook_wire.recv_json(conn, hook_wire.MAX_HEADER, deadline)
        data = hook_wire.recv_frame(conn, hook_wire.MAX_BYTES + 1, deadline)
        if request.get("protocol") != PROTOCOL or request.get("code") != hook_wire.code_identity():
            # A memdeck of other code: it runs the hook itself, and this server makes way.
            self._refuse(conn, "a hook server of other code")
            self.stopping = "a client of other code asked"
            return False
        op = request.get("op")
        if op == "status":
            hook_wire.send_json(conn, {"status": self._status()}, time.monotonic() + REQUEST_S)
            return False
        if op == "stop":
            hook_wire.send_json(conn, {"stopping": True, "pid": os.getpid()}, time.monotonic() + REQUEST_S)
            self.stopping = "asked to stop"
            return False
        changed = self._changed_code()
        if changed is not None:
            self._refuse(conn, f"memdeck's code changed since it started ({changed})")
            self.stopping = "its code changed"
            return False
        if _file_id(self.where.store) != self.store_file:
            # Another file at the store's path (a copy put in its place): what this process keeps
            # of the old one (the vectors read) is not to be trusted with the new one.
            self._refuse(conn, "its store was replaced")
            self.stopping = "its store was replaced"
            return False
        problem = self._problem(request, data) if op == "hook" else f"no such request: {op!r}"
        if problem is not None:
            self._refuse(conn, problem)
            return False
        hook_wire.send_json(conn, {"ready": True, "pid": os.getpid()}, time.monotonic() + REQUEST_S)
        if hook_wire.recv_frame(conn, 16, time.monotonic() + REQUEST_S) != b"go":
            return False  # the client went its own way: nothing was run
        code, written = self._run(request, data)
        deadline = time.monotonic() + REQUEST_S
        hook_wire.send_json(conn, {"exit": code}, deadline)
        hook_wire.send_frame(conn, written.stdout, deadline)
        hook_wire.send_frame(conn, written.stderr, deadline)
        self.answered += 1
        return True

    def _refuse(self, conn, why: str) -> None:
        hook_wire.send_json(conn, {"refused": why, "pid": os.getpid()}, time.monotonic() + REQUEST_S)

    def _status(self) -> dict:
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        return {"pid": os.getpid(), "store": self.where.store, "up": time.monotonic() - self.started,
                "answered": self.answered, "idle": self.idle_s, "cpu": usage.ru_utime + usage.ru_stime}

    def _problem(self, request: dict, data: bytes) -> str | None:  # noqa: C901 (a list of checks, each a refusal)
        """Why the request is not one this server runs (None: it is one)."""
        argv, env, cwd = request.get("argv"), request.get("env"), request.get("cwd")
        streams, stdin = request.get("streams"), request.get("stdin")
        if not isinstance(argv, list) or not all(isinstance(word, str) for word in argv):
            return "no command line"
        if not isinstance(env, dict) or not all(_variable(k, v) for k, v in env.items()):
            return "no environment"
        try:
            db = hook_wire.served_db(argv)
        except hook_wire.NotServed as exc:
            return f"not a hook the server answers ({exc})"
        store = hook_wire.store_location(db, env)
        if store != self.where.store or request.get("store") != store:
            return f"another store ({store})"
        if not isinstance(cwd, str) or "\0" in cwd or not os.path.isabs(cwd) or not os.path.isdir(cwd):
            return "no folder to run in"
        if not isinstance(streams, dict) or not all(_stream(streams.get(name)) for name in ("stdout", "stderr")):
            return "no streams"
        umask = request.get("umask")
        if not isinstance(umask, int) or isinstance(umask, bool) or not 0 <= umask <= 0o777:
            return "no umask"
        if not isinstance(stdin, dict) or not isinstance(stdin.get("none"), bool):
            return "no stdin"
        if not (stdin.get("problem") is None or isinstance(stdin["problem"], str)):
            return "no stdin"
        if (stdin["none"] or stdin["problem"] is not None) and data:
            return "stdin given twice"
        ancestors = request.get("ancestors")
        if not (isinstance(ancestors, list) and 1 <= len(ancestors) <= 2
                and all(isinstance(pid, int) and not isinstance(pid, bool) and 0 <= pid <= hook_wire.MAX_PID
                        for pid in ancestors)):
            return "no ancestors"
        return None

    def _run(self, request: dict, data: bytes):
        """The hook, run in this process as in the client's: its exit code and what it wrote."""
        variables = request["env"]
        own = dict(os.environ)
        stdin = request["stdin"]
        hook_wire.give(hook_wire.Stdin(None if stdin["none"] else data, stdin["problem"]))
        hook_wire.serve_for(request["ancestors"])
        os.environ.clear()
        os.environ.update(variables)
        if variables.get("TZ") != own.get("TZ"):
            time.tzset()
        mask = os.umask(request["umask"])
        try:
            os.chdir(request["cwd"])
            streams = request["streams"]
            with captured(tuple(streams["stdout"]), tuple(streams["stderr"])) as written:
                code = _exit_code(request["argv"])
        finally:
            os.umask(mask)
            os.environ.clear()
            os.environ.update(own)
            if variables.get("TZ") != own.get("TZ"):
                time.tzset()
            os.chdir("/")
            hook_wire.take()
            hook_wire.serve_for(None)
        return code, written

    def _changed_code(self) -> str | None:
        """A module of memdeck's this process runs whose file changed since it started (an upgrade,
        a checkout): its answers would no longer be what the hook's own process gives."""
        if len(sys.modules) != self.modules_seen:
            self.modules_seen = len(sys.modules)
            roots = tuple(os.path.join(hook_wire.CODE_ROOT, part) + os.sep for part in ("store", "tui"))
            self.code_files = sorted({f for m in list(sys.modules.values())
                                      if isinstance(f := getattr(m, "__file__", None), str) and f.startswith(roots)})
        for path in self.code_files:
            try:
                if os.stat(path).st_mtime_ns > self.started_ns:
                    return path
            except OSError:
                return path
        return None


def _exit_code(argv: list[str]) -> int:
    from tui.cli.program import main

    try:
        return main(argv)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        info(str(exc.code))
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception:  # as a process would: the traceback on stderr, exit 1
        import traceback

        info(traceback.format_exc().rstrip())
        return 1


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _variable(name, value) -> bool:
    return (isinstance(name, str) and isinstance(value, str) and name and "=" not in name
            and "\0" not in name and "\0" not in value)


def _stream(spec) -> bool:
    if not (isinstance(spec, list) and len(spec) == 3 and isinstance(spec[0], str) and spec[1] in ERROR_HANDLERS
            and isinstance(spec[2], bool)):
        return False
    try:
        codecs.lookup(spec[0])
    except LookupError:
        return False
    return True


def _warm_up() -> None:
    """What a hook loads, loaded before the first one asks: the parser's hook commands, the
    agents' modules, prime's and decay's modules, and the embedding model when there is one."""
    import store.api as api
    from tui.cli.agents import AGENTS, agent_module
    from tui.cli.program import build_parser

    build_parser("tui.cli.ingest")
    for name in AGENTS:
        agent_module(name)
    for name in ("InjectionContext", "prime_for_prompt", "prime", "prime_session_start", "run_decay", "describe",
                 "clean_field", "Layers"):
        getattr(api, name)
    try:
        embedder = api.embedding.embedder() if api.embedding.available() else None
        if embedder is not None:
            embedder.embed(["warm"])
    except (OSError, ValueError, ImportError) as exc:
        _log(f"the embedding model is not loaded ahead: {exc}")


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except OSError:
        pass


def _log(message: str) -> None:
    info(f"memdeck hook serve: {time.strftime('%Y-%m-%d %H:%M:%S')} {message}")


def make_folder(path: str) -> None:
    """The sockets' folder, made this user's alone; one that is not raises InvalidInput."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise InvalidInput(f"cannot make the hook server's folder {path}: {exc.strerror}") from None
    problem = hook_wire.folder_problem(path)
    if problem is not None:
        raise InvalidInput(f"the hook server's folder is not safe: {problem}")


# -- starting one -------------------------------------------------------------------------------

def start(ctx) -> None:
    """Start the hook server of the hook's store, detached, unless one runs (or one started a
    moment ago), or it is off (MEMDECK_NO_SERVE, `sessions.hook_server_minutes: 0`). It never
    fails the hook: what goes wrong is in the server's log."""
    try:
        if hook_wire.off() or not hook_wire.supported():
            return
        minutes = ctx.store.config.sessions.hook_server_minutes
        where = Where.of(None if ctx.args.db is None else str(ctx.args.db))
        if not minutes or where is None:
            return
        make_folder(where.folder)
        if running(where) or _started_lately(where):
            return
        _spawn(where, 60 * minutes)
    except (OSError, InvalidInput):
        pass


def running(where: Where) -> bool:
    """Whether a server holds the store's lock (one that is starting does too)."""
    import fcntl

    try:
        fd = os.open(where.lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _started_lately(where: Where) -> bool:
    try:
        return time.time() - os.stat(where.log).st_mtime < STARTED_LATELY_S
    except FileNotFoundError:
        return False


# The server's own process: this code, whatever the path or the folder would find first.
_BOOT = "import sys; r = {root!r}; r in sys.path or sys.path.insert(0, r); from tui.cli.main import main; sys.exit(main())"


def _spawn(where: Where, idle_s: float) -> None:
    """`memdeck --db STORE hook serve`, run by this Python on this code, in a session of its own,
    with no stdin or stdout and stderr appended to the server's log; the grandchild of this
    process (the child leaves at once and is reaped here), so no zombie is left behind."""
    argv = [sys.executable, "-P", "-c", _BOOT.format(root=hook_wire.CODE_ROOT),
            "--db", where.store, "hook", "serve", "--idle", f"{idle_s:g}"]
    try:
        if os.path.getsize(where.log) > MAX_LOG:
            os.truncate(where.log, 0)
    except OSError:
        pass
    log = os.open(where.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        child = os.fork()
        if child == 0:
            _detach(argv, log)
    finally:
        os.close(log)
    os.waitpid(child, 0)


def _detach(argv: list[str], log: int) -> None:
    """In the child: a new session, then a grandchild that becomes the server; never returns."""
    code = 0
    try:
        os.setsid()
        if os.fork() == 0:
            code = 127
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(log, 2)
            os.closerange(3, 1 << 16)  # nothing of the agent's (its pipes) is kept open
            os.chdir("/")
            os.execv(argv[0], argv)
    except BaseException:
        pass
    finally:
        os._exit(code)
