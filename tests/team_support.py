"""A PostgreSQL team store for the workbench's tests (docs/team.md): memdeck's roles installed,
ana a reader and bo a writer. `as_member(url, user)` is its URL as that member."""

from __future__ import annotations

import pytest

from store.backends import postgres_roles
from store.backends.opening import connect


@pytest.fixture
def team(postgres_server) -> str:
    """The team store's URL, as its owner."""
    owner = postgres_server.fresh_database()
    db, _ = connect(owner)
    try:
        postgres_roles.install(db)
        postgres_roles.grant(db, "ana", "reader")
        postgres_roles.grant(db, "bo", "writer")
    finally:
        db.close()
    return owner


def as_member(url: str, user: str) -> str:
    return url.replace("postgres@", f"{user}@", 1)


def at_once(work, names) -> list[BaseException]:
    """Run `work(name, start)` on a thread per name, each waiting at `start` (a barrier) so
    their writes overlap; the failures, raised on the threads, for the test to assert on."""
    import threading

    start = threading.Barrier(len(names))
    failures: list[BaseException] = []

    def run(name: str) -> None:
        try:
            work(name, start)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures
