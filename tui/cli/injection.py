"""Commands of the read path: `prime` (the memory block for a hat and a task) and `eval` (the
retrieval eval, memdeck's ranker beside the seeds')."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.cli import values
from tui.cli.output import info, out, print_json, table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prime", help="print the memories worth injecting for a hat and a task",
        description="Rank the project's memories for a hat, a task and the files in play, and print "
                    "the best of them as a prompt block within a token budget. A dry run unless "
                    "--record is given.")
    p.add_argument("--hat", default=None, help="the hat that will read the memories")
    p.add_argument("--task", default="", help="the task's text")
    p.add_argument("--paths", nargs="*", default=[], metavar="P", help="the files in play")
    p.add_argument("--tags", default=None, metavar="a,b", help="tags the task is about")
    p.add_argument("--budget", type=values.count, default=None, metavar="N",
                   help="tokens (default: injection.budget, 2000)")
    p.add_argument("--format", default="markdown", choices=("markdown", "json"))
    p.add_argument("--explain", action="store_true", help="after the block, why each candidate is in or out")
    p.add_argument("--session", default=None, metavar="ID",
                   help="the reading session: its own memories are left out")
    p.add_argument("--since", default=None, metavar="TIME",
                   help="only memories other sessions created or reinforced since TIME (2026-03-01T10:00, 30m)")
    p.add_argument("--record", action="store_true",
                   help="record the injection: use counts, usage boost, `used` events, an `injected` activity")
    p.set_defaults(handler=cmd_prime)

    p = sub.add_parser(
        "eval", help="run the retrieval eval: memdeck's ranker beside BM25 and the seeds' rules",
        description="Load the Ralph memory files an eval YAML names into a temporary store, run its "
                    "labelled queries through every ranker and print nDCG@8, recall@8, MRR, budget "
                    "recall and noise-probe tokens, overall and by difficulty.")
    p.add_argument("file", type=Path, help="the eval file (YAML)")
    p.add_argument("--budget", type=values.count, default=None, metavar="N",
                   help="tokens per query (default: the file's `budget`, else 500)")
    p.add_argument("--json", action="store_true", help="print {ranker: {metric: value}}")
    p.set_defaults(handler=cmd_eval)


def cmd_prime(ctx) -> int:
    from store.clock import parse_time
    from store.core import clean_list
    from store.injection import InjectionContext, prime

    args, store = ctx.args, ctx.store
    if args.record and not args.session:
        info("memdeck: --record without --session records usage but no session activity")
    context = InjectionContext(
        hat=args.hat, task=args.task, paths=tuple(args.paths), tags=clean_list(args.tags),
        session_id=args.session, budget=args.budget,
        since=parse_time(args.since, store.now()) if args.since else None,
    )
    result = prime(store, context, record=args.record)
    if args.format == "json":
        print_json(result.to_json())
        return 0
    if result.block:
        out(result.block, end="")
    else:
        info(f"nothing to inject: no memory of project {store.project!r} is relevant enough")
    if args.explain:
        _explain(result)
    return 0


def _signals(item) -> str:
    names = (("text", "text"), ("path", "path"), ("tag", "tag"), ("hat", "hat"),
             ("confidence", "conf"), ("recency", "recent"), ("relevance", "rel"))
    return " ".join(f"{short}={item.signals.get(name, 0):.2f}" for name, short in names)


def _explain(result) -> None:
    out()
    out(f"## Why ({len(result.included)} in, {len(result.excluded)} out; "
          f"{result.tokens} of {result.budget} tokens)")
    rows = [["in", r.memory.id, f"{r.score:.3f}", _signals(r), r.reason] for r in result.included]
    rows += [["out", r.memory.id, f"{r.score:.3f}", _signals(r), r.reason] for r in result.excluded]
    table(rows, ("", "id", "score", "signals", "reason"))


def cmd_eval(ctx) -> int:
    from store.config import Config
    from store.errors import InvalidInput
    from store.evaluation import DIFFICULTIES, METRICS, run_eval
    from store.projects import detect_project

    args = ctx.args
    if args.budget is not None and args.budget <= 0:
        raise InvalidInput("--budget must be a positive number of tokens")
    report = run_eval(args.file, config=Config.load(detect_project()[1]), budget=args.budget)
    if args.json:
        print_json(report.results)
        return 0
    out(f"{report.queries} queries, budget {report.budget} tokens")
    table([[name, *(f"{m[k]:.3f}" if k != "noise_tokens" else f"{m[k]:.0f}" for k in METRICS)]
           for name, m in report.results.items()], ("ranker", *METRICS))
    for difficulty in DIFFICULTIES:
        keys = [f"{k}:{difficulty}" for k in METRICS if k != "noise_tokens"]
        if not any(k in m for m in report.results.values() for k in keys):
            continue
        out()
        out(f"{difficulty} queries")
        table([[name, *(f"{m.get(k, 0.0):.3f}" for k in keys)] for name, m in report.results.items()],
              ("ranker", *(k.split(":")[0] for k in keys)))
    return 0
