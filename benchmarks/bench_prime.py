"""Benchmark `prime` at 1k, 10k and 100k memories: in-process and as a whole `memdeck prime`
process. Stores are built once under $MEMDECK_BENCH_DIR (default /tmp/memdeck-bench), with the
identifier words and, when the semantic extra is installed, the vectors every write makes.

    .venv/bin/python benchmarks/bench_prime.py [1000 10000 100000]

The semantic signal is on when the extra is installed; to measure words alone, run it with the
Python of an environment without the extra (`pip install -e .` only).
"""

from __future__ import annotations

import importlib.util
import json
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
from store.core import content_hash  # noqa: E402
from store.injection import InjectionContext, prime  # noqa: E402

WORDS = ("session worker queue retry timeout cache tenant invoice export billing webhook token "
         "schema migration index widget theme palette render config loader parser stream socket "
         "deploy rollback canary metric alert trace span lock mutex channel buffer flush commit "
         "branch merge review test fixture mock snapshot gateway proxy router handler").split()
TYPES = ("architecture", "pattern", "pitfall", "decision", "fix", "convention", "constraint", "context")
HATS = ("explorer", "planner", "creator", "critic", "editor")
# Words a project's memories use: a few everywhere, most rare (a Zipf law, as in real text).
RARE = [f"ident{j}" for j in range(20_000)]
TASK = "fix the webhook retry timeout in the billing worker queue: ident40 ident700 ident9000"
PATHS = ("internal/billing/worker.go",)


def build(path: Path, n: int) -> None:
    """A store of `n` synthetic memories with tags, hats and some file refs, written in bulk
    (through SQL: `Store.add` checks each for reinforcement, which is not what is measured)."""
    rng = random.Random(n)
    with Store.open(path, project="bench", config=Config.defaults()) as store:
        project_id = store.project_id()
        rows = []
        now = time.time()
        for i in range(n):
            words = rng.sample(WORDS, 6) + [RARE[min(int(rng.paretovariate(0.7)) - 1, len(RARE) - 1)]
                                            for _ in range(6)]
            content = f"{' '.join(words).capitalize()} number {i}."
            refs = [f"internal/{rng.choice(WORDS)}/*.go"] if i % 5 == 0 else []
            rows.append((f"mem-{i:08d}", project_id, rng.choice(TYPES), content[:60], content,
                         round(rng.uniform(0.3, 0.98), 3), json.dumps(rng.sample(WORDS, 2)), json.dumps(refs),
                         rng.choice(HATS), "explicit", "active", now - i, now - i, now - i, content_hash(content)))
        with store.transaction():
            for start in range(0, n, 5000):
                store.db.cursor().executemany(
                    "INSERT INTO memory (id, project_id, type, title, content, confidence, tags, file_refs, hat, "
                    "source, status, created_at, updated_at, status_changed_at, content_hash) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows[start:start + 5000])
        store.index_pending()  # identifier words, and vectors with the semantic extra


def in_process(path: Path, runs: int = 30) -> tuple[float, int]:
    with Store.open(path, project="bench", config=Config.defaults()) as store:
        context = InjectionContext(hat="creator", task=TASK, paths=PATHS)
        prime(store, context)  # warm the page cache
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            result = prime(store, context)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, len(result.included)


def whole_process(path: Path, runs: int = 7) -> float:
    command = [str(Path(sys.executable).parent / "memdeck"), "--db", str(path), "--project", "bench",
               "prime", "--hat", "creator", "--task", TASK, "--paths", *PATHS]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main(sizes: list[int]) -> None:
    folder = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench"))
    folder.mkdir(parents=True, exist_ok=True)
    semantic = importlib.util.find_spec("wordllama") is not None
    print("semantic signal:", "on" if semantic else "off (words alone)")
    print(f"{'memories':>9}  {'in-process ms':>13}  {'whole process ms':>16}  injected")
    for n in sizes:
        path = folder / f"prime-{n}.db"
        if not path.exists():
            build(path, n)
        ms, injected = in_process(path)
        print(f"{n:>9,}  {ms:>13.1f}  {whole_process(path):>16.0f}  {injected}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10_000, 100_000])
