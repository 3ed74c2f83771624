"""Benchmark `prime` over two layers (docs/team.md): the own store (SQLite, 1,000 memories) and a
team store on PostgreSQL over its Unix socket (100,000 memories), in-process, with the stores
open (what the session-start hook and the MCP server pay per prime after connecting).

    .venv/bin/python benchmarks/bench_layers.py [--runs N] [--team N] [--own N] [--member]

Starts a throwaway PostgreSQL server (tests/postgres_server.py: initdb + pg_ctl from the
machine's PostgreSQL), builds the stores once under $MEMDECK_BENCH_DIR (default
/tmp/memdeck-bench; the synthetic memories of benchmarks/bench_prime.py, with identifier words
and, with the semantic extra, vectors), copies the team one into the server with `memdeck copy`'s
code, and prints the medians of N primes after one to warm the caches, with the semantic signal
(when installed) and on words alone, beside the own store alone: wall and CPU time of this
process, and the CPU time of the team store's server process a prime (its mean, from /proc:
the part of the time that waits on PostgreSQL, which the machine's load changes less). "words
unkept": each prime reads the task's words' matches again, as the first prime after a change
of the team store's text does (the team store keeps them per version of its text,
`store.backends.postgres_search.word_matches`). Copied into a checkout of another commit, the
script measures that commit's code (the `store` beside it).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_prime import PATHS, TASK, build  # noqa: E402
from postgres_server import Server  # noqa: E402
from store import Config, Store  # noqa: E402
from store.backends import postgres_search  # noqa: E402
from store.layers.layers import Layers  # noqa: E402
from store.interop.copying import copy_store  # noqa: E402
from store.retrieval.injection import InjectionContext, prime  # noqa: E402


def timed(store: Store, layers: Layers | None, runs: int, before=None) -> tuple[float, float, float | None, int, int]:
    """Medians of `runs` primes: wall and CPU time (ms), the team store's server process's CPU
    time a prime (its mean; None without a team layer, or where its process cannot be read),
    memories injected, of them from the team. `before` runs before each prime, untimed."""
    context = InjectionContext(hat="creator", task=TASK, paths=PATHS)
    result = prime(store, context, layers=layers)  # warm: tokenizer, vectors, caches
    server = _server_process(layers)
    walls, cpus = [], []
    server_start = _cpu_seconds(server)
    for _ in range(runs):
        if before is not None:
            before()
        start, cpu = time.perf_counter(), time.process_time()
        result = prime(store, context, layers=layers)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    server_end = _cpu_seconds(server)
    server_cpu = None if server_start is None or server_end is None else (server_end - server_start) / runs * 1000
    team = sum(1 for r in result.included if r.memory.layer == "team")
    return (statistics.median(walls) * 1000, statistics.median(cpus) * 1000, server_cpu, len(result.included),
            team)


def _server_process(layers: Layers | None) -> int | None:
    """The process id of the team store's connection on the server (this machine's)."""
    team = layers.store("team") if layers is not None else None
    return None if team is None else team.db.execute_sql("SELECT pg_backend_pid()").fetchone()[0]


def _cpu_seconds(pid: int | None) -> float | None:
    """A process's CPU time so far (user and system; /proc counts in clock ticks of 10 ms)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _member_url(url: str) -> str:
    """The team store made a team store (`memdeck team init`'s roles and rules) with a reader,
    `bench_reader`: the URL they read it by."""
    from store.backends import postgres_roles

    with Store.open(url, project="bench", config=Config.defaults()) as owner:
        postgres_roles.install(owner.db)
        postgres_roles.grant(owner.db, "bench_reader", "reader")
    return url.replace("postgres@", "bench_reader@", 1)


def _forget_words() -> None:
    """The team store's kept word matches dropped, as after a change of its text (the counts
    of the store and project, also read again then, stay kept)."""
    if not hasattr(postgres_search, "_matches"):
        return  # a checkout from before they were kept, measured with this script
    with postgres_search._matches_lock:
        postgres_search._matches.clear()
        postgres_search._matches_size = 0


def _own_ids(path: Path) -> None:
    """The synthetic ids are numbered from 0 in every store: the own store's get a prefix, so no
    own memory is a team memory by id (a shared one would be)."""
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("PRAGMA foreign_keys = OFF")
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        db.execute("UPDATE memory SET id = 'own-' || id")
        for table in ("memory_vector", "memory_pending", "event", "anchor"):
            if table in tables:
                db.execute(f"UPDATE {table} SET memory_id = 'own-' || memory_id")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--team", type=int, default=100_000)
    parser.add_argument("--own", type=int, default=1_000)
    parser.add_argument("--member", action="store_true",
                        help="read the team store as a team member (a reader, under row-level security) "
                             "rather than as the server's superuser")
    args = parser.parse_args()
    folder = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench"))
    folder.mkdir(parents=True, exist_ok=True)
    team_file, own_file = folder / f"prime-{args.team}.db", folder / f"layers-own-{args.own}.db"
    for path, n in ((team_file, args.team), (own_file, args.own)):
        if not path.exists():
            print(f"building {path} ({n:,} memories)", flush=True)
            build(path, n)
            if path == own_file:
                _own_ids(path)
    server = Server().start()
    try:
        url = server.fresh_database()
        # The test server commits without waiting for its log (`synchronous_commit=off`, for the
        # tests' speed); then the VACUUM `memdeck copy` runs once it commits cannot mark the new
        # rows visible to all (their commit not yet flushed), and the store stays as a server
        # with the default setting never leaves it (a count of the project read from the table,
        # not its index). The team store's database commits as a server does by default.
        server._admin(f"ALTER DATABASE {url.split('?')[0].rsplit('/', 1)[1]} SET synchronous_commit = on")
        start = time.perf_counter()
        copy_store(team_file, url)
        copied = time.perf_counter() - start
        if args.member:
            url = _member_url(url)
        print(f"team store: {args.team:,} memories copied to PostgreSQL in {copied:.0f} s "
              f"(Unix socket {server.socket}, read as {'a team reader' if args.member else 'the superuser'}); "
              f"own store: {args.own:,} on SQLite; load average "
              f"{os.getloadavg()[0]:.1f}; medians of {args.runs} primes (ms)", flush=True)
        extra = importlib.util.find_spec("wordllama") is not None
        print(f"{'signal':<9}  {'layers':<24}  {'wall':>7}  {'cpu':>6}  {'server':>6}  injected  from team")
        for semantic in ([True] if extra else []) + [False]:
            config = Config.defaults().with_overrides({"injection.semantic": semantic, "team.db": url})
            rows = []
            with Store.open(own_file, project="bench", config=config) as own:
                rows.append(("own alone", timed(own, None, args.runs)))
                with Layers.open(own, file=False) as layers:
                    assert layers.names == ("own", "team"), layers.problems
                    rows.append(("own + team", timed(own, layers, args.runs)))
                    rows.append(("own + team, words unkept", timed(own, layers, args.runs, _forget_words)))
            name = "semantic" if semantic else "words"
            for label, (wall, cpu, server_cpu, injected, team) in rows:
                server_text = "" if server_cpu is None else f"{server_cpu:.1f}"
                print(f"{name:<9}  {label:<24}  {wall:>7.1f}  {cpu:>6.1f}  {server_text:>6}  {injected:>8}  "
                      f"{team:>9}", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
