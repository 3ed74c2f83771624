"""Which store memdeck opens (`--db`, MEMDECK_DB, else the default file), and the models' binding
to the store just opened. Opening it on its back-end is `store.backends.opening`'s.
"""

from __future__ import annotations

from pathlib import Path

from peewee import Database

from store.engine.models import database as database_proxy
from store.engine.ports import wired
from store.engine import environment


def default_db_path() -> Path | str:
    """The store memdeck opens without --db: MEMDECK_DB (a path, or a PostgreSQL URL), else the
    default file."""
    if env := environment.store_location():
        return wired().location(env)
    return environment.data_home() / "memdeck" / "memdeck.db"


def bind(db: Database) -> None:
    """Point the models at `db`, a store just opened (`store.engine.models.StoreDatabase`)."""
    database_proxy.bind(db)


def unbind(db: Database) -> None:
    """`db` was closed: the models go back to the store opened before it that is still open
    (a long-lived store that opened and closed another, as an evaluation's scratch store)."""
    database_proxy.unbind(db)
