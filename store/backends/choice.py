"""Which back-end a store's location names: a PostgreSQL URL (`postgresql://…`) the server's,
anything else an SQLite file. The one place memdeck tells them apart."""

from __future__ import annotations

from pathlib import Path

from store.backends import postgres
from store.backends.base import Backend
from store.backends.sqlite import SqliteBackend


def backend_class(where: Path | str) -> type[Backend]:
    """The back-end of the store at `where` (a path or a URL)."""
    if not postgres.is_url(where):
        return SqliteBackend
    # Imported only for a server: its full text, bulk and doctor modules are no SQLite command's.
    from store.backends.postgres_backend import PostgresBackend

    return PostgresBackend


def location(text: str) -> Path | str:
    """A `--db` value as memdeck keeps it (`store.backends.postgres.location`)."""
    return postgres.location(text)


def names_file(where: Path | str) -> bool:
    """Whether `where` names a store file (rather than a server)."""
    return backend_class(where) is SqliteBackend


def same_store(a: Path | str, b: Path | str) -> bool:
    """Whether two locations name the same store."""
    if str(a) == str(b):
        return True
    if backend_class(a) is not SqliteBackend or backend_class(b) is not SqliteBackend:
        return False
    return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()


def exists(where: Path | str) -> bool:
    """Whether a store may be at `where` without creating one: a server is asked when opened; a
    file must be there."""
    return backend_class(where) is not SqliteBackend or Path(where).expanduser().exists()
