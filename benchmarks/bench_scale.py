"""Benchmark memdeck at a million memories over 100 projects: bulk import, search, a listing's
first page, `prime` in-process and the workbench's first paint.

The store is built through the import path (`store.interop.importer.import_document`, which
writes through `store.interop.import_writes`): generated memories in memdeck's JSON shape, `--chunk` memories per
import (each one transaction), one project (`bench`) holding a tenth of them and 99 others
sharing the rest. The build is timed: that is the bulk import rate at scale. `--json N` also
imports a JSON file of N memories into an empty store, parsing and checking included.

    .venv/bin/python benchmarks/bench_scale.py [--memories 1000000] [--json 100000] [--vectors]
        [--db postgresql://user@/db?host=/run/dir&port=N]

Wall time and CPU time (`time.process_time`: this process, every thread) are both reported: the
machine is shared, and CPU time is what a busy machine inflates least. The store is kept under
$MEMDECK_BENCH_DIR (default /tmp/memdeck-bench-scale) and reused when it exists; `--rebuild`
builds it again. With `--vectors`, `memdeck reindex` embeds every memory after the build (the
semantic extra), so `prime` is measured with its semantic signal.

With `--db URL` the same store is built and measured in that PostgreSQL database instead (it
must be empty, or hold the store an earlier run built there; `--rebuild` drops and creates the
database again, so its user needs CREATEDB), and the workbench is started with MEMDECK_DB set
to the URL.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_store import TYPES, HATS, TAGS, memory_text, part  # noqa: E402
from paint import first_paint  # noqa: E402

from store import Config, Store  # noqa: E402
from store.backends import postgres  # noqa: E402
from store.retrieval.injection import prime  # noqa: E402
from store.interop.document import ImportDocument, IncomingMemory  # noqa: E402
from store.interop.importer import import_document  # noqa: E402
from store.interop.transfer import import_file  # noqa: E402
from store.browse.paging import ListQuery, read_head  # noqa: E402
from store.engine.records import InjectionContext  # noqa: E402
from store.browse.search import MemoryFilter, list_memories, search  # noqa: E402

PROJECTS = ["bench", *(f"project-{k:02d}" for k in range(1, 100))]
MAIN_SHARE = 0.1  # of the memories, in the project measured
START = 1_700_000_000.0
TASK = "fix the webhook retry timeout in the billing worker queue: parse_invoice flush_cache"
QUERIES = {
    "two words": "socket pool",
    "common two words": "billing worker",
    "identifier": "sync_refund7",
    "identifier part": "refund",
    "prefix as typed": "web",
    "typo (fuzzy titles)": "socket pol leaks conection",
    "pathological": "the",
}
SIZE = (160, 45)
MEMDECK = Path(sys.executable).parent / "memdeck"


def project_of(i: int, n: int) -> str:
    """Memory `i`'s project: the first tenth of every hundred go to `bench`, the rest round the 99."""
    return PROJECTS[0] if i % 100 < MAIN_SHARE * 100 else PROJECTS[1 + i % 99]


def generated(start: int, stop: int, n: int) -> list[IncomingMemory]:
    """Memories `start`..`stop` as an import reads them: fields checked, times as unix seconds."""
    rng = random.Random(start)
    memories = []
    for i in range(start, stop):
        at = START + i * 30.0
        content = memory_text(rng)
        fields = {
            "id": f"mem-{int(at)}-{i:07x}", "project": project_of(i, n), "type": rng.choice(TYPES),
            "content": content, "hat": rng.choice(HATS), "tags": tuple(rng.sample(TAGS, rng.randint(0, 3))),
            "confidence": round(rng.uniform(0.3, 0.95), 2), "source": "explicit",
            "created_at": at, "updated_at": at,
        }
        if i % 3 == 0:
            fields["scope"] = part(rng)
        memories.append(IncomingMemory(fields, f"memories[{i}]"))
    return memories


