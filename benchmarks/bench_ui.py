"""Workbench benchmark on a store of 100,000 memories (not a test: it prints numbers).

    .venv/bin/python benchmarks/bench_ui.py [--count 100000]

- first paint: the whole `memdeck` process started in a tmux pane, until the pane shows the
  list's title and its first rows (polled every 5 ms);
- peak memory: that process's VmHWM after jumping to the last row (`G`);
- search: in-process (the app under `run_test`), from posting a key to the search box until the
  list draws its first row for that text's listing: its size (fuzzy title matches included)
  and first rows as `paging.listing` gives them, every visible row loaded, the first memory's
  title on the row (drawn by the compositor, not written to a terminal). For each character
  of a few queries, typed into an idle app; then again with the keys 0.125 s apart, as typed.
  Keys are posted directly: `Pilot.press` waits until the process is idle (at least 40 ms,
  and all background work), not for the list.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from textual import events

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from paint import first_paint, tmux  # noqa: E402
from store.engine.clock import FrozenClock  # noqa: E402
from store.engine.config import Config  # noqa: E402
from store.engine.core import Store  # noqa: E402
from store.demo import build_large  # noqa: E402
from store.browse.paging import ListQuery, listing  # noqa: E402
from tui.app import MemdeckApp  # noqa: E402
from tui.testing import DEMO_NOW, SIZE, settle  # noqa: E402
from tui.widgets.memory_list import MemoryList  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
TYPING_GAP = 0.125  # seconds between keys when typing: 8 keys a second
PROJECT = "bench"
MEMDECK = Path(sys.executable).parent / "memdeck"


def build(count: int) -> Path:
    path = OUT / f"bench_ui_{count}.db"
    if not path.exists():
        OUT.mkdir(exist_ok=True)
        started = time.perf_counter()
        with Store.open(path, project=PROJECT, config=Config.defaults(), clock=FrozenClock(DEMO_NOW)) as store:
            build_large(store, count)
        print(f"built {count} memories in {time.perf_counter() - started:.1f} s: {path}")
    return path


def first_paint_of(path: Path, count: int) -> tuple[float, int]:
    """Seconds from starting the process to the first rows on screen, and peak RSS in KiB."""
    command = f"{MEMDECK} --db {path} --project {PROJECT}"
    ready = lambda screen: f"Memories {count} of {count}" in screen and "needs care around" in screen  # noqa: E731
    session = f"bench-ui-{os.getpid()}"
    with first_paint(session, command, SIZE, ready, timeout=30) as (painted, pid):
        tmux("send-keys", "-t", session, "G")
        time.sleep(1.0)
        status = Path(f"/proc/{pid}/status").read_text()
        return painted, int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1])


async def search_latency(path: Path, queries: list[str], gap: float | None = None,
                         clock=time.perf_counter) -> list[float | None]:
    """Seconds from each key to the list drawn for its text (None: never drawn, the next key came
    first). `gap`: keys posted this many seconds apart, as typed; None: each into an idle app.
    `clock`: `time.process_time` gives the CPU time the process spent on each key (every
    thread), which a busy machine inflates far less than the time on the wall."""
    app = MemdeckApp(path, project=PROJECT, clock=FrozenClock(DEMO_NOW), config=Config.defaults(),
                     live=False, still=True)
    timings: list[float | None] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memories = app.screen.query_one(MemoryList)
        rows = memories.scrollable_content_region.height - 1
        draws = []  # (when, the listing shown, whether its rows in view were loaded, first row's text)
        render_line = memories.render_line

        def watched(y: int):
            strip = render_line(y)
            if y == 1:
                draws.append((clock(), memories.listing, memories.rows_ready, strip.text))
            return strip

        memories.render_line = watched
        for query in queries:
            # What each prefix must show, read before the clock starts.
            expected = {query[:n]: listing(app.store, ListQuery(text=query[:n])) for n in range(1, len(query) + 1)}
            titles = {typed: app.store.get(whole.ids[0]).title[:20] for typed, whole in expected.items()}
            posted: dict[str, float] = {}

            # This query's tables, bound now: the loop rebinds the names for the next query.
            def drawn_at(typed: str, expected=expected, posted=posted, titles=titles) -> float | None:
                whole = expected[typed]
                return next((when for when, shown, ready, text in draws
                             if when >= posted[typed] and shown.query.text == typed and len(shown) == len(whole)
                             and ready and shown.ids[:rows] == whole.ids[:rows] and titles[typed] in text), None)

            await pilot.press("slash")
            await settle(pilot)
            draws.clear()
            for typed in expected:
                posted[typed] = clock()
                app.post_message(events.Key("space" if typed[-1] == " " else typed[-1], typed[-1]))
                if gap is None:
                    while drawn_at(typed) is None:
                        await asyncio.sleep(0.001)
                    await settle(pilot)
                else:
                    await asyncio.sleep(gap)
            await settle(pilot)
            timings += [None if (at := drawn_at(typed)) is None else at - posted[typed] for typed in expected]
            await pilot.press("escape", "escape")
            await settle(pilot)
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--search-only", action="store_true", help="skip first paint and peak memory")
    parser.add_argument("--cpu", action="store_true", help="also the CPU time of each key into an idle app")
    args = parser.parse_args()
    if not shutil.which("tmux"):
        print("tmux is needed for the first-paint measurement", file=sys.stderr)
        return 1
    path = build(args.count)
    if not args.search_only:
        paints, peaks = zip(*(first_paint_of(path, args.count) for _ in range(args.runs)))
    queries = ["retry", "webhok", "cache timeout"]
    searches = asyncio.run(search_latency(path, queries))
    typing = asyncio.run(search_latency(path, queries, gap=TYPING_GAP))
    drawn = [t for t in typing if t is not None]
    cpu = asyncio.run(search_latency(path, queries, clock=time.process_time)) if args.cpu else []
    print(f"memories: {args.count}")
    if not args.search_only:
        print(f"first paint (whole process): median {statistics.median(paints):.2f} s, "
              f"runs {', '.join(f'{p:.2f}' for p in paints)}")
        print(f"peak memory (VmHWM after G): {max(peaks) / 1024:.0f} MB")
    print(f"search keystroke to updated list: median {statistics.median(searches) * 1000:.0f} ms, "
          f"p90 {sorted(searches)[int(len(searches) * 0.9)] * 1000:.0f} ms, "
          f"max {max(searches) * 1000:.0f} ms over {len(searches)} keystrokes into an idle app")
    print(f"typing {1 / TYPING_GAP:.0f} keys a second: median {statistics.median(drawn) * 1000:.0f} ms, "
          f"p90 {sorted(drawn)[int(len(drawn) * 0.9)] * 1000:.0f} ms, "
          f"max {max(drawn) * 1000:.0f} ms; {len(drawn)} of {len(typing)} prefixes drawn "
          "(the others passed by the next key)")
    if cpu:
        print(f"CPU per keystroke into an idle app: median {statistics.median(cpu) * 1000:.0f} ms, "
              f"p90 {sorted(cpu)[int(len(cpu) * 0.9)] * 1000:.0f} ms, max {max(cpu) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
