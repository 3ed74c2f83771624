"""Opening a store: which one (`--db`, MEMDECK_DB, else the default file), and by which back-end
(`store.backends.choice`). The SQLite file's own checks live in `store.backends.sqlite_file`,
PostgreSQL's in `store.backends.postgres`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from peewee import Database

from store.backends.base import Backend
from store.backends.choice import backend_class, location, names_file
# Re-exported: the SQLite file's checks, as doctor and the tests reach them.
from store.backends.sqlite_file import copy_store, inspect_store, refuse_non_file  # noqa: F401
from store.engine import migrations
from store.engine.errors import StoreError
from store.engine.models import database as database_proxy


def default_db_path() -> Path | str:
    """The store memdeck opens without --db: MEMDECK_DB (a path, or a PostgreSQL URL), else the
    default file."""
    if env := os.environ.get("MEMDECK_DB"):
        return location(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memdeck" / "memdeck.db"


def open_backend(path: Path | str, *, target_version: int = migrations.SCHEMA_VERSION) -> tuple[Backend, Path | None]:
    """Open (creating if needed) the store at `path` on its back-end, migrated to `target_version`:
    the back-end and the path of the backup made before migrating, if one was (SQLite only; a
    server keeps its own backups). `target_version` below the newest exists for tests that build
    an old store."""
    return backend_class(path).open(path, target_version=target_version)


def connect(path: Path | str, *, target_version: int = migrations.SCHEMA_VERSION) -> tuple[Database, Path | None]:
    """`open_backend`, for a caller that wants the Peewee database alone."""
    backend, backup = open_backend(path, target_version=target_version)
    return backend.db, backup


def check_store_folder(path: Path) -> None:
    """A store named by the user (--db, MEMDECK_DB) is created only in a folder that exists:
    a typo in the folder would otherwise look like a store that lost everything. (A URL such as
    `postgresql://…` names no folder.)"""
    if not names_file(path) or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:/", str(path)):
        return
    folder = path.expanduser().parent
    if not path.expanduser().exists() and not folder.is_dir():
        raise StoreError(f"{path}: the folder {folder} does not exist; no store was created. "
                         "Check the path, or create the folder first")


def bind(db: Database) -> None:
    """Point the models at `db`, a store just opened (`store.engine.models.StoreDatabase`)."""
    database_proxy.bind(db)


def unbind(db: Database) -> None:
    """`db` was closed: the models go back to the store opened before it that is still open
    (a long-lived store that opened and closed another, as an evaluation's scratch store)."""
    database_proxy.unbind(db)
