"""Benchmark `memdeck mcp` as Claude Code meets it: a real server process on stdio, timed from
its start to the answer to `initialize`, to `tools/list`, and to a first `context` call; then
`context` calls at 10k memories (prime's ranking plus recording the use), over stdio and through
the SDK's in-process client. The store is bench_prime's, copied so the recorded uses do not pile up.

    .venv/bin/python benchmarks/bench_mcp.py [10000]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_prime import PATHS, TASK, build  # noqa: E402

MEMDECK = ROOT / ".venv" / "bin" / "memdeck"
CONTEXT = {"task": TASK, "hat": "creator", "paths": list(PATHS)}


class Server:
    def __init__(self, db: Path) -> None:
        self.process = subprocess.Popen([str(MEMDECK), "--db", str(db), "--project", "bench", "mcp"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.next_id = 0

    def ask(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                             **({"params": params} if params is not None else {})}) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def start_to_answers(db: Path) -> tuple[float, float, float]:
    """ms from spawning the server to the answers to initialize, tools/list, a first context."""
    start = time.perf_counter()
    server = Server(db)
    server.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}})
    initialized = time.perf_counter()
    server.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    server.ask("tools/list")
    listed = time.perf_counter()
    answer = server.ask("tools/call", {"name": "context", "arguments": CONTEXT})
    assert not answer["result"]["isError"], answer
    first = time.perf_counter()
    server.close()
    return tuple((t - start) * 1000 for t in (initialized, listed, first))


def context_over_stdio(db: Path, calls: int = 30) -> float:
    server = Server(db)
    server.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}})
    server.ask("tools/call", {"name": "context", "arguments": CONTEXT})  # opens the store, warms the cache
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        server.ask("tools/call", {"name": "context", "arguments": CONTEXT})
        times.append(time.perf_counter() - start)
    server.close()
    return statistics.median(times) * 1000


def context_in_process(db: Path, calls: int = 30) -> tuple[float, int]:
    import anyio
    from mcp import Client

    from store import Store
    from store.engine.config import Config
    from store.engine.vocabulary import Vocabulary
    from tui.mcp_server.agent_session import AgentSession
    from tui.mcp_server.server import build_server

    session = AgentSession(lambda: Store.open(db, project="bench"))
    server = build_server(session, types=Vocabulary.from_config(Config.defaults()).types, pinned=True)

    async def run() -> tuple[float, int]:
        async with Client(server) as client:
            await client.call_tool("context", CONTEXT)
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                result = await client.call_tool("context", CONTEXT)
                times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000, len(json.loads(result.content[-1].text)["ids"])

    try:
        return anyio.run(run)
    finally:
        session.close()


def main(sizes: list[int]) -> None:
    folder = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench"))
    folder.mkdir(parents=True, exist_ok=True)
    for n in sizes:
        built = folder / f"prime-{n}.db"
        if not built.exists():
            build(built, n)
        with tempfile.TemporaryDirectory() as scratch:
            db = Path(scratch) / "bench.db"
            starts = []
            for _ in range(5):
                shutil.copy(built, db)
                starts.append(start_to_answers(db))
            shutil.copy(built, db)
            stdio = context_over_stdio(db)
            shutil.copy(built, db)
            in_process, injected = context_in_process(db)
        medians = [statistics.median(s[i] for s in starts) for i in range(3)]
        print(f"{n:,} memories (medians of 5 starts, 30 calls)")
        print(f"  start → initialize answered   {medians[0]:7.0f} ms")
        print(f"  start → tools/list answered   {medians[1]:7.0f} ms")
        print(f"  start → first context answer  {medians[2]:7.0f} ms")
        print(f"  context call over stdio       {stdio:7.1f} ms")
        print(f"  context call in process       {in_process:7.1f} ms  ({injected} memories injected)")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000])
