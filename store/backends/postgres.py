"""A store on a PostgreSQL server: its URL (`is_url`, `location`, `password_of`, `redacted`),
connecting (`PgDatabase`, `connect`), temporary databases and live change notices (`listen`).
The back-end's operations are `store.backends.postgres_backend.PostgresBackend`; full text and
BM25 in `postgres_search`, a large import in `postgres_bulk`, the schema in `postgres_schema`.

psycopg 3 is an optional extra (`pip install 'memdeck[postgres]'`); without it a PostgreSQL URL
is refused with a message saying so.
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

from peewee import PostgresqlDatabase, __exception_wrapper__  # type: ignore[attr-defined]  # outside its __all__

from store.backends import postgres_schema
from store.engine.redaction import hide_passwords
from store.engine.errors import StoreError
from store.engine.peewee_import import give_peewee_psycopg

# The advisory lock every transaction of a store takes first (any number that is memdeck's own).
WRITE_LOCK = 7_316_843_191
URL = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)


def is_url(location: object) -> bool:
    """Whether a `--db` / MEMDECK_DB value names a PostgreSQL server rather than an SQLite file."""
    return isinstance(location, str) and bool(URL.match(location))


def location(text: str):
    """A `--db` value as memdeck keeps it: a URL stays text (a `Path` would fold its `//`), any
    other value is an SQLite path."""
    from pathlib import Path

    return text if is_url(text) else Path(text)


# A URL's user information: everything up to its last `@` (a password typed with an `@`, a `/`
# or a `#` in it, not percent-encoded, is still all of it).
_USERINFO = re.compile(r"^(postgres(?:ql)?://)(\S*)@", re.IGNORECASE)
_PASSWORD_PARAM = re.compile(r"[?&]([^=&]*)=([^&]*)")


# Parameters of a PostgreSQL URL a repository's `.memdeck.yml` may give (`team.db`): none names
# a file on this machine (passfile, sslkey, sslrootcert, service...), and a host is no path.
REPOSITORY_URL_PARAMS = frozenset({"sslmode", "connect_timeout", "application_name", "target_session_attrs",
                                   "gssencmode", "channel_binding", "dbname", "user", "port", "host"})


def team_url_problem(url: str, *, from_repository: bool) -> str | None:
    """Why `url` may not be a team store's URL (setting `team.db`), or None: it must be a
    PostgreSQL URL; from a repository's config, one that names no file on this machine."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    if not is_url(url):
        return "must be a PostgreSQL URL (postgresql://user@host/database), not a file path"
    if from_repository:
        parts = urlsplit(url)
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key not in REPOSITORY_URL_PARAMS or "/" in value or "\\" in value:
                return (f"may not set {key!r} in a repository's config (it could name a file on this "
                        "machine); set the team store in your own config")
        host = unquote(parts.netloc)
        if "/" in host or "\\" in host:
            return f"names a path as its host ({redacted(url)}); set a socket in your own config"
    return None


# A team store is read inside hooks and primes, on a server that may be slow, silent or a
# stranger's: its connections give up connecting after 2 s (libpq's least), a statement after 3 s
# (past feedback's own 2 s wait for the write lock) and a wait for a lock after 1 s, whatever the URL says; the layer is then left out, in one line.
TEAM_CONNECT_TIMEOUT_S = 2
TEAM_STATEMENT_TIMEOUT_MS = 3000
TEAM_LOCK_TIMEOUT_MS = 1000


def with_team_timeouts(url: str) -> str:
    """`url` with the team store's connect, statement and lock timeouts (any it named replaced)."""
    from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    params = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
              if k not in ("connect_timeout", "options")]
    options = " ".join(v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k == "options")
    params.append(("connect_timeout", str(TEAM_CONNECT_TIMEOUT_S)))
    params.append(("options", f"{options} -c statement_timeout={TEAM_STATEMENT_TIMEOUT_MS} "
                              f"-c lock_timeout={TEAM_LOCK_TIMEOUT_MS}".strip()))
    return urlunsplit(parts._replace(query=urlencode(params, quote_via=quote)))


