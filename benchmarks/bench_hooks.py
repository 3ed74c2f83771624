"""Benchmark the hooks as the agents run them: a whole `memdeck hook …` process fed each agent's
own payload (tests/data/agents/, and Claude Code's), on the 10,000-memory store of
`bench_prime.py`, against the Python import floor measured in the same minutes.

    .venv/bin/python benchmarks/bench_hooks.py [--runs N] [--words-only] [SIZE]

The floor is `python -c "import peewee, rapidfuzz, yaml"`: what any Python tool using memdeck's
runtime packages pays before doing anything. Each hook run is followed by a floor run, so both
see the same load; the ratio is of the two medians (issue 42's goal: at most 1.3), of wall time
and of CPU time (user and system), which a loaded machine changes less. Each run
works on a copy of the store made once (a session start records a session and runs decay, so
the first run of each hook warms the page cache and is not counted). `--words-only` runs with
`injection.semantic: false` (as without the semantic extra: no numpy, no vectors read).
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("size", type=int, nargs="?", default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--words-only", action="store_true")
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
           "MEMDECK_PROJECT": "bench", "MEMDECK_HOME": str(work)}
    if args.words_only:
        (work / "words-alone.yml").write_text("injection:\n  semantic: false\n", encoding="utf-8")
        env["MEMDECK_CONFIG"] = str(work / "words-alone.yml")
    memdeck = str(Path(sys.executable).parent / "memdeck")
    print(f"code: {ROOT}; {args.size:,} memories; load average {os.getloadavg()[0]:.1f}; "
          f"medians of {args.runs} runs (ms); {'words alone' if args.words_only else 'semantic'}")
    print(f"{'agent':<12} {'hook':<19} {'hook ms':>8} {'floor ms':>9} {'ratio':>6}   "
          f"{'hook cpu':>8} {'floor cpu':>9} {'ratio':>6}")
    for agent, hook, sample in HOOKS:
        command = [memdeck, "hook", hook, "--agent", agent]
        stdin = payload(hook, sample, work)
        hooks, floors = [], []
        for run in range(args.runs + 1):
            wall = timed(command, stdin, env)
            floor = timed(FLOOR, None, env)
            if run:
                hooks.append(wall)
                floors.append(floor)
        h, f = (statistics.median(x[0] for x in hooks) * 1000, statistics.median(x[0] for x in floors) * 1000)
        hc, fc = (statistics.median(x[1] for x in hooks) * 1000, statistics.median(x[1] for x in floors) * 1000)
        print(f"{agent:<12} {hook:<19} {h:>8.0f} {f:>9.0f} {h / f:>6.2f}   {hc:>8.0f} {fc:>9.0f} {hc / fc:>6.2f}",
              flush=True)


if __name__ == "__main__":
    main()
