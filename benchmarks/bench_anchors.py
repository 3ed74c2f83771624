"""Benchmark anchors: `verify` over 1,000 anchored memories in a git repository of 5,000 files,
and what the anchor check adds to `prime` at 10,000 memories (every one anchored). Everything
is built under $MEMDECK_BENCH_DIR/anchors (default /tmp/memdeck-bench/anchors), afresh each run.

    .venv/bin/python benchmarks/bench_anchors.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_prime import PATHS, TASK, build  # noqa: E402

from store import Config, Store  # noqa: E402
from store.anchors import git  # noqa: E402
from store.anchors.anchoring import capture  # noqa: E402
from store.retrieval.injection import InjectionContext, prime  # noqa: E402
from store.retrieval.ranking import rank  # noqa: E402
from store.anchors.verify import trust, verify  # noqa: E402

FILES = 5000
LINES = 60
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def sh(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=GIT_ENV)


def file_path(i: int) -> str:
    return f"src/pkg{i // 100:02d}/mod{i % 100:03d}.py"


def make_repo(repo: Path) -> None:
    for i in range(FILES):
        path = repo / file_path(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"def f{i}_{n}(x):  # line {n}\n" if n % 3 == 0 else f"    return x + {i * n}\n"
                                for n in range(LINES)))
    sh(repo, "init", "-q", "-b", "main")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "5,000 files")


def anchor_all(store: Store, repo: Path, specs: list[tuple[str, str]]) -> None:
    """(memory id, spec) anchors captured from the files and inserted in bulk (one git call)."""
    commit = git.head_commit(repo)
    now = time.time()
    rows = []
    for memory_id, spec in specs:
        c = capture(repo, spec, in_git=True)
        rows.append((memory_id, c.path, c.start, c.end, c.line_hash, c.snapshot, commit, c.blob, now,
                     c.file_size, c.file_mtime_ns, now))
    with store.transaction():
        store.db.cursor().executemany(
            "INSERT INTO anchor (memory_id, path, start_line, end_line, line_hash, snapshot, commit_id, blob_id, "
            "status, checked_at, file_size, file_mtime_ns, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'fresh', ?, ?, ?, ?)", rows)


def timed(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, result


def whole_process(db: Path, repo: Path, *args: str, runs: int = 5) -> float:
    command = [str(ROOT / ".venv" / "bin" / "memdeck"), "--db", str(db), "--project", "bench", *args]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, cwd=repo)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def bench_verify(base: Path, repo: Path) -> None:
    db = base / "verify.db"
    build(db, 1000)
    with Store.open(db, project="bench", config=Config.defaults(), project_root=repo) as store:
        ids = [r[0] for r in store.db.execute_sql("SELECT id FROM memory ORDER BY id")]
        anchor_all(store, repo, [(m, f"{file_path(i * 5)}:10-14") for i, m in enumerate(ids)])
        ms, results = timed(lambda: verify(store), 5)
        print(f"verify, 1,000 anchored memories, 5,000-file repo, all fresh: {ms:.0f} ms in process "
              f"({sum(r.status == 'fresh' for r in results)} fresh)")
        print(f"  memdeck verify --json (whole process): {whole_process(db, repo, 'verify', '--json'):.0f} ms")
        for i in range(0, 100):  # lines inserted above the anchored ones: moved
            path = repo / file_path(i * 5)
            path.write_text("# header\n" + path.read_text())
        for i in range(100, 150):  # the anchored lines edited: changed
            path = repo / file_path(i * 5)
            lines = path.read_text().split("\n")
            lines[11] = "    return None"
            path.write_text("\n".join(lines))
        for i in range(150, 170):  # renamed
            sh(repo, "mv", file_path(i * 5), file_path(i * 5).replace(".py", "_renamed.py"))
        for i in range(170, 180):  # deleted
            sh(repo, "rm", "-q", file_path(i * 5))
        start = time.perf_counter()
        results = verify(store)
        ms = (time.perf_counter() - start) * 1000
        counts = {s: sum(r.status == s for r in results) for s in ("fresh", "moved", "changed", "missing")}
        print(f"verify after 100 moved, 50 changed, 20 renamed, 10 deleted: {ms:.0f} ms in process {counts}")
    sh(repo, "reset", "-q", "--hard")


def bench_prime(base: Path, repo: Path) -> None:
    db = base / "prime.db"
    plain = base / "prime-unanchored.db"
    build(plain, 10_000)
    shutil.copy(plain, db)
    with Store.open(db, project="bench", config=Config.defaults(), project_root=repo) as store:
        ids = [r[0] for r in store.db.execute_sql("SELECT id FROM memory ORDER BY id")]
        anchor_all(store, repo, [(m, f"{file_path(i % FILES)}:{1 + (i // FILES) * 20}-{5 + (i // FILES) * 20}")
                                 for i, m in enumerate(ids)])
        context = InjectionContext(hat="creator", task=TASK, paths=PATHS)
        prime(store, context)
        ms_anchored, result = timed(lambda: prime(store, context), 30)
        candidates = [r.memory for r in rank(store, context) if not r.reason]
        ms_trust, _ = timed(lambda: trust(store, candidates), 30)
        print(f"prime, 10,000 memories all anchored, nothing changed: {ms_anchored:.1f} ms in process; "
              f"the anchor check of its {len(candidates)} candidates: {ms_trust:.2f} ms")
        for memory in candidates[:20]:  # touched, same bytes: a cache miss, the file is read
            anchor_path = store.db.execute_sql("SELECT path FROM anchor WHERE memory_id = ?", (memory.id,)).fetchone()[0]
            os.utime(repo / anchor_path)
        ms_touched, _ = timed(lambda: trust(store, candidates), 30)
        print(f"  the check with 20 candidates' files touched (read again, not saved): {ms_touched:.2f} ms")
    with Store.open(plain, project="bench", config=Config.defaults(), project_root=repo) as store:
        prime(store, context)
        ms_plain, _ = timed(lambda: prime(store, context), 30)
    print(f"prime, the same 10,000 memories without anchors: {ms_plain:.1f} ms in process")
    args = ("prime", "--hat", "creator", "--task", TASK, "--paths", *PATHS)
    print(f"memdeck prime (whole process): {whole_process(db, repo, *args, runs=9):.0f} ms anchored, "
          f"{whole_process(plain, repo, *args, runs=9):.0f} ms without anchors")


def main() -> None:
    base = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench")) / "anchors"
    shutil.rmtree(base, ignore_errors=True)
    repo = base / "repo"
    repo.mkdir(parents=True)
    start = time.perf_counter()
    make_repo(repo)
    print(f"(repository of {FILES:,} files made in {time.perf_counter() - start:.1f} s)")
    bench_verify(base, repo)
    bench_prime(base, repo)


if __name__ == "__main__":
    main()