def url_server(url: str) -> str:
    """`host:port` of a PostgreSQL URL (the port 5432 when it names none; `localhost` for none)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        port = parts.port or 5432
    except ValueError:
        port = 0
    return f"{(parts.hostname or 'localhost').lower()}:{port}"


def driver_url(url: str) -> str:
    """The URL as Peewee hands it to the driver: Peewee passes a URL as one only when it starts
    with `postgresql://` (any other it takes for a database name, losing host, port and user),
    so the `postgres://` form and any capitals are written that way."""
    return URL.sub("postgresql://", url, count=1)


def password_of(url: str) -> str | None:
    """The password a URL holds, as typed (user information or a `password=` parameter, its
    key percent-encoded or not)."""
    from urllib.parse import unquote

    match = _USERINFO.match(url)
    if match and ":" in match.group(2):
        return match.group(2).split(":", 1)[1]
    for key, value in _PASSWORD_PARAM.findall(url):
        if unquote(key).strip().lower() == "password":
            return value
    return None


def redacted(url: str) -> str:
    """The URL (or any message holding one) without its password, for messages:
    `user:***@host`, `?password=***`, `password=***`. One function: `hide_passwords`."""
    return hide_passwords(url)


def unreachable(url: str, exc: BaseException, doing: str = "cannot connect to the PostgreSQL server") -> StoreError:
    """The error for a server that refused or could not be reached, without the URL's password:
    in the URL (redacted) nor in the driver's words (which quote a host or port it could not
    parse, and a password with an `@` in it, not percent-encoded, is parsed as part of the host)."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    password = password_of(url)
    if password:
        pieces = {password, *(p for p in re.split(r"[@/?#:]", password) if len(p) >= 2)}
        for piece in sorted(pieces, key=len, reverse=True):
            reason = reason.replace(piece, "***")
        if re.search(r"[@/?#]", password):
            reason += " (a password holding @ / ? or # must be percent-encoded in the URL: %40 %2F %3F %23)"
    return StoreError(f"{redacted(url)}: {doing}: {reason}")


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise StoreError("a PostgreSQL store needs psycopg 3: pip install 'memdeck[postgres]'") from None
    give_peewee_psycopg()
    return psycopg


class PgDatabase(PostgresqlDatabase):
    """Peewee's PostgreSQL database: writers take turns (an advisory lock), and a large import's
    rows are vacuumed after it commits."""

    def _connect(self):
        psycopg = _psycopg()
        conn = super()._connect()
        conn.adapters.register_dumper(bool, _bool_dumper(psycopg))
        # psycopg prepares a query run five times, and PostgreSQL may then plan it once for any
        # parameters: for a full-text match read newest first, a backward walk of the rowid
        # index filtering every row (107 ms at 100,000 memories for a query matching 1,225)
        # where the GIN index with these words finds them in 9 ms. Planned at every run instead.
        conn.execute("SET plan_cache_mode = force_custom_plan")
        return conn

    def begin(self, isolation_level=None):
        # Writers take turns, as on SQLite (whose write lock memdeck takes at BEGIN): a write
        # that reads first (is this text already stored? is this id free?) sees every earlier
        # write. Reads outside a transaction never wait.
        super().begin(isolation_level)
        try:
            with __exception_wrapper__:  # psycopg's error as Peewee's, as every statement's
                self.cursor().execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        except Exception:
            # Waited past a `lock_timeout` (store.layers.feedback), or interrupted: the
            # transaction peewee has not counted yet is ended here, not left aborted under the
            # next statement.
            self.rollback()
            raise

    # Set by a large import (`writing_in_bulk`, as the table's owner): its rows are vacuumed once
    # it commits. Until a VACUUM marks their pages all-visible, every index-only scan over them
    # (the workbench's counts) fetches each row from the table: at a million imported memories
    # its first screen took 230 ms instead of 20 (first paint 1.4 s instead of 0.45) for the
    # minute or so autovacuum took to come round. VACUUM cannot run inside a transaction; it
    # skips the pages already all-visible (0.1 s for 100,000 new memories, 1.3 s for a million)
    # and takes no lock that readers or writers wait for. With ANALYZE too when the import
    # grew the table by more than a tenth of what the planner last counted (autovacuum's own
    # measure of stale statistics): after ten imports of 100,000, statistics gathered at the
    # first put every rowid past 100,000 beyond the histogram, and the window a broad search
    # reads its newest matches from (`newest_matches`) was planned as a backward walk of the
    # rowid index (87 ms for `billing worker` at a million, 30 ms once analyzed).
    # The events' statistics are left to autovacuum: they are read by memory, through an index,
    # and analyzing them too cost a 100,000-memory import at a million another 0.12 s.
    _vacuum_after_commit: tuple[str, ...] = ()

    def commit(self):
        super().commit()
        statements, self._vacuum_after_commit = self._vacuum_after_commit, ()
        try:
            for statement in statements:
                self.cursor().execute(statement)
        except Exception:  # the import has committed; autovacuum will come round instead
            pass

    def rollback(self):
        self._vacuum_after_commit = ()
        super().rollback()

    def execute_sql(self, sql, params=None):
        if params:
            return super().execute_sql(sql, params)
        # A statement without parameters runs as written, a `%` in it being text as on SQLite
        # (psycopg reads `%` as a parameter mark whenever parameters are given, even none).
        with __exception_wrapper__:
            cursor = self.cursor()
            cursor.execute(sql)
        return cursor

    # A large import's state (`store.backends.postgres_bulk.writing_in_bulk`): whether new
    # memories are marked pending by their trigger (not while the bulk path writes their words
    # itself), what computes new memories' full-text columns in this process (for the table's
    # owner), and the thread running the import's COPYs.
    bulk_active = False
    fts_builder = None
    _bulk_writer = None

    def cursor(self, named_cursor=None):
        # Any other statement waits until the COPYs handed to the bulk writer are done (and
        # raises what failed in them).
        if self._bulk_writer is not None:
            self._bulk_writer.wait()
        return super().cursor()


