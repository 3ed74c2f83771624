"""Benchmark ingest throughput on a large transcript: the fixture transcripts concatenated
COPIES times (default 100) into one session, ingested into an empty store.

Reports records (lines) per second and MB per second for a first ingest, by the wall clock and
by the process's CPU time, best of RUNS (default 3) runs each into a fresh store (the machine is
shared: the best run is the one least disturbed), and the time a second ingest of the same file
takes (it must find nothing new).

    .venv/bin/python benchmarks/bench_ingest.py [COPIES] [RUNS]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store import Config, Store  # noqa: E402
from store.capture.ingest import ingest_file  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures" / "transcripts"
SESSION = "bench-session"


def build(path: Path, copies: int) -> int:
    """Write the big transcript; every record moved into one session. Returns the line count."""
    lines = []
    for fixture in sorted(FIXTURES.glob("*.jsonl")):
        for raw in fixture.read_text(encoding="utf-8").splitlines():
            record = json.loads(raw)
            if "sessionId" in record:
                record["sessionId"] = SESSION
            lines.append(json.dumps(record, ensure_ascii=False))
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(copies):
            handle.write("\n".join(lines) + "\n")
    return len(lines) * copies


def run(folder: Path, transcript: Path, records: int) -> tuple[float, float, float, object]:
    """One first ingest and one repeat into a fresh store: (wall s, CPU s, repeat s, report)."""
    folder.mkdir()
    with Store.open(folder / "bench.db", project="bench", config=Config.defaults()) as store:
        start, cpu = time.perf_counter(), time.process_time()
        report = ingest_file(store, transcript)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        again = ingest_file(store, transcript)
        repeat = time.perf_counter() - start
    assert report.lines == records and again.lines == 0
    return wall, cpu, repeat, report


def main() -> None:
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as folder:
        transcript = Path(folder) / "big.jsonl"
        records = build(transcript, copies)
        megabytes = transcript.stat().st_size / 1e6
        results = [run(Path(folder) / f"run{i}", transcript, records) for i in range(runs)]
    wall = min(r[0] for r in results)
    cpu = min(r[1] for r in results)
    repeat = min(r[2] for r in results)
    report = results[0][3]
    print(f"transcript: {records:,} records, {megabytes:.1f} MB ({copies} copies of the fixtures), best of {runs}")
    print(f"first ingest: {wall:.2f} s = {records / wall:,.0f} records/s, {megabytes / wall:.1f} MB/s "
          f"({report.activities:,} activities, {len(report.candidates)} candidates)")
    print(f"  CPU time {cpu:.2f} s = {records / cpu:,.0f} records/s, {megabytes / cpu:.1f} MB/s")
    print(f"second ingest (nothing new): {repeat:.3f} s")


if __name__ == "__main__":
    main()
