"""Benchmark the sameness decision at 10,000 memories in one project (issue 27):

- the check of one new memory against the project (`store.relations.decide`, what every `add` runs:
  candidates from the full-text index, then `sameness.compare` on each), in-process, median
  and 95th percentile over 300 new texts (a third new, a third with a number changed, a third
  negated: the updates and contradictions it must find);
- `Store.add` of the same texts, whole (the decision and the write), on a copy of the store;
- `consolidate --dry-run` over the whole project (every memory against the earlier ones).

The store is built with `add_many` (no lookup) from bench_store.py's generated memories, which
share many words (templates): harder for both than real text. Stores are built under
$MEMDECK_BENCH_DIR (default /tmp/memdeck-bench-sameness) and reused.

    .venv/bin/python benchmarks/bench_sameness.py [10000]
"""

from __future__ import annotations

import os
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_store import memory_fields  # noqa: E402

from store import Config, Store  # noqa: E402
from store.engine.consolidation import consolidate  # noqa: E402


def build(path: Path, n: int) -> None:
    if path.exists():
        return
    rng = random.Random(n)
    with Store.open(path, project="bench", config=Config.defaults()) as store:
        for start in range(0, n, 5000):
            store.add_many([memory_fields(rng, i) for i in range(start, min(n, start + 5000))])


def probes(store: Store, rng: random.Random, count: int) -> list[dict]:
    rows = store.db.execute_sql("SELECT content, type, scope FROM memory ORDER BY id").fetchall()
    picked = []
    for i in range(count):
        if i % 3 == 0:
            fields = memory_fields(rng, 10**6 + i)
            picked.append(dict(content=fields["content"], type=fields["type"], scope=fields["scope"]))
            continue
        content, type_, scope = rng.choice(rows)
        if i % 3 == 1:
            content = re.sub(r"\d+", lambda m: str(int(m.group()) + 1), content, count=1)
        else:
            content = "Never " + content[0].lower() + content[1:]
        picked.append(dict(content=content, type=type_, scope=scope))
    return picked


def main(n: int) -> None:
    folder = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench-sameness"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"sameness-{n}.db"
    build(path, n)
    rng = random.Random(27)
    with Store.open(path, project="bench", config=Config.defaults()) as store:
        project = store.project_id()
        texts = probes(store, rng, 300)
        for item in texts[:20]:  # warm-up: imports, caches, the page cache
            store.relations.decide(project, item["type"], item["scope"], item["content"])
        samples, cpu, kinds = [], [], {}
        for item in texts:
            start, start_cpu = time.perf_counter(), time.process_time()
            found = store.relations.decide(project, item["type"], item["scope"], item["content"])
            samples.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
            kind = found[1].kind if found else "distinct"
            kinds[kind] = kinds.get(kind, 0) + 1
        samples.sort()
        print(f"memories: {store.db.execute_sql('SELECT COUNT(*) FROM memory').fetchone()[0]}")
        print(f"check one new memory (store.relations.decide): median {statistics.median(samples):.2f} ms, "
              f"p95 {samples[int(len(samples) * 0.95)]:.2f} ms, max {samples[-1]:.2f} ms over {len(samples)}; "
              f"decided {kinds}")
        # CPU time of this process: what the check costs when other processes share the cores.
        print(f"  its CPU time: median {statistics.median(cpu):.2f} ms; load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")
        start = time.perf_counter()
        report = consolidate(store, dry_run=True)
        print(f"consolidate --dry-run: {time.perf_counter() - start:.1f} s; {report.compared} pairs compared, "
              f"{len(report.findings)} findings")
    # `Store.add` whole (decision and write) on a copy, so the store stays as built.
    copy = folder / f"sameness-{n}-copy.db"
    shutil.copyfile(path, copy)
    with Store.open(copy, project="bench", config=Config.defaults()) as store:
        samples = []
        for item in texts[:100]:
            start = time.perf_counter()
            store.add(**item)
            samples.append((time.perf_counter() - start) * 1000)
        print(f"add (decision and write): median {statistics.median(samples):.2f} ms over {len(samples)}")
    copy.unlink()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