def _bool_dumper(psycopg):
    """memdeck's flags are integers (0/1) on both back-ends: `protected = 1` reads the same."""
    from psycopg.adapt import Dumper

    class BoolAsInt(Dumper):
        oid = psycopg.adapters.types["int2"].oid

        def dump(self, obj):
            return b"1" if obj else b"0"

    return BoolAsInt


# -- connecting ---------------------------------------------------------------------------------

def connect(url: str, *, target_version: int | None = None) -> PgDatabase:
    """Open the store at `url`, migrated to `target_version` (the newest by default)."""
    _psycopg()
    db = PgDatabase(driver_url(url), autoconnect=True)
    try:
        db.connect()
    except Exception as exc:  # psycopg's OperationalError, wrapped by Peewee
        raise unreachable(url, exc) from None
    postgres_schema.migrate(db, target_version)
    return db


# -- temporary databases ---------------------------------------------------------------------------

def with_database(url: str, name: str) -> str:
    """`url` naming the database `name` on the same server, as the same user."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


@contextmanager
def temporary_database(url: str) -> Iterator[str]:
    """A new, empty database on the server of `url` (its user must be allowed to create
    databases), dropped afterwards: the URL to open it by."""
    import uuid

    psycopg = _psycopg()
    name = f"memdeck_tmp_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        raise unreachable(url, exc, "cannot create a temporary database") from None
    try:
        yield with_database(url, name)
    finally:
        from store.engine.models import database as proxy

        if proxy.obj is not None and getattr(proxy.obj, "database", None) == driver_url(with_database(url, name)):
            proxy.obj.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- live changes ------------------------------------------------------------------------------------

def listen(url: str, on_change: Callable[[], None]) -> Callable[[], None]:
    """Call `on_change()` (on a thread of its own) soon after any connection commits a change to
    the store at `url`: every write's trigger notifies the `memdeck` channel, delivered at
    commit. Returns the function that stops listening."""
    psycopg = _psycopg()
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("LISTEN memdeck")
    stop = threading.Event()

    def run() -> None:
        try:
            while not stop.is_set():
                got = False
                for _ in conn.notifies(timeout=0.2, stop_after=1):
                    got = True
                if got and not stop.is_set():
                    on_change()
        except Exception:  # the server went away: the view stays as it is, as on a lost file
            pass
        finally:
            conn.close()

    thread = threading.Thread(target=run, name="memdeck-listen", daemon=True)
    thread.start()

    def stop_listening() -> None:
        stop.set()
        thread.join(2)

    return stop_listening