class Clocks:
    """Wall and CPU seconds of a block."""

    def __enter__(self) -> "Clocks":
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def server_cpu(store) -> float:
    """CPU seconds the PostgreSQL backend serving `store` has used (it runs on this machine,
    readable in /proc as root); 0 for SQLite, which runs in this process."""
    if not postgres.is_url(store.db.database):
        return 0.0
    pid = store.db.execute_sql("SELECT pg_backend_pid()").fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def build(path: Path | str, n: int, chunk: int) -> tuple[float, float]:
    """The store of `n` memories, imported `chunk` at a time; (wall, CPU) seconds of the imports."""
    wall = cpu = 0.0
    with Store.open(path, project="bench", config=Config.defaults()) as store:
        server = server_cpu(store)
        for start in range(0, n, chunk):
            document = ImportDocument("json", "bench_scale", generated(start, min(n, start + chunk), n))
            with Clocks() as clocks:
                summary = import_document(store, document)
            assert len(summary.added) == len(document.memories), summary.skipped[:3]
            wall, cpu = wall + clocks.wall, cpu + clocks.cpu
            done = start + len(document.memories)
            print(f"  {done:>9,} memories: this import {len(document.memories) / clocks.wall:,.0f}/s wall, "
                  f"{len(document.memories) / clocks.cpu:,.0f}/s CPU", flush=True)
        if server_cpu(store):
            print(f"  the PostgreSQL server's CPU for the build: {server_cpu(store) - server:.1f} s")
    return wall, cpu


