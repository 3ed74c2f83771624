"""A real PostgreSQL server for the tests: one per test session (per xdist worker), started from
the machine's PostgreSQL binaries in a temporary folder, listening on a Unix socket only, and
stopped at the end. Each test gets a fresh database, copied from a migrated template.
`Server(tcp=True)` also listens on 127.0.0.1, on a free port (`tcp_url`), for the URL form
`postgresql://user@host:port/db`.

Outside CI, a machine without PostgreSQL (or without psycopg) skips the PostgreSQL half of the
tests, saying why; with CI set that is an error, never a skip.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

PORT = 5432  # only names the socket file: the folder is the test session's own


def find_bin() -> Path | None:
    if env := os.environ.get("MEMDECK_PG_BIN"):
        return Path(env)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def unavailable() -> str | None:
    """Why no server can be started here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[test]')"
    if find_bin() is None:
        return "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the server as"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (another process may take it before
    the server does: `Server.start` tries again)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    def __init__(self, *, tcp: bool = False) -> None:
        self.tcp = tcp
        self.port = PORT
        self.bin = find_bin()
        self.folder = Path(tempfile.mkdtemp(prefix="memdeck-pg-"))
        self.data = self.folder / "data"
        self.socket = self.folder
        self.user: str | None = "postgres" if os.geteuid() == 0 else None
        self._names = itertools.count()

    def _run(self, *argv: str) -> None:
        command = [str(self.bin / argv[0]), *argv[1:]]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")

    def start(self) -> "Server":
        if self.user:
            os.chmod(self.folder, 0o755)
            shutil.chown(self.folder, self.user, self.user)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync",
                  "-E", "UTF8", "--locale=C.UTF-8")
        for attempt in range(3):
            self.port = free_port() if self.tcp else PORT
            listen = "127.0.0.1" if self.tcp else ""
            try:
                self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-o",
                          f"-k {self.socket} -p {self.port} -c listen_addresses='{listen}' -c fsync=off "
                          "-c synchronous_commit=off -c full_page_writes=off", "-w", "start")
                break
            except RuntimeError:
                if not self.tcp or attempt == 2:  # only a port taken meanwhile is worth a retry
                    raise
        self._template()
        return self

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.socket}&port={self.port}"

    def tcp_url(self, database: str, user: str = "postgres") -> str:
        """The URL of `database` over TCP (a server started with `tcp=True`)."""
        assert self.tcp, "this server listens on its Unix socket only"
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(sql)

    def _template(self) -> None:
        from store.backends.opening import connect

        self._admin("CREATE DATABASE memdeck_template")
        db, _ = connect(self.url("memdeck_template"))
        db.close()

    def fresh_database(self) -> str:
        """The URL of a new database holding an empty, migrated store."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE memdeck_template")
        return self.url(name)

    def empty_database(self) -> str:
        """The URL of a new database with nothing in it (memdeck migrates it on first open)."""
        name = f"empty_{os.getpid()}_{next(self._names)}"
        self._admin(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            # A session's test databases are some 9 MB each, gigabytes by the end of a run:
            # removing them took 12-24 s at the end of each test worker, so a process of its own
            # removes them while the run reports.
            try:
                subprocess.Popen(["rm", "-rf", "--", str(self.folder)], start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except OSError:
                shutil.rmtree(self.folder, ignore_errors=True)


def dump(url: str) -> list:
    """Every row of every table of the database at `url`, in a stable order: what a test
    compares to say nothing was written."""
    import psycopg

    rows: list = []
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")]
        for table in tables:
            # In the shape of SQLite's iterdump, which the tests compare line by line.
            rows.extend(f'INSERT INTO "{table}" VALUES{row!r}'
                        for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY 1').fetchall())
    return rows


class _Raw:
    """A plain connection to a PostgreSQL store taking `?` parameters, as a test written for
    sqlite3 uses it (autocommit: each statement is its own transaction)."""

    def __init__(self, url: str) -> None:
        import psycopg

        self._conn = psycopg.connect(url, autocommit=True)

    def execute(self, sql: str, params=()):
        return self._conn.execute(sql.replace("?", "%s"), params)

    def commit(self) -> None:
        pass

    def close(self) -> None:
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def raw_connect(location):
    """A DB-API connection to the test's store, on either back-end (another program's writes)."""
    if isinstance(location, str):
        return _Raw(location)
    import sqlite3

    return sqlite3.connect(location)
