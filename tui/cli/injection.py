"""Commands of the read path: `prime` (the memory block for a hat and a task) and `eval` (the
retrieval eval, memdeck's ranker beside the seeds')."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.cli import values
from tui.cli.output import info, out, print_json, table

# What a report or a cross-validation run with --pool says after its title.
POOLED = ", every project holding every corpus (--pool)"


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
    p.add_argument("--json", action="store_const", const="json", dest="format", default="markdown",
                   help="print the result as JSON, as every command's --json does")
    p.add_argument("--format", default="markdown", choices=("markdown", "json"),
                   help="markdown (the block, the default) or json (the same as --json)")
    p.add_argument("--explain", action="store_true", help="after the block, why each candidate is in or out")
    p.add_argument("--session", default=None, metavar="ID",
                   help="the reading session: its own memories are left out")
    p.add_argument("--since", default=None, metavar="TIME",
                   help="only memories other sessions created or reinforced since TIME (2026-03-01T10:00, 30m)")
    p.add_argument("--record", action="store_true",
                   help="record the injection: use counts, usage boost, `used` events, an `injected` activity")
    p.set_defaults(handler=cmd_prime)

    p = sub.add_parser(
        "eval", help="run the retrieval eval: memdeck's ranker beside plain BM25",
        description="Load the memory files an eval YAML names (Ralph files or memdeck JSON exports) into a temporary store, run its "
                    "labelled queries through every ranker and print nDCG@8, recall@8, MRR, budget "
                    "recall and noise-probe tokens, overall, by difficulty, per project and per hat, "
                    "with the signals memdeck's ranker used. With two files and --cross: the "
                    "two-fold cross-validation of the gate's settings.")
    p.add_argument("files", type=Path, nargs="+", metavar="file", help="an eval file (YAML)")
    p.add_argument("--budget", type=values.count, default=None, metavar="N",
                   help="tokens per query (default: the file's `budget`, else 500)")
    signal = p.add_mutually_exclusive_group()
    signal.add_argument("--words-only", action="store_true",
                        help="rank on words alone, as without the semantic extra")
    signal.add_argument("--meaning-only", action="store_true",
                        help="rank on meaning alone: the text signal's weight 0 (the gate still reads the words)")
    p.add_argument("--cross", action="store_true",
                   help="two files: tune the gate on each, report the other with what was tuned")
    p.add_argument("--fill", action=argparse.BooleanOptionalAction, default=None,
                   help="set injection.gate.fill for the run (on by default): on topic, the other "
                        "candidates fill the room the memories with evidence leave")
    p.add_argument("--pool", action="store_true",
                   help="give every project every other corpus too: do the ranking and the gate "
                        "hold in a larger project on more topics?")
    p.add_argument("--folds", choices=("project",), default=None,
                   help="leave-one-project-out over every project of the files: choose the gate's "
                        "settings on the others by a small grid, report the held-out project; "
                        "prints the held-out folds only")
    p.add_argument("--neighbours", action=argparse.BooleanOptionalAction, default=True,
                   help="also load each project alone and compare its blocks with those beside "
                        "every corpus (on by default)")
    p.add_argument("--losses", action="store_true",
                   help="list each relevant memory memdeck's block leaves out, and where it was lost")
    p.add_argument("--feedback-folds", action="store_true",
                   help="per project, give feedback on half the tasks (helpful on labelled relevant "
                        "memories in the block, not_relevant on the others; with the index on, open its "
                        "lines labelled relevant) and report block precision, budget recall and "
                        "reachable recall on the other half, before and after")
    p.add_argument("--json", action="store_true", help="print {ranker: {metric: value}} (per file with several)")
    p.set_defaults(handler=cmd_eval)


def cmd_prime(ctx) -> int:
    from store.api import parse_time, clean_list, InjectionContext, prime

    args, store = ctx.args, ctx.store
    if args.record and not args.session:
        info("memdeck: --record without --session records usage but no session activity")
    context = InjectionContext(
        hat=args.hat, task=args.task, paths=tuple(args.paths), tags=clean_list(args.tags),
        session_id=args.session, budget=args.budget,
        since=parse_time(args.since, store.now()) if args.since else None,
    )
    result = prime(store, context, record=args.record, layers=ctx.layers)
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
    """The signals, the ones that say a memory is about the task first; zeros left out after them."""
    names = (("relevance", "rel"), ("text", "text"), ("semantic", "sem"), ("cosine", "cos"), ("path", "path"),
             ("tag", "tag"), ("hat", "hat"), ("confidence", "conf"), ("recency", "recent"))
    return " ".join(f"{short}={item.signals.get(name, 0):.2f}".replace("=0.", "=.") for n, (name, short) in enumerate(names)
                    if n < 4 or item.signals.get(name, 0))


# `--explain` lays its rows out in the terminal's width (COLUMNS, else the terminal's), or in
# this many columns when the output is not a terminal; a long cell wraps in its column, never cut.
EXPLAIN_WIDTH = 160
# Below this many columns for signals, reason and gate together, each candidate is a few lines.
EXPLAIN_NARROWEST = 48


def _own_verdict(verdict: str) -> str:
    """A candidate's verdict without the task-level evidence it repeats (printed once above)."""
    for mark in (" (evidence", "; weak evidence", ": weak evidence"):
        if mark in verdict:
            verdict = verdict.split(mark, 1)[0] + ("; weak evidence" if "weak" in mark else "")
    return verdict


