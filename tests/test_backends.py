"""The back-end interface (`store.backends.base.Backend`): one typed interface, two implementations,
and nothing outside `store/backends/` that tells the back-ends apart by looking at the database
object or the store's location."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from store.backends.base import Backend
from store.backends.postgres_backend import PostgresBackend
from store.backends.sqlite import SqliteBackend

ROOT = Path(__file__).resolve().parent.parent
# A back-end told apart by duck typing or by its location's spelling.
SNIFFING = re.compile(r"\bhasattr\([^)]*\bdb\b|\bgetattr\([^)]*\bdb\b|\bis_url\(|hasattr\(connection")


def test_both_back_ends_implement_every_operation():
    for backend in (SqliteBackend, PostgresBackend):
        assert not inspect.isabstract(backend), backend.__abstractmethods__
        assert issubclass(backend, Backend)


def test_nothing_outside_the_back_ends_sniffs_which_one_it_has():
    found = []
    for path in [*ROOT.glob("store/**/*.py"), *ROOT.glob("tui/**/*.py")]:
        if "store/backends/" in path.as_posix():
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if SNIFFING.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


@pytest.mark.parametrize("backend", [SqliteBackend, PostgresBackend])
def test_the_spellings_of_each_back_end(backend):
    b = backend.__new__(backend)
    assert b.marks(3) == ", ".join([backend.param] * 3)
    assert "memory.title" in b.nocase("memory.title")
    assert "x" in b.greatest("x", "0") and "x" in b.least("x", "1")
    assert b.insert_ignore("memory_pending", ("memory_id",)).startswith("INSERT")
