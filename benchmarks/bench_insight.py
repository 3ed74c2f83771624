"""Insight views benchmark (not a test: it prints numbers).

    .venv/bin/python benchmarks/bench_insight.py [--count 100000]

On a store of `count` memories with 200 sessions of 500 log entries each and one memory with
500 events, the median of several runs of what each view asks of the store:

- project view: `project_confidence` (spread and gaining/losing over every memory in play);
- timeline: `memory_timeline` of the 500-event memory;
- session list: `session_log.summaries` (counts of 200 sessions over 100,000 entries);
- poll: one live poll of the session log when nothing is new (entries after the last seq);
- preview: one preview's store work (prime as a dry run, the weights, the title bar's counts);
- live latency: in-process (Pilot), from another connection committing an entry to the open
  session log holding it, with the app's live polling as shipped.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store.browse import paging  # noqa: E402
from store.engine import session_log  # noqa: E402
from store.engine.clock import DAY, FrozenClock  # noqa: E402
from store.engine.config import Config  # noqa: E402
from store.engine.core import Store  # noqa: E402
from store.demo import build_large  # noqa: E402
from store.retrieval.injection import InjectionContext, prime  # noqa: E402
from store.browse.timeline import memory_timeline, project_confidence  # noqa: E402
from tui.app import MemdeckApp  # noqa: E402
from tui.testing import DEMO_NOW, SIZE, settle  # noqa: E402
from tui.widgets.activity_log import ActivityLog  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
PROJECT = "bench"
SESSIONS, ENTRIES, EVENTS = 200, 500, 500
KINDS = ("prompt", "tool_use", "tool_result", "assistant", "marker", "memory_created", "tool_error")


def build(count: int) -> Path:
    path = OUT / f"bench_insight_{count}.db"
    if path.exists():
        return path
    OUT.mkdir(exist_ok=True)
    started = time.perf_counter()
    clock = FrozenClock(DEMO_NOW - 100 * DAY)
    with Store.open(path, project=PROJECT, config=Config.defaults(), clock=clock) as store:
        build_large(store, count)
        memory = store.add("The feed reconnects after idle drops", type="pitfall", reinforce=False).memory
        for n in range(EVENTS):
            clock.at += 4 * 3600
            store.record_usage([memory.id]) if n % 3 else store.edit(memory.id, tags=[f"t{n}"], actor="bench")
        with store.transaction():
            for s in range(SESSIONS):
                session = f"bench-session-{s:03d}"
                store.sessions.ensure(session, hat="critic", task=f"bench task {s}", started_at=clock.at + s)
                for seq in range(ENTRIES):
                    store.sessions.append_activity(session, KINDS[seq % len(KINDS)], f"entry {seq}",
                                          at=clock.at + s + seq, seq=seq)
    print(f"built {count} memories, {SESSIONS * ENTRIES} log entries in {time.perf_counter() - started:.1f} s")
    return path


def median_ms(fn, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def store_work(path: Path) -> None:
    with Store.open(path, project=PROJECT, config=Config.defaults(), clock=FrozenClock(DEMO_NOW)) as store:
        busiest = store.db.execute_sql(
            "SELECT memory_id FROM event GROUP BY memory_id ORDER BY COUNT(*) DESC LIMIT 1").fetchone()[0]
        last = store.sessions.activities("bench-session-199")[-1].seq
        context = InjectionContext(hat="critic", task="retry the socket worker after a timeout", budget=2000)
        print(f"project view (project_confidence):        {median_ms(lambda: project_confidence(store)):8.1f} ms")
        print(f"timeline of a {EVENTS + 1}-event memory:          "
              f"{median_ms(lambda: memory_timeline(store, busiest)):8.1f} ms")
        print(f"session list ({SESSIONS} sessions, {SESSIONS * ENTRIES} entries): "
              f"{median_ms(lambda: session_log.summaries(store)):8.1f} ms")
        print(f"live poll with nothing new:               "
              f"{median_ms(lambda: session_log.tail(store, 'bench-session-199', last), runs=51):8.2f} ms")
        print(f"preview store work (prime dry run):       "
              f"{median_ms(lambda: (prime(store, context), paging.counts(store))):8.1f} ms")


async def live_latency(path: Path, samples: int) -> list[float]:
    app = MemdeckApp(path, project=PROJECT, clock=FrozenClock(DEMO_NOW), config=Config.defaults(),
                     live=True, still=True)
    latencies = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_sessions("bench-session-199")
        await settle(pilot)
        log = app.screen.query_one(ActivityLog)
        other = sqlite3.connect(path)
        for n in range(samples):
            seq = log.last_seq + 1
            with other:
                other.execute("INSERT INTO activity (session_id, seq, at, kind, summary, memory_id, detail) "
                              "VALUES (?, ?, ?, 'tool_use', ?, NULL, '{}')",
                              ("bench-session-199", seq, DEMO_NOW + n, f"appended {n}"))
            started = time.perf_counter()
            while log.last_seq < seq:
                await asyncio.sleep(0.005)
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.13)  # lands the next write at another point of the poll cycle
        with other:
            other.execute("DELETE FROM activity WHERE session_id = ? AND seq >= ?", ("bench-session-199", ENTRIES))
        other.close()
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    path = build(args.count)
    store_work(path)
    latencies = asyncio.run(live_latency(path, args.samples))
    print(f"live latency, commit to shown ({args.samples} appends): median {statistics.median(latencies) * 1000:.0f} ms, "
          f"max {max(latencies) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
