"""Peewee without psycopg until a PostgreSQL store needs it.

Peewee imports psycopg at its own import whenever psycopg is installed: about 100 ms, which the
PostgreSQL extra would add to every command, those on a SQLite file too (`memdeck prime` in a
hook). So memdeck imports Peewee with psycopg hidden, and hands Peewee psycopg's modules when a
PostgreSQL store is opened (`store.backends.postgres`).
"""

from __future__ import annotations

import sys


def import_peewee() -> None:
    if "peewee" in sys.modules:
        return
    hide = "psycopg" not in sys.modules
    if hide:
        sys.modules["psycopg"] = None  # `import psycopg` raises ImportError: Peewee goes without
    try:
        import peewee  # noqa: F401
    finally:
        if hide and sys.modules.get("psycopg", 0) is None:
            del sys.modules["psycopg"]


def give_peewee_psycopg() -> None:
    """What Peewee's import would have taken from psycopg, had it not been hidden."""
    import peewee

    if getattr(peewee, "psycopg", None) is not None:
        return
    import psycopg
    from psycopg.pq import TransactionStatus
    from psycopg.types.json import Json, Jsonb

    # Set by name: these are the names Peewee looks up in its own module, which it never declares.
    for name, value in (("psycopg", psycopg), ("TransactionStatus", TransactionStatus),
                        ("Json_pg3", Json), ("Jsonb_pg3", Jsonb)):
        setattr(peewee, name, value)
