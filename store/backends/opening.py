"""Opening a store on its back-end (`store.backends.choice`): creating it if needed and migrating
it to the schema this memdeck needs. The SQLite file's own checks live in
`store.backends.sqlite_file`, PostgreSQL's in `store.backends.postgres`.
"""

from __future__ import annotations

import re
from pathlib import Path

from peewee import Database

from store.backends import migrations
from store.backends.base import Backend
from store.backends.choice import backend_class, names_file
from store.engine.errors import StoreError


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