def json_import(n: int, db: str | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds to import a JSON file of `n` memories into an empty store: a SQLite
    file, or the PostgreSQL database `db` names (which must be empty: its tables are made here)."""
    work = Path(tempfile.mkdtemp(prefix="memdeck-bench-scale-json-"))
    try:
        memories = []
        for m in generated(0, n, n):
            f = dict(m.fields)
            for name in ("created_at", "updated_at"):
                f[name] = datetime.fromtimestamp(f[name], timezone.utc).isoformat().replace("+00:00", "Z")
            f["tags"] = list(f["tags"])
            memories.append(f)
        source = work / "memories.json"
        source.write_text(json.dumps({"format": "memdeck", "version": 1, "project": "bench",
                                      "memories": memories}), encoding="utf-8")
        with Store.open(db or work / "store.db", project="bench", config=Config.defaults()) as store:
            server = server_cpu(store)
            with Clocks() as clocks:
                summary = import_file(store, str(source))
            assert len(summary.added) == n
            if db:
                print(f"  the PostgreSQL server's CPU for the JSON import: {server_cpu(store) - server:.1f} s")
        return clocks.wall, clocks.cpu
    finally:
        shutil.rmtree(work)


def recreate_database(url: str) -> None:
    """Drop the database `url` names and create it again, empty."""
    import psycopg
    from urllib.parse import urlsplit

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(postgres.with_database(url, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def stored_memories(url: str) -> int:
    """How many memories the database `url` names holds (0 if it holds no store yet)."""
    import psycopg

    with psycopg.connect(url) as conn:
        if not conn.execute("SELECT to_regclass('memory') IS NOT NULL").fetchone()[0]:
            return 0
        return conn.execute("SELECT count(*) FROM memory").fetchone()[0]


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """Median wall and CPU milliseconds of `fn()` over `repeat` runs after one warm-up."""
    result = fn()
    walls, cpus = [], []
    for _ in range(repeat):
        with Clocks() as clocks:
            result = fn()
        walls.append(clocks.wall * 1000)
        cpus.append(clocks.cpu * 1000)
    return statistics.median(walls), statistics.median(cpus), result


def first_paint_of(path: Path | str, count: int) -> tuple[float, float]:
    """Seconds from starting `memdeck` in a tmux pane until the pane shows the list's count and
    rows; and the CPU seconds the process had used by then (from /proc). A PostgreSQL store is
    named by MEMDECK_DB, as a team's agents would set it."""
    if postgres.is_url(path):
        command = f"exec env MEMDECK_DB={shlex.quote(str(path))} {MEMDECK} --project bench"
    else:
        command = f"{MEMDECK} --db {path} --project bench"
    ready = lambda screen: f"Memories {count} of {count}" in screen and "The " in screen  # noqa: E731
    with first_paint(f"bench-scale-{os.getpid()}", command, SIZE, ready) as (painted, pid):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return painted, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=100_000, help="memories per import (one transaction)")
    parser.add_argument("--json", type=int, default=0, help="also time a JSON file import of this many")
    parser.add_argument("--json-db", help="the JSON import goes into this store (an empty PostgreSQL database's URL)")
    parser.add_argument("--vectors", action="store_true", help="embed every memory before measuring prime")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--paints", type=int, default=3)
    parser.add_argument("--db", help="build and measure the store in this PostgreSQL database (its URL) instead")
    args = parser.parse_args()
    if args.db:
        path: Path | str = args.db
        if args.rebuild:
            recreate_database(args.db)
        stored = stored_memories(args.db)
        if 0 < stored < args.memories:
            parser.error(f"{postgres.redacted(args.db)} holds {stored:,} memories, fewer than --memories: add --rebuild")
        missing = stored == 0
    else:
        folder = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench-scale"))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"scale-{args.memories}.db"
        if args.rebuild and path.exists():
            for extra in folder.glob(path.name + "*"):
                extra.unlink()
        missing = not path.exists()
    if missing:
        print(f"building {args.memories:,} memories over {len(PROJECTS)} projects: {path}")
        wall, cpu = build(path, args.memories, args.chunk)
        print(f"bulk import: {args.memories / wall:,.0f} memories/s wall ({wall:.1f} s), "
              f"{args.memories / cpu:,.0f}/s CPU ({cpu:.1f} s)")
    if args.json:
        wall, cpu = json_import(args.json, args.json_db)
        print(f"JSON import of {args.json:,} into an empty store: {args.json / wall:,.0f} memories/s wall "
              f"({wall:.1f} s), {args.json / cpu:,.0f}/s CPU")
    with Store.open(path, project="bench", config=Config.defaults()) as store:
        if args.vectors:
            from store.index.reindex import reindex, stale_vectors

            if stale_vectors(store):
                with Clocks() as clocks:
                    reindex(store)
                print(f"reindex (vectors): {clocks.wall:.1f} s wall, {clocks.cpu:.1f} s CPU")
        total = store.db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0]
        count = store.db.execute_sql("SELECT COUNT(*) FROM memory WHERE project_id = " + store.backend.param,
                                     (store.project_id(),)).fetchone()[0]
        print(f"{total:,} memories; project bench: {count:,}")
        print(f"{'measure (median ms)':<44} {'wall':>8} {'CPU':>8}  result")
        for label, text in QUERIES.items():
            wall, cpu, hits = timed(lambda text=text: search(store, text, limit=20), 9)
            print(f"{'search: ' + label + ' ' + repr(text):<44} {wall:>8.1f} {cpu:>8.1f}  {len(hits)} hits")
        for label, text in QUERIES.items():
            wall, cpu, loaded = timed(lambda text=text: read_head(store, ListQuery(text=text), with_counts=False), 9)
            print(f"{'workbench head: ' + label:<44} {wall:>8.1f} {cpu:>8.1f}  {len(loaded.listing)} listed")
        wall, cpu, page = timed(lambda: list_memories(store, MemoryFilter(), limit=50), 9)
        print(f"{'list: first page of 50':<44} {wall:>8.1f} {cpu:>8.1f}  {len(page)} rows")
        wall, cpu, loaded = timed(lambda: read_head(store, ListQuery(), with_counts=True), 9)
        print(f"{'workbench first screen (head + counts)':<44} {wall:>8.1f} {cpu:>8.1f}  {len(loaded.listing)} listed")
        context = InjectionContext(hat="creator", task=TASK, paths=("src/billing/flush_cache.py",))
        wall, cpu, result = timed(lambda: prime(store, context), 15)
        print(f"{'prime in-process':<44} {wall:>8.1f} {cpu:>8.1f}  {len(result.included)} injected")
    if shutil.which("tmux") and args.paints:
        paints = [first_paint_of(path, count) for _ in range(args.paints)]
        walls = sorted(p[0] for p in paints)
        print(f"first paint (whole process, tmux {SIZE[0]}x{SIZE[1]}): median {statistics.median(walls):.2f} s "
              f"wall (runs {', '.join(f'{w:.2f}' for w in walls)}), "
              f"CPU {statistics.median(p[1] for p in paints):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