def explain_width() -> int:
    """COLUMNS when set, else the terminal's width when the output is one, else `EXPLAIN_WIDTH`
    (a pipe or a file has no width: asking the process's own terminal would lay out a piped
    explanation by whatever window ran it)."""
    import shutil

    from store.api import environment
    from tui.cli.output import stdout_is_terminal

    if (columns := environment.columns()) is not None:
        return max(40, columns)
    return max(40, shutil.get_terminal_size((EXPLAIN_WIDTH, 24)).columns) if stdout_is_terminal() else EXPLAIN_WIDTH


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def _verdict_line(gate: dict) -> str:
    word = "sure" if gate["sure"] else "on topic" if gate["on_topic"] else "not on topic"
    whose = ""
    if gate.get("layers"):  # several layers: the strongest one's evidence is the task's
        others = ", ".join(f"{name} {value:.2f}" for name, value in gate["layers"].items() if name != gate["layer"])
        whose = f" by the {gate['layer']} layer's evidence (" + (others or "no other layer") + ")"
    return (f"gate: confidence {gate['confidence']:.2f} ({word}){whose}; "
            f"words {gate['word_surprise']:.2f} over chance (mark {gate['word_surprise_mark']:g}, "
            f"~{gate['expected_by_chance']:.3f} memories expected by chance); cosine {gate['cosine']:.2f} vs chance "
            f"{gate['chance_cosine']:.2f}, margin {gate['cosine_margin']:+.2f} (alone {gate['cosine_margin_alone']:.2f})")


