"""Benchmark the store at 10k and 100k memories: insert rate (`Store.add` with its reinforcement
lookup, and the `Store.add_many` bulk path), a filtered list's first page, full-text queries (a
typical two-word one and a pathological common word), fuzzy title search, and a whole
`memdeck search` process. Stores are built under $MEMDECK_BENCH_DIR (default
/tmp/memdeck-bench-store) and reused.

    .venv/bin/python benchmarks/bench_store.py [10000 100000]
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store import Config, Store  # noqa: E402
from store.browse.search import MemoryFilter, fts_query, full_text, fuzzy_titles, list_memories, search  # noqa: E402

TYPES = ("architecture", "pattern", "pitfall", "decision", "fix", "convention", "constraint", "context",
         "dependency", "preference")
HATS = ("explorer", "planner", "creator", "critic", "editor", None)
AREAS = ("billing", "webhook", "session", "upload", "search", "auth", "invoice", "metrics", "theme",
         "config", "stream", "socket", "deploy", "migration", "fixture", "tenant", "snapshot", "audit",
         "export", "payment", "email", "report", "cache", "schedule")
THINGS = ("worker", "handler", "cache", "queue", "index", "gateway", "exporter", "pipeline", "loader",
          "parser", "reader", "pool", "script", "runner", "limiter", "router", "store", "client")
PROBLEMS = ("times out after {n}s under load", "drops messages larger than {n} KB",
            "leaks a connection on every retry", "needs a restart after a schema change",
            "returns stale data for {n} minutes after a deploy", "deadlocks when two tenants share a lock",
            "double-charges when the webhook is retried", "breaks on non-ASCII file names",
            "reads the config before the env vars are loaded", "ignores the timezone of the tenant",
            "fails silently when the disk is full", "logs secrets at debug level",
            "retries forever on a 4xx answer", "sorts names by byte order, not by locale",
            "loses the last batch on shutdown", "uses {n} MB per open file",
            "starts before its dependencies are healthy", "rejects tokens issued {n}s in the future",
            "caches negative lookups for an hour", "mixes up cents and euros in refunds")
ADVICE = ("Use exponential backoff capped at {n}s", "Call {ident}() before {ident2}()",
          "Pin {ident} to version {n}.{m}", "Wrap {ident} in a transaction",
          "Never log the {ident} token", "Run the {ident} migration first",
          "Batch writes through {ident} in groups of {n}", "Check {ident} for None before use",
          "Prefer {ident} over {ident2} in new code", "Keep {ident} idempotent",
          "Add a health check that calls {ident}", "Set a {n}s deadline on {ident}",
          "Move {ident} behind the feature flag", "Read limits from {ident} instead of constants",
          "Test {ident} with a frozen clock", "Compare amounts as integers in {ident}")
WHY = ("", "", "Found while debugging {ident}.", "The {ident} tests cover it.",
       "Reported twice by the {area} team.", "This bit us in the {n} release.",
       "See the incident notes for {ident}.", "Costs about {n} ms per call otherwise.")
TAGS = ("net", "db", "ci", "security", "perf", "ux", "billing", "auth", "infra", "tests")
# Identifiers follow a Zipf law, as in real code: a few everywhere, most rare.
IDENTS = [f"{verb}_{noun}{k or ''}" for k in range(60)
          for verb in ("parse", "load", "sync", "emit", "fetch", "flush", "build", "check", "merge", "send")
          for noun in ("invoice", "tenant", "session", "webhook", "token", "cache", "queue", "index",
                       "refund", "report", "upload", "schedule")]

MEMDECK = [str(Path(sys.executable).parent / "memdeck")]


def memory_text(rng: random.Random) -> str:
    def ident() -> str:
        return IDENTS[min(int(rng.paretovariate(1.0)) - 1, len(IDENTS) - 1) if rng.random() < 0.5
                      else rng.randrange(len(IDENTS))]

    n, m = rng.randint(2, 500), rng.randint(0, 9)
    problem = rng.choice(PROBLEMS).format(n=n)
    advice = rng.choice(ADVICE).format(n=n, m=m, ident=ident(), ident2=ident())
    why = rng.choice(WHY).format(n=n, ident=ident(), area=rng.choice(AREAS))
    text = f"The {part(rng)} {problem}. {advice}; see {ident()} in src/{rng.choice(AREAS)}/{ident()}.py. {why}"
    return text.strip()


def part(rng: random.Random) -> str:
    return f"{rng.choice(AREAS)} {rng.choice(THINGS)}"


def memory_fields(rng: random.Random, i: int) -> dict:
    return dict(content=memory_text(rng), type=rng.choice(TYPES), hat=rng.choice(HATS),
                tags=rng.sample(TAGS, rng.randint(0, 3)), confidence=round(rng.uniform(0.3, 0.95), 2),
                scope=part(rng) if i % 3 == 0 else None, created_at=1.77e9 + i * 60)


def timed(fn, repeat: int = 20) -> tuple[float, object]:
    """Median milliseconds of `fn()` over `repeat` runs (after one warm-up), and its last result."""
    result = fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), result


def build(path: Path, n: int) -> dict:
    """The store of `n` memories, built with `add_many`; `Store.add` is timed on the way."""
    numbers: dict = {}
    if path.exists():
        return numbers
    rng = random.Random(n)
    fields = [memory_fields(rng, i) for i in range(n)]
    with Store.open(path, project="bench", config=Config.defaults()) as store:
        one_by_one = min(n, 2000)
        start = time.perf_counter()
        for item in fields[:one_by_one]:
            store.add(**item)
        numbers["add (with reinforcement lookup), first 2k"] = one_by_one / (time.perf_counter() - start)
        start = time.perf_counter()
        for chunk in range(one_by_one, n, 10_000):
            store.add_many(fields[chunk:chunk + 10_000])
        if n > one_by_one:
            numbers["add_many (bulk, no lookup)"] = (n - one_by_one) / (time.perf_counter() - start)
        # `Store.add` once the store is full: the reinforcement lookup against n memories.
        extra = [memory_fields(rng, n + i) for i in range(500)]
        start = time.perf_counter()
        for item in extra:
            store.add(**item)
        numbers[f"add (with reinforcement lookup), at {n // 1000}k"] = len(extra) / (time.perf_counter() - start)
    return numbers


def matches(store: Store, text: str) -> int:
    return store.db.execute_sql("SELECT COUNT(*) FROM memory_fts WHERE memory_fts MATCH ?",
                                (fts_query(text),)).fetchone()[0]


def measure(path: Path) -> dict:
    numbers: dict = {}
    with Store.open(path, project="bench", config=Config.defaults()) as store:
        numbers["memories"] = store.db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0]
        start = time.perf_counter()
        fuzzy_titles(store, "socket pol leaks conection", limit=20)
        first_fuzzy_ms = (time.perf_counter() - start) * 1000
        pitfalls = MemoryFilter(types=("pitfall",), min_confidence=0.5)
        numbers["list: pitfalls >= 0.5, first 50 (ms)"] = timed(lambda: list_memories(store, pitfalls, limit=50))[0]
        tagged = MemoryFilter(hats=("critic",), tags=("security",))
        numbers["list: hat + tag, first 50 (ms)"] = timed(lambda: list_memories(store, tagged, limit=50))[0]
        numbers["list: everything by confidence, first 50 (ms)"] = timed(
            lambda: list_memories(store, sort="confidence", limit=50))[0]
        for label, query in (("typical two words", "socket pool"), ("common two words", "billing worker"),
                             ("broad two words", "webhook retried"),
                             ("rare identifier", "merge_refund17"), ("pathological common word", "the")):
            ms, _ = timed(lambda q=query: full_text(store, q, limit=20), repeat=10)
            numbers[f"fts: {label} '{query}' ({matches(store, query):,} matches), top 20 (ms)"] = ms
        ms, _ = timed(lambda: fuzzy_titles(store, "socket pol leaks conection", limit=20), repeat=5)
        numbers["fuzzy titles: 'socket pol leaks conection' (ms)"] = ms
        numbers["fuzzy titles, first call in a process (ms)"] = first_fuzzy_ms
        ms, _ = timed(lambda: search(store, "socket pool", limit=20), repeat=5)
        numbers["search() = fts + fuzzy, 'socket pool' (ms)"] = ms
    env = {**os.environ, "MEMDECK_DB": str(path), "MEMDECK_PROJECT": "bench"}
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([*MEMDECK, "search", "socket pool"], env=env, check=True, capture_output=True)
        samples.append((time.perf_counter() - start) * 1000)
    numbers["whole process: memdeck search 'socket pool' (ms)"] = statistics.median(samples)
    return numbers


def main(sizes: list[int]) -> None:
    folder = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench-store"))
    folder.mkdir(parents=True, exist_ok=True)
    for n in sizes:
        path = folder / f"store-{n}.db"
        print(f"## {n:,} memories ({path})")
        for label, value in {**build(path, n), **measure(path)}.items():
            unit = "/s" if label.startswith("add") else ""
            print(f"  {label:<58} {value:>10,.1f}{unit}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])
