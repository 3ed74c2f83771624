"""Benchmark import and export of N memories (default 100,000) in every format.

A synthetic memdeck JSON export (each memory with a `created` event, a third of them multi-line)
is imported into an empty store; that store is exported in each format; each export is imported
into another empty store. Rates are memories per second, parsing and writing included.

    .venv/bin/python benchmarks/bench_interop.py [N]
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store import Config, Store  # noqa: E402
from store.interop.files import write_output  # noqa: E402
from store.interop.transfer import export_text, import_file  # noqa: E402
from store.browse.search import MemoryFilter  # noqa: E402

WORDS = ("session worker queue retry timeout cache tenant invoice export billing webhook token "
         "schema migration index widget theme palette render config loader parser stream socket "
         "deploy rollback canary metric alert trace span lock mutex channel buffer flush").split()
TYPES = ("architecture", "pattern", "pitfall", "decision", "fix", "convention", "constraint", "context")
FORMATS = {"json": "json", "yaml": "yaml", "ralph": "md", "nova": "json"}


def synthetic_export(n: int) -> dict:
    rng = random.Random(n)
    start = 1_700_000_000
    memories = []
    for i in range(n):
        text = " ".join(rng.sample(WORDS, 12)).capitalize() + f" (case {i})."
        if i % 3 == 0:
            text += "\n\n" + " ".join(rng.sample(WORDS, 8))
        at = f"2023-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
        memories.append({
            "id": f"mem-{start + i}-{i % 65536:04x}", "type": rng.choice(TYPES), "content": text,
            "confidence": round(rng.uniform(0.3, 0.98), 3), "tags": rng.sample(WORDS, 2),
            "source": "explicit", "created_at": at, "updated_at": at,
            "events": [{"kind": "created", "at": at, "actor": "cli", "session_id": None,
                        "confidence_before": None, "confidence_after": 0.6, "detail": {}}],
        })
    return {"format": "memdeck", "version": 1, "project": "bench", "memories": memories}


def timed(label: str, n: int, action) -> float:
    began = time.perf_counter()
    result = action()
    seconds = time.perf_counter() - began
    print(f"{label:<28} {seconds:7.2f} s   {n / seconds:9,.0f} memories/s", flush=True)
    return result


def main(n: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="memdeck-bench-interop-"))
    source = work / "synthetic.json"
    source.write_text(json.dumps(synthetic_export(n)), encoding="utf-8")
    print(f"{n:,} memories in {work}")
    every = MemoryFilter()
    with Store.open(work / "main.db", project="bench", config=Config.defaults()) as store:
        timed("import json (synthetic)", n, lambda: import_file(store, str(source)))
        timed("re-import json (unchanged)", n, lambda: import_file(store, str(source)))
        files = {}
        for format, suffix in FORMATS.items():
            files[format] = work / f"export-{format}.{suffix}"
            text = timed(f"export {format}", n, lambda format=format: export_text(store, format, every))
            write_output(files[format], text, force=True)
    for format, path in files.items():
        size = path.stat().st_size / (1 << 20)
        with Store.open(work / f"from-{format}.db", project="bench", config=Config.defaults()) as store:
            summary = timed(f"import {format} ({size:.0f} MiB)", n, lambda path=path, format=format: import_file(store, str(path), format=format))
            assert len(summary.added) == n, (format, len(summary.added))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
