"""Crash safety: a process killed with SIGKILL in the middle of a bulk edit, an import, an ingest
or a decay run leaves a sound store (SQLite's integrity check, the full-text index agreeing with
the memory table, no orphaned rows: `store.backends.doctor.check`) in which the operation either fully
happened or not at all. Ingest commits batch by batch: each batch is whole or absent, and the
ingest run again afterwards ends with exactly the memories of an ingest never interrupted.

Each kill point is a real child process (forked, so it starts in microseconds instead of the
0.4 s an interpreter needs to import memdeck) killed at a random moment of its operation.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from store import Config, Store
from store.engine.clock import DAY
from store.engine.curation import Curator
from store.backends.doctor import check
from store.capture.ingest import IngestOptions, ingest_file
from store.interop.transfer import import_file
from store.engine.lifecycle import run_decay
from tests.data_support import worked_on

pytestmark = pytest.mark.slow  # processes killed at many points of each operation

KILLS_PER_OPERATION = 20
WORDS = [a + b + c for a in ("ka", "lo", "mi", "ne", "su", "ta", "vo", "ri")
         for b in ("der", "mon", "sel", "tar", "quin", "bos") for c in ("", "a", "ex", "ium", "or", "ing")]


def distinct_text(rng: random.Random, n: int) -> str:
    """Texts that share words but never enough to reinforce one another."""
    return f"note {n}: " + " ".join(rng.choice(WORDS) for _ in range(10))


def open_store(path: Path) -> Store:
    return Store.open(path, project="demo", config=Config.defaults())


def seed_store(path: Path, memories: int, *, age_days: float = 0) -> list[str]:
    rng = random.Random(1)
    with open_store(path) as store:
        created_at = store.now() - age_days * DAY
        results = store.add_many({"content": distinct_text(rng, i), "type": "context", "created_at": created_at}
                                 for i in range(memories))
        worked_on(store, created_at, int(age_days))  # decay counts the days the project was worked on
        store.db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return [r.memory.id for r in results]


def scalar(path: Path, sql: str, args: tuple = ()) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, args).fetchone()[0]
    finally:
        conn.close()


def kill_during(operation, path: Path, after: float) -> float | None:
    """Run `operation(store)` in a child process on `path`, SIGKILL it `after` seconds in.
    None if it was killed, else the seconds it took to finish first."""
    pid = os.fork()
    if pid == 0:  # the child: open, operate, and leave without running the parent's cleanup
        code = 0
        try:
            with open_store(path) as store:
                operation(store)
        except BaseException:
            code = 1
        os._exit(code)
    started = time.monotonic()
    while time.monotonic() < started + after:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0, "the operation failed on its own"
            return time.monotonic() - started
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 0:  # it finished between the last look and the kill
        return time.monotonic() - started
    assert code == -signal.SIGKILL, "the operation failed on its own"
    return None


def assert_sound(path: Path) -> None:
    report = check(path)
    assert report.ok, [f.message for f in report.findings if not f.ok]
    # the index holds one document per memory, and finds the newest memory by its own words
    assert scalar(path, "SELECT COUNT(*) FROM memory_fts_docsize") == scalar(path, "SELECT COUNT(*) FROM memory")
    newest = scalar(path, "SELECT rowid FROM memory ORDER BY rowid DESC LIMIT 1")
    words = scalar(path, "SELECT content FROM memory WHERE rowid = ?", (newest,)).split()[:4]
    query = " ".join('"' + w.replace('"', '""') + '"' for w in words)
    assert scalar(path, "SELECT COUNT(*) FROM memory_fts WHERE memory_fts MATCH ? AND rowid = ?",
                  (query, newest)) == 1


def run_kills(tmp_path: Path, base: Path, operation, verify, *, kills: int = KILLS_PER_OPERATION,
              seed: int = 8) -> tuple[int, int]:
    """Time the operation whole once, then kill it at `kills` random points; `verify(path,
    killed)` checks each outcome. Returns (runs killed mid-way, runs that finished first)."""
    timing = tmp_path / "timing.db"
    shutil.copy(base, timing)
    duration = kill_during(operation, timing, after=120)
    assert duration is not None
    verify(timing, killed=False)
    for leftover in tmp_path.glob("timing.db*"):
        leftover.unlink()
    rng = random.Random(seed)
    killed = finished = 0
    for n in range(kills):
        work = tmp_path / f"kill-{n}.db"
        shutil.copy(base, work)
        # From the first instant (the store barely open) to just past the end.
        took = kill_during(operation, work, after=rng.uniform(0, duration * 1.1))
        if took is None:
            killed += 1
        else:
            finished += 1
            duration = min(duration, took)  # a busy machine made the first run slow
        assert_sound(work)
        verify(work, killed=True)
        for leftover in tmp_path.glob(f"kill-{n}.db*"):
            leftover.unlink()
    assert killed >= kills // 4  # kill points land inside the operation, not after it
    return killed, finished


# Each scenario builds its store and returns (base store, the operation, its check).

def bulk_edit(tmp_path: Path):
    """A bulk edit (tagging 800 memories) is one transaction: all tagged, or none."""
    base = tmp_path / "base.db"
    ids = seed_store(base, 800)

    def bulk(store):
        Curator(store).add_tags(ids, "reviewed")

    def verify(path, killed):
        tagged = scalar(path, "SELECT COUNT(*) FROM memory WHERE tags LIKE '%\"reviewed\"%'")
        edited = scalar(path, "SELECT COUNT(*) FROM event WHERE kind = 'edited' AND actor = 'ui'")
        assert (tagged, edited) in ((0, 0), (len(ids), len(ids)))
        assert killed or tagged == len(ids)

    return base, bulk, verify


def an_import(tmp_path: Path):
    """An import (1,800 memories, with and without ids) is one transaction: all, or none."""
    base = tmp_path / "base.db"
    seed_store(base, 200)
    rng = random.Random(2)
    # Memories with ids (inserted in bulk) and without (each through reinforcement's lookup).
    incoming = [{"id": f"mem-1700000000-{i:04x}", "type": "fix", "content": distinct_text(rng, 10_000 + i)}
                for i in range(1500)]
    incoming += [{"type": "pitfall", "content": distinct_text(rng, 20_000 + i)} for i in range(300)]
    document = tmp_path / "import.json"
    document.write_text(json.dumps({"version": 1, "memories": incoming}))

    def verify(path, killed):
        memories = scalar(path, "SELECT COUNT(*) FROM memory")
        imported = scalar(path, "SELECT COUNT(*) FROM event WHERE kind = 'imported'")
        # one `imported` event per memory, and one more for each without an id: `Store.add`
        # records its creation by import before the importer notes where it came from
        assert (memories, imported) in ((200, 0), (200 + len(incoming), len(incoming) + 300))
        assert killed or memories == 200 + len(incoming)

    return base, lambda store: import_file(store, str(document)), verify


def an_ingest(tmp_path: Path):
    """An ingest commits batch by batch: each batch whole or absent, and running it again
    afterwards ends with exactly the memories of an ingest never interrupted."""
    base = tmp_path / "base.db"
    seed_store(base, 50)
    rng = random.Random(3)
    facts = [distinct_text(rng, 30_000 + i) for i in range(400)]
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"MEMORY:fix:{fact}\n\n" for fact in facts))
    lines = notes.read_text().split("\n")
    options = IngestOptions(format="text", session_id="notes", batch_lines=40)

    def markers_in(path) -> int:
        conn = sqlite3.connect(path)
        try:
            meta = conn.execute("SELECT meta FROM session WHERE id = 'notes'").fetchone()
        finally:
            conn.close()
        state = next(iter(json.loads(meta[0]).get("ingest", {}).values()), {}) if meta else {}
        return sum(1 for line in lines[:int(state.get("lines", 0))] if line.startswith("MEMORY:"))

    def verify(path, killed):
        # every committed batch is whole: the memories are exactly the markers of the lines
        # the session's saved state says were ingested
        ingested = scalar(path, "SELECT COUNT(*) FROM memory WHERE session_id = 'notes'")
        assert ingested == markers_in(path)
        assert killed or ingested == len(facts)
        with open_store(path) as store:  # run it again, to the end
            ingest_file(store, notes, options)
        conn = sqlite3.connect(path)
        try:
            contents = [row[0] for row in conn.execute("SELECT content FROM memory WHERE session_id = 'notes'")]
        finally:
            conn.close()
        assert sorted(contents) == sorted(facts)  # nothing lost, nothing twice

    return base, lambda store: ingest_file(store, notes, options), verify


def a_decay_run(tmp_path: Path):
    """A decay run (1,500 memories due) is one transaction: every memory decayed, or none."""
    base = tmp_path / "base.db"
    ids = seed_store(base, 1500, age_days=400)

    def verify(path, killed):
        decayed = scalar(path, "SELECT COUNT(*) FROM event WHERE kind = 'decayed'")
        marked = scalar(path, "SELECT COUNT(*) FROM memory WHERE decayed_at IS NOT NULL")
        lowered = scalar(path, "SELECT COUNT(*) FROM memory WHERE confidence < 0.6")
        assert (decayed, marked, lowered) in ((0, 0, 0), (len(ids), len(ids), len(ids)))
        assert killed or decayed == len(ids)

    return base, run_decay, verify


SCENARIOS = {"bulk edit": bulk_edit, "import": an_import, "ingest": an_ingest, "decay run": a_decay_run}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_an_operation_killed_anywhere_leaves_a_sound_store_and_happened_whole_or_not_at_all(tmp_path, scenario):
    run_kills(tmp_path, *SCENARIOS[scenario](tmp_path))