def _explain(result, width: int | None = None) -> None:
    from tui.cli.output import one_line

    width = width or explain_width()
    out()
    lines = {r.memory.id for r in result.index}
    listed = f", {len(lines)} of them as a line of the index ({result.index_tokens} tokens)" if lines else ""
    out(f"## Why ({len(result.included)} in, {len(result.excluded)} out{listed}; "
        f"{result.tokens} of {result.budget} tokens)")
    gate = result.gate
    if gate is None:
        out("gate: lifted (no task, paths or tags)")
    else:
        for line in _wrap(_verdict_line(gate), width):
            out(line)
        most = gate.get("most_memories") or 0
        cap = f"; at most {most} memories with evidence" if most and gate["on_topic"] else ""
        spend = f"spend: up to {gate['spend']:.0%} of the budget ({result.budget} tokens), by the gate's confidence{cap}"
        if result.included and gate["spend"] == 0:  # the best candidate always has room
            spend += "; the best candidate is let in whatever the spend"
        for line in _wrap(spend, width):
            out(line)
    rows = [["in", r.memory.id, f"{r.score:.3f}", _signals(r), r.reason, _own_verdict(r.gate)] for r in result.included]
    rows += [["line" if r.memory.id in lines else "out", r.memory.id, f"{r.score:.3f}", _signals(r), _reason(r),
              _own_verdict(r.gate)] for r in result.excluded]
    rows = [[one_line(str(c)) for c in row] for row in rows]
    headers = ("", "id", "score", "signals", "reason", "gate")
    fixed = [max([len(h), *(len(r[n]) for r in rows)]) for n, h in enumerate(headers[:3])]
    room = width - sum(fixed) - 2 * 5
    natural = [max([len(headers[n]), *(len(r[n]) for r in rows)]) for n in (3, 4, 5)]
    if room >= sum(natural):
        widths = natural
    elif room >= EXPLAIN_NARROWEST:
        # The signals are short words: wrapped, they keep up to 2/5; reason and gate share the rest.
        signals = min(natural[0], max(12, room * 2 // 5))
        reason = min(natural[1], max(12, (room - signals) // 2))
        widths = [signals, reason, room - signals - reason]
    else:  # too narrow for columns side by side: each candidate's id line, then its words below
        for row in rows:
            out(f"{row[0]:<3}  {row[1]}  {row[2]}")
            for label, text in zip(("signals", "reason", "gate"), row[3:]):
                for n, line in enumerate(_wrap(f"{label}: {text}", width - 5)):
                    out(("     " if n == 0 else "       ") + line)
        return
    widths = [*fixed, *widths]
    out("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
    for row in rows:
        cells = [[c] for c in row[:3]] + [_wrap(c, w) for c, w in zip(row[3:], widths[3:])]
        for n in range(max(len(c) for c in cells)):
            out("  ".join((c[n] if n < len(c) else "").ljust(w) for c, w in zip(cells, widths)).rstrip())


def _reason(item) -> str:
    """Why a candidate is out; when the gate kept it out, its verdict (with the numbers) is the
    gate column's, printed once."""
    return "below the gate (see gate)" if item.reason and item.reason == item.gate else item.reason


def _setting(value) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else f"{value:g}"


def cmd_eval(ctx) -> int:
    from store.api import Config, InvalidInput, cross_validate, run_eval, detect_project

    args = ctx.args
    if args.budget is not None and args.budget <= 0:
        raise InvalidInput("--budget must be a positive number of tokens")
    if args.cross and len(args.files) != 2:
        raise InvalidInput("--cross takes two eval files: each tunes the gate for the other")
    config = Config.load(detect_project()[1])
    # With a PostgreSQL --db, the eval's temporary stores are built (and dropped) on that server.
    server = str(ctx.args.db) if ctx.args.db is not None else None
    if args.words_only:
        config = config.with_overrides({"injection.semantic": False}, "--words-only")
    if args.meaning_only:
        config = config.with_overrides({"injection.weights.text": 0.0}, "--meaning-only")
    if args.fill is not None:
        config = config.with_overrides({"injection.gate.fill": args.fill}, "--fill" if args.fill else "--no-fill")
    if args.feedback_folds:
        return _feedback_folds(args, config, server)
    if args.folds == "project":
        from store.api import project_folds

        folds, held = project_folds(args.files, config=config, budget=args.budget, server=server)
        if args.json:
            print_json({"folds": [fold.__dict__ for fold in folds], "held_out": held})
            return 0
        _print_project_folds(folds, held)
        return 0
    if args.cross:
        folds = cross_validate(*args.files, config=config, budget=args.budget, server=server, pool=args.pool)
        if args.json:
            print_json([fold.__dict__ for fold in folds])
            return 0
        _print_folds(folds, args.pool)
        return 0
    reports = {path: run_eval(path, config=config, budget=args.budget, server=server,
                              explain_losses=args.losses, pool=args.pool, neighbours=args.neighbours)
               for path in args.files}
    if args.json:
        print_json(next(iter(reports.values())).results if len(reports) == 1
                   else {str(path): report.results for path, report in reports.items()})
        return 0
    for number, (path, report) in enumerate(reports.items()):
        if number:
            out()
        _print_report(path, report)
        if args.losses:
            _print_losses(report)
    return 0


def _print_losses(report) -> None:
    from store.api import LOSS_KINDS

    out()
    out(f"relevant memories memdeck's block leaves out (budget {report.budget}): "
        f"{len(report.losses)} in {len({loss.query for loss in report.losses})} queries")
    table([[loss.query, loss.memory, str(loss.grade), loss.kind, "-" if loss.rank is None else str(loss.rank),
            str(loss.tokens), "yes" if loss.bm25 else "no"] for loss in report.losses],
          ("query", "memory", "grade", "lost", "rank", "tokens", "bm25 has it"))
    counts = {kind: sum(1 for loss in report.losses if loss.kind == kind) for kind in LOSS_KINDS}
    out("by kind: " + ", ".join(f"{kind} {n}" for kind, n in counts.items()))


def _print_report(path, report) -> None:
    from store.api import DIFFICULTIES, METRICS

    pooled = POOLED if report.pool else ""
    out(f"{path.name}: {report.queries} queries, budget {report.budget} tokens{pooled}")
    signals = report.signals
    out(f"signals: semantic {signals['semantic']}; weights "
          + ", ".join(f"{k} {v:g}" for k, v in signals["weights"].items())
          + "; gate " + ", ".join(f"{k} {_setting(v)}" for k, v in signals["gate"].items()))
    table([[name, *(f"{m[k]:.3f}" if k != "noise_tokens" else f"{m[k]:.0f}" for k in METRICS)]
           for name, m in report.results.items()], ("ranker", *METRICS))
    _print_probes(report)
    for difficulty in DIFFICULTIES:
        keys = [f"{k}:{difficulty}" for k in METRICS if k != "noise_tokens"]
        if not any(k in m for m in report.results.values() for k in keys):
            continue
        out()
        out(f"{difficulty} queries")
        table([[name, *(f"{m.get(k, 0.0):.3f}" for k in keys)] for name, m in report.results.items()],
              ("ranker", *(k.split(":")[0] for k in keys)))
    compared = [name for name in ("memdeck", "bm25") if name in report.by]
    for by in ("project", "difficulty", "hat"):
        out()
        out(f"per {by}: " + " vs ".join(compared) + " (nDCG@8 / budget recall / noise tokens)")
        groups = report.by[compared[0]][by]
        rows = []
        for value, metrics in groups.items():
            cells = [value, f"{metrics['queries']:.0f}"]
            for name in compared:
                m = report.by[name][by][value]
                cells += [f"{m['ndcg@8']:.3f}", f"{m['budget_recall']:.3f}",
                          f"{m['noise_tokens']:.0f}" if "noise_tokens" in m else "-"]
            rows.append(cells)
        headers = [by, "queries"]
        for name in compared:
            headers += [f"{name} ndcg", "recall", "noise"]
        table(rows, headers)


def _print_folds(folds, pool: bool = False) -> None:
    pooled = POOLED if pool else ""
    out(f"two-fold cross-validation of the gate (tuned on one set, reported on the other){pooled}")
    rows = []
    for fold in folds:
        settings = ", ".join(f"{k.rsplit('.', 1)[-1]} {v:g}" for k, v in fold.settings.items())
        for role, name, metrics in (("tuned", fold.tuned_on, fold.tuned), ("reported", fold.reported_on, fold.reported)):
            rows.append([role, name, settings, f"{metrics['ndcg@8']:.3f}", f"{metrics['budget_recall']:.3f}",
                         f"{metrics['noise_tokens']:.0f}"])
    table(rows, ("", "set", "settings", "ndcg@8", "budget_recall", "noise_tokens"))


def _feedback_folds(args, config, server) -> int:
    from store.api import feedback_folds

    results = {path: feedback_folds(path, config=config, budget=args.budget, server=server) for path in args.files}
    if args.json:
        print_json({str(path): [fold.__dict__ for fold in folds] for path, folds in results.items()})
        return 0
    for number, (path, folds) in enumerate(results.items()):
        if number:
            out()
        out(f"{path.name}: feedback on one half of each project's tasks, measured on the other (two folds)")
        rows = []
        for n, fold in enumerate(folds, start=1):
            for when, m in (("before", fold.before), ("after", fold.after)):
                rows.append([str(n), when, f"{m['queries']:.0f}", f"{m['precision']:.3f}",
                             f"{m['pooled_precision']:.3f}", f"{m['budget_recall']:.3f}",
                             f"{m['reachable_recall']:.3f}", f"{m['memories']:.2f}"])
        for when in ("before", "after"):
            ms = [getattr(fold, when) for fold in folds]
            rows.append(["mean", when, f"{sum(m['queries'] for m in ms):.0f}",
                         *(f"{sum(m[k] for m in ms) / len(ms):.3f}"
                           for k in ("precision", "pooled_precision", "budget_recall", "reachable_recall")),
                         f"{sum(m['memories'] for m in ms) / len(ms):.2f}"])
        table(rows, ("fold", "", "queries", "precision", "pooled", "budget_recall", "reachable_recall", "memories"))
        given = {k: sum(fold.verdicts[k] for fold in folds) for k in folds[0].verdicts}
        out("feedback given: " + ", ".join(f"{k} {v}" for k, v in given.items()))
    return 0


def _print_probes(report) -> None:
    """Cross-project probes and the alone/with-neighbours comparison, for the rankers that have them."""
    from store.api import CROSS_LARGE

    rows = []
    for name, m in report.results.items():
        if "cross_probes" not in m and "alone_differs" not in m:
            continue
        cross = ([f"{m['cross_probes']:.0f}", f"{m['cross_injecting']:.0%}", f"{m['cross_tokens']:.0f}",
                  f"{m['cross_over_500']:.0%}"] if "cross_probes" in m else ["-"] * 4)
        alone = ([f"{m['alone_differs']:.0f}", f"{m['noise_tokens_alone']:.0f}"] if "alone_differs" in m
                 else ["-"] * 2)
        rows.append([name, *cross, *alone])
    if rows:
        out()
        out("cross-project probes (each labelled task asked in every other project of the set) and each "
            "project alone in the store")
        table(rows, ("ranker", "probes", "injecting", "mean tokens", f"over {CROSS_LARGE}",
                     "blocks differing alone", "noise tokens alone"))


def _print_project_folds(folds, held) -> None:
    out("leave-one-project-out: settings chosen on the other projects, the held-out project reported")
    table([[fold.held_out, fold.eval_set, ", ".join(f"{k.rsplit('.', 1)[-1]} {_setting(v)}" for k, v in fold.settings.items())]
           for fold in folds], ("held out", "set", "settings chosen on the others"))
    out()
    out("held-out folds, aggregated")
    keys = ("ndcg@8", "order_ndcg@8", "block_recall", "reachable_recall", "index_tokens", "block_precision",
            "noise_tokens", "cross_tokens", "cross_over_500", "cross_injecting")
    table([[name, *(f"{m.get(k, 0.0):.3f}" for k in keys)] for name, m in held.items()], ("set", *keys))
