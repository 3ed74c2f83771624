"""Silence on prompts nobody tuned on: the real user prompts of the shared Claude Code
transcripts, asked in every real Ralph project of the shared fixtures (docs/injection.md).

    .venv/bin/python benchmarks/real_prompts.py [--shared ../shared] [--budget 2000] [--show N]

The transcripts are sessions on other projects (a Go templating tool, a tmux multiplexer, an
MCP server, ...), so no memory of any Ralph project is about them: whatever a prime injects is
noise, as with the eval's cross-project probes, but on prompts people actually typed and on
corpora no eval set uses as well as those they do. Each Ralph file is its own project in one
store (a file the Ralph parser reads no memory from is reported and left out); a prompt is a
user record's text that is not a slash command's body (`isMeta`), a subagent's prompt
(`isSidechain`), a compaction summary (`isCompactSummary`), a command or tool wrapper (`<...>`), an interrupt, or under 40 characters.
Prints the share of primes injecting anything, the mean tokens, the share over 500, per
project too, and the `--show` largest blocks with the prompt that got them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store import Store  # noqa: E402
from store.engine.errors import InvalidInput  # noqa: E402
from store.evaluation.eval_set import Corpus  # noqa: E402
from store.evaluation.retrieval import load_corpora  # noqa: E402
from store.retrieval.injection import InjectionContext, prime  # noqa: E402

SHORTEST = 40
LARGE = 500


def prompts(folder: Path) -> list[str]:
    """The user's own prompts of every transcript in `folder`, in file order, once each."""
    found: dict[str, None] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict) or record.get("type") != "user":
                continue
            if record.get("isMeta") or record.get("isSidechain") or record.get("isCompactSummary"):
                continue
            content = (record.get("message") or {}).get("content")
            if isinstance(content, list):
                content = " ".join(block.get("text", "") for block in content
                                   if isinstance(block, dict) and block.get("type") == "text")
            if not isinstance(content, str):
                continue
            text = content.strip()
            if len(text) < SHORTEST or text.startswith("<") or text.startswith("[Request interrupted"):
                continue
            found.setdefault(text[:1000], None)
    return list(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--show", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    args = parser.parse_args()
    tasks = prompts(args.shared / "fixtures" / "transcripts")
    files = sorted((args.shared / "fixtures" / "ralph").glob("*.md"))
    if not tasks or not files:
        print(f"no transcripts or Ralph files under {args.shared}/fixtures", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        with Store.open(Path(folder) / "memdeck.db", project="probe") as store:
            projects = []
            for path in files:
                project = path.name.split("__")[1]
                try:
                    if load_corpora(store, [Corpus(project, path)])[project]:
                        projects.append(project)
                    else:
                        print(f"left out {path.name}: the Ralph parser reads no memory from it")
                except InvalidInput as exc:
                    print(f"left out {path.name}: {exc}".splitlines()[0][:150])
            sizes = {p.name: p.memory_count for p in store.projects()}
            rows = []
            for project in projects:
                size = sizes.get(project, 0)
                for task in tasks:
                    result = prime(store, InjectionContext(task=task, budget=args.budget, project=project))
                    rows.append((project, size, task, result.tokens if result.included else 0, len(result.included)))
    if args.json:
        print(json.dumps({"prompts": len(tasks), "projects": projects, **_totals(rows)}))
        return 0
    print(f"{len(tasks)} real prompts x {len(projects)} projects = {len(rows)} primes, budget {args.budget}")
    _report("all", rows)
    for project in projects:
        _report(f"  {project}", [r for r in rows if r[0] == project])
    for project, _, task, tokens, count in sorted(rows, key=lambda r: -r[3])[:args.show]:
        if tokens:
            print(f"{tokens:5} tokens, {count} memories, in {project}: {task[:110]!r}")
    return 0


def _totals(rows: list[tuple]) -> dict[str, float]:
    tokens = [r[3] for r in rows]
    return {"primes": len(tokens), "injecting": sum(1 for t in tokens if t) / len(tokens),
            "mean_tokens": statistics.mean(tokens), "over_500": sum(1 for t in tokens if t > LARGE) / len(tokens)}


def _report(label: str, rows: list[tuple]) -> None:
    totals = _totals(rows)
    size = f" ({rows[0][1]} memories)" if label.startswith("  ") and rows else ""
    print(f"{label}{size}: injecting {totals['injecting']:.0%}, mean {totals['mean_tokens']:.0f} tokens, "
          f"over {LARGE} {totals['over_500']:.1%}")


if __name__ == "__main__":
    raise SystemExit(main())
