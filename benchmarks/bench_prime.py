"""Benchmark `prime` at 1k, 10k and 100k memories: in-process and as a whole `memdeck prime`
process, with the semantic signal and on words alone. Stores are built once under
$MEMDECK_BENCH_DIR (default /tmp/memdeck-bench), with the identifier words and, when the
semantic extra is installed, the vectors every write makes.

    .venv/bin/python benchmarks/bench_prime.py [--runs N] [--words-only | --semantic-only] [1000 10000 100000]

Each number is a median: of N in-process primes after one to warm the caches (the page cache,
a process's vectors), and of N whole processes after one to warm the page cache. Wall time and
CPU time (this process's, or the child's) are both given: on a machine shared with other work
the wall time grows with the load, the CPU time much less. "first" is a process's first prime
in-process (what a whole `memdeck prime` pays after its imports: the tokenizer, the project's
vectors). Words alone runs with `injection.semantic: false` (a config file given by
MEMDECK_CONFIG), as without the extra.

The code measured is the one beside this script (its `store` and `tui`, compiled to bytecode
first, as an installed package is), so a copy of another commit measures that commit.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store import Config, Store  # noqa: E402
from store.engine.core import content_hash  # noqa: E402
from store.retrieval.injection import InjectionContext, prime  # noqa: E402

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


def config(semantic: bool) -> Config:
    return Config.defaults().with_overrides({"injection.semantic": semantic})


def in_process(path: Path, semantic: bool, runs: int) -> dict[str, float]:
    with Store.open(path, project="bench", config=config(semantic)) as store:
        context = InjectionContext(hat="creator", task=TASK, paths=PATHS)
        start = time.perf_counter()
        result = prime(store, context)  # the first: tokenizer, vectors, page cache
        first = time.perf_counter() - start
        walls, cpus = [], []
        for _ in range(runs):
            start, cpu = time.perf_counter(), time.process_time()
            result = prime(store, context)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
    return {"first": first * 1000, "wall": statistics.median(walls) * 1000, "cpu": statistics.median(cpus) * 1000,
            "injected": len(result.included)}


def whole_process(path: Path, semantic: bool, runs: int, folder: Path) -> dict[str, float]:
    command = [str(Path(sys.executable).parent / "memdeck"), "--db", str(path), "--project", "bench",
               "prime", "--hat", "creator", "--task", TASK, "--paths", *PATHS]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not semantic:
        words = folder / "words-alone.yml"
        words.write_text("injection:\n  semantic: false\n", encoding="utf-8")
        env["MEMDECK_CONFIG"] = str(words)
    walls, cpus = [], []
    for run in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if run:  # the first warms the page cache
            walls.append(wall)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return {"wall": statistics.median(walls) * 1000, "cpu": statistics.median(cpus) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", type=int, nargs="*", default=[1000, 10_000, 100_000])
    parser.add_argument("--runs", type=int, default=15)
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--words-only", action="store_true")
    modes.add_argument("--semantic-only", action="store_true")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "store", quiet=1)
    compileall.compile_dir(ROOT / "tui", quiet=1)
    folder = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench"))
    folder.mkdir(parents=True, exist_ok=True)
    extra = importlib.util.find_spec("wordllama") is not None
    modes = [m for m in ([True] if extra else []) + [False]
             if not (args.words_only and m) and not (args.semantic_only and not m)]
    print(f"code: {ROOT}; load average {os.getloadavg()[0]:.1f}; medians of {args.runs} runs (ms)")
    print(f"{'memories':>9}  {'signal':<9}  {'in-process':>10}  {'cpu':>6}  {'first':>6}  "
          f"{'whole process':>13}  {'cpu':>6}  injected")
    for n in args.sizes:
        path = folder / f"prime-{n}.db"
        if not path.exists():
            build(path, n)
        for semantic in modes:
            inner = in_process(path, semantic, args.runs)
            whole = whole_process(path, semantic, max(3, args.runs // 2), folder)
            print(f"{n:>9,}  {'semantic' if semantic else 'words':<9}  {inner['wall']:>10.1f}  {inner['cpu']:>6.1f}  "
                  f"{inner['first']:>6.0f}  {whole['wall']:>13.0f}  {whole['cpu']:>6.0f}  {inner['injected']}",
                  flush=True)


if __name__ == "__main__":
    main()
