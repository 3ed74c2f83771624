"""Why a store could not be read or written, told as it is: a read-only store file, a read-only
folder or file system, a full disk, a lock held past the busy timeout, and damage are different
troubles with different remedies, and only damage calls for a backup.

`describe(exc, path)` turns an SQLite error met on the store at `path` into a `StoreTrouble`
(a `StoreError`) whose `kind` names the trouble and whose message says what to do.
`access_trouble(path)` finds the first three without writing anything, for `memdeck doctor`.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from store.engine.errors import StoreError

READ_ONLY_FILE = "read-only file"
READ_ONLY_FOLDER = "read-only folder"
READ_ONLY_FILESYSTEM = "read-only file system"
FULL = "full"
LOCKED = "locked"
DAMAGED = "damaged"
UNAVAILABLE = "unavailable"  # anything else: the message is SQLite's own

BUSY_TIMEOUT_S = 30


class StoreTrouble(StoreError):
    """A store that exists but cannot be read or written just now, and why (`kind`)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def sqlite_error(exc: BaseException) -> sqlite3.Error | None:
    """The SQLite error behind `exc` (Peewee wraps them; its first argument is the original)."""
    if isinstance(exc, sqlite3.Error):
        return exc
    for candidate in (*getattr(exc, "args", ()), exc.__cause__, exc.__context__):
        if isinstance(candidate, sqlite3.Error):
            return candidate
    return None


def access_trouble(path: Path) -> StoreTrouble | None:
    """A reason the store at `path` cannot be written, found from the file system alone."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return StoreTrouble(READ_ONLY_FILESYSTEM, f"{path}: the store is on a read-only file system: "
                                "memdeck cannot write it (nor, as SQLite needs, the -wal and -shm files "
                                "beside it). Copy it somewhere writable and use --db")
    except OSError:
        pass
    if path.exists() and not os.access(path, os.W_OK):
        return StoreTrouble(READ_ONLY_FILE, f"{path}: the store file is read-only (not damaged): "
                            f"memdeck can read it but not change it. Make it writable (chmod u+w {path}) "
                            "or choose another store with --db")
    beside = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    if folder.exists() and not os.access(folder, os.W_OK) and not all(p.exists() for p in beside):
        return StoreTrouble(READ_ONLY_FOLDER, f"{path}: its folder {folder} is read-only (the store is not "
                            f"damaged): SQLite must create {path.name}-wal and {path.name}-shm beside the "
                            "store, even to read it. Make the folder writable or move the store")
    return None


def describe(exc: BaseException, path: Path | str) -> StoreTrouble:
    """What an SQLite error met on the store at `path` means, in words that say what to do."""
    if isinstance(path, str) and "://" in path:
        # A PostgreSQL URL: never a `Path` (which folds `//`), never shown with its password.
        from store.engine.redaction import hide_passwords

        return StoreTrouble(UNAVAILABLE, hide_passwords(f"{path}: the store could not be read or written: {exc}"))
    path = Path(path)
    error = sqlite_error(exc) or exc
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM,
                   sqlite3.SQLITE_AUTH) or (primary == sqlite3.SQLITE_IOERR and access_trouble(path)):
        found = access_trouble(path)
        if found is not None:
            return found
    if primary == sqlite3.SQLITE_FULL or (primary == sqlite3.SQLITE_IOERR and disk_full(path)):
        return full_disk(path)
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreTrouble(LOCKED, f"{path}: another process held the store's lock for longer than "
                            f"the {BUSY_TIMEOUT_S} s memdeck waits (the store is not damaged); nothing was "
                            "written. Run the command again when it has finished")
    if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return StoreTrouble(DAMAGED, f"{path}: the store is damaged ({error}): `memdeck doctor` says "
                            "where; restore a backup or choose another store with --db")
    return StoreTrouble(UNAVAILABLE, f"{path}: the store could not be read or written: {error}")


def full_disk(path: Path) -> StoreTrouble:
    return StoreTrouble(FULL, f"{path}: the disk holding the store is full (the store is not damaged); "
                        "nothing was written. Free some space and run the command again")


def disk_full(path: Path) -> bool:
    try:
        stat = os.statvfs(path.parent if str(path.parent) else ".")
    except OSError:
        return False
    return stat.f_bavail == 0
