"""Files memdeck must refuse or report, made for the tests of opening a store and of `doctor`:
random bytes, a truncated SQLite file, a zeroed header, another program's database, a store of a
newer memdeck, and a store with garbage in its middle pages."""

from __future__ import annotations

import random
import sqlite3

from store import Config, Store
from store.backends.migrations import SCHEMA_VERSION


def _open(path, clock) -> Store:
    return Store.open(path, project="demo", clock=clock, config=Config.defaults())


def write_random(path):
    path.write_bytes(random.Random(7).randbytes(8192))


def write_truncated(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memory (id TEXT, content TEXT)")
    conn.executemany("INSERT INTO memory VALUES (?, ?)", [(str(i), "x" * 500) for i in range(400)])
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def write_zeroed_header(path, clock):
    with _open(path, clock) as store:
        store.add("Jellyfin takes 60s to start", type="timing")
    data = path.read_bytes()
    path.write_bytes(b"\x00" * 100 + data[100:])


def write_foreign(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.org')")
    conn.commit()
    conn.close()


def write_newer(path, clock):
    with _open(path, clock) as store:
        store.add("Jellyfin takes 60s to start", type="timing")
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()


def write_damaged_pages(path, clock) -> bytes:
    """A store of 400 memories whose middle third of pages is garbage; returns its bytes."""
    with _open(path, clock) as store:
        store.add_many({"content": f"Memory number {i} about the {i % 7} cache", "type": "context"}
                       for i in range(400))
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(len(data) // 3 // page * page, 2 * len(data) // 3 // page * page, page):
        data[start + 8:start + page] = random.Random(start).randbytes(page - 8)
    path.write_bytes(bytes(data))
    return bytes(data)
