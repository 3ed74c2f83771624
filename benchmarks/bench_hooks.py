"""Benchmark the hooks as the agents run them: a whole `memdeck hook …` process fed each agent's
own payload (tests/data/agents/, and Claude Code's), on the 10,000-memory store of
`bench_prime.py`, against the Python import floor measured in the same minutes.

    .venv/bin/python benchmarks/bench_hooks.py [--runs N] [--words-only] [--warm] [SIZE]

The floor is `python -c "import peewee, rapidfuzz, yaml"`: what any Python tool using memdeck's
runtime packages pays before doing anything. Each hook run is followed by a floor run, so both
see the same load; the ratio is of the two medians (issue 42's goal: at most 1.3), of wall time
and of CPU time (user and system), which a loaded machine changes less. Each run
works on a copy of the store made once (a session start records a session and runs decay, so
the first run of each hook warms the page cache and is not counted). `--words-only` runs with
`injection.semantic: false` (as without the semantic extra: no numpy, no vectors read).

Without `--warm` every hook runs in its own process (MEMDECK_NO_SERVE=1: none asks or starts a
hook server). With `--warm` a hook server (`memdeck hook serve`) is started on the store first and
the prompt and session-start hooks are answered by it (as a session start is when a server is up:
a second session on the store, a resume, a /clear); the CPU the server spends on each (from its
`status`, asked before and after) is counted beside the hook process's own, and the last column
is the ratio of the two together to the floor. The `served` column counts the runs the server
answered (its `status` again): a run it did not answer ran cold, and the row says so.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_prime import build  # noqa: E402

AGENTS = ROOT / "tests" / "data" / "agents"
CLAUDE = {  # Claude Code's payloads, as in docs/agents.md
    "session-start": '{"session_id": "8d3f5a2e-1c4b-4e7a-9f60-2b5d8c1e7a94", "transcript_path": "@TRANSCRIPT@", '
                     '"cwd": "@CWD@", "hook_event_name": "SessionStart", "source": "startup"}',
    "user-prompt-submit": '{"session_id": "8d3f5a2e-1c4b-4e7a-9f60-2b5d8c1e7a94", "transcript_path": "@TRANSCRIPT@", '
                          '"cwd": "@CWD@", "hook_event_name": "UserPromptSubmit", "prompt": "@PROMPT@"}',
}
# (agent, hook, payload file under tests/data/agents, or Claude Code's above)
HOOKS = (
    ("claude-code", "session-start", None),
    ("claude-code", "user-prompt-submit", None),
    ("codex", "session-start", "codex/session-start.json"),
    ("codex", "user-prompt-submit", "codex/user-prompt-submit.json"),
    ("gemini", "session-start", "gemini/session-start.json"),
    ("gemini", "user-prompt-submit", "gemini/before-agent.json"),
    ("cursor", "session-start", "cursor/session-start.json"),
    ("cursor", "user-prompt-submit", "cursor/before-submit-prompt.json"),
)
FLOOR = [sys.executable, "-c", "import peewee, rapidfuzz, yaml"]


def payload(hook: str, sample: str | None, cwd: Path) -> str:
    text = CLAUDE[hook] if sample is None else (AGENTS / sample).read_text(encoding="utf-8")
    prompt = "why does the webhook retry timeout in the billing worker queue never stop backing off?"
    return (text.replace("@CWD@", str(cwd)).replace("@TRANSCRIPT@", "")
            .replace("@PROMPT@", prompt).replace("why does the payment retry loop never stop backing off?", prompt))


def timed(command: list[str], stdin: str | None, env: dict) -> tuple[float, float]:
    """The run's wall time and its CPU time (user and system: what the load changes least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:  # noqa: C901 (one story: the store, the server, then each hook against the floor)
    parser = argparse.ArgumentParser()
    parser.add_argument("size", type=int, nargs="?", default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--words-only", action="store_true")
    parser.add_argument("--warm", action="store_true",
                        help="start a hook server first; the prompt and session-start hooks ask it")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "store", quiet=1)
    compileall.compile_dir(ROOT / "tui", quiet=1)
    folder = Path(os.environ.get("MEMDECK_BENCH_DIR", "/tmp/memdeck-bench"))
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"prime-{args.size}.db"
    if not source.exists():
        build(source, args.size)
    work = folder / f"hooks-{args.size}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    shutil.copy(source, work / "store.db")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMDECK_DB": str(work / "store.db"),
           "MEMDECK_PROJECT": "bench", "MEMDECK_HOME": str(work), "MEMDECK_NO_SERVE": "1"}
    if args.words_only:
        (work / "words-alone.yml").write_text("injection:\n  semantic: false\n", encoding="utf-8")
        env["MEMDECK_CONFIG"] = str(work / "words-alone.yml")
    memdeck = str(Path(sys.executable).parent / "memdeck")
    server = runtime = None
    if args.warm:
        runtime = tempfile.mkdtemp(prefix="mdb-")  # short: a socket's path holds about 100 bytes
        env["XDG_RUNTIME_DIR"] = runtime
        del env["MEMDECK_NO_SERVE"]
        server = start_server(memdeck, work / "store.db", env, work / "server.log")
    print(f"code: {ROOT}; {args.size:,} memories; load average {os.getloadavg()[0]:.1f}; "
          f"medians of {args.runs} runs (ms); {'words alone' if args.words_only else 'semantic'}; "
          f"{'warm: hooks answered by a hook server' if args.warm else 'cold: every hook in its own process'}")
    print(f"{'agent':<12} {'hook':<19} {'hook ms':>8} {'floor ms':>9} {'ratio':>6}   "
          f"{'hook cpu':>8} {'floor cpu':>9} {'ratio':>6}"
          + (f" {'server cpu':>10} {'ratio':>6} {'served':>7}" if server else ""))
    try:
        for agent, hook, sample in HOOKS:
            command = [memdeck, "hook", hook, "--agent", agent]
            stdin = payload(hook, sample, work)
            hooks, floors, served, answered = [], [], [], 0
            for run in range(args.runs + 1):
                before = server_state(server)
                wall = timed(command, stdin, env)
                after = server_state(server)
                floor = timed(FLOOR, None, env)
                if run:
                    hooks.append(wall)
                    floors.append(floor)
                    served.append(after[0] - before[0])
                    answered += after[1] - before[1]
            h, f = (statistics.median(x[0] for x in hooks) * 1000, statistics.median(x[0] for x in floors) * 1000)
            hc, fc = (statistics.median(x[1] for x in hooks) * 1000, statistics.median(x[1] for x in floors) * 1000)
            line = f"{agent:<12} {hook:<19} {h:>8.0f} {f:>9.0f} {h / f:>6.2f}   {hc:>8.0f} {fc:>9.0f} {hc / fc:>6.2f}"
            if server:
                both = statistics.median(x[1] + s for x, s in zip(hooks, served)) * 1000
                line += f" {statistics.median(served) * 1000:>10.1f} {both / fc:>6.2f} {answered:>3}/{args.runs:<3}"
            print(line, flush=True)
        if server:
            print(f"hooks the server answered: {server_status(server)['answered']}")
    finally:
        if server:
            server[0].terminate()
            server[0].wait()
            shutil.rmtree(runtime, ignore_errors=True)


def start_server(memdeck: str, store: Path, env: dict, log: Path):
    """`memdeck hook serve` on the store, once it answers: (its process, its socket)."""
    from tui.cli import hook_wire

    where = hook_wire.Where(str(store), env)
    with open(log, "wb") as out:
        process = subprocess.Popen([memdeck, "--db", str(store), "hook", "serve", "--idle", "3600"], env=env,
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        try:
            hook_wire.ask(where.socket, "status")
            return process, where.socket
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"the hook server did not start: {log.read_text()}")


def server_status(server) -> dict:
    from tui.cli import hook_wire

    return hook_wire.ask(server[1], "status")["status"]


def server_state(server) -> tuple[float, int]:
    """The server's CPU time so far (user and system) and the hooks it answered; 0, 0 without one."""
    if not server:
        return 0.0, 0
    status = server_status(server)
    return status["cpu"], status["answered"]


if __name__ == "__main__":
    main()
