"""`memdeck eval-capture FILE`: capture's inbox candidates from labelled real sessions, beside the
learnings a person would keep (store.evaluation.capture)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.cli.output import out, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval-capture", help="run the capture eval: candidates from labelled sessions beside their learnings",
        description="Ingest each session a capture set (YAML) names into a temporary store with the "
                    "default settings, and print per session: the learnings captured, the candidates, "
                    "the share of candidates that match a learning, and each learning missed with the "
                    "nearest candidate. A candidate matches a learning when its title and content "
                    "contain every keyword's stem (the keyword less its last two letters, at least four).")
    p.add_argument("file", type=Path, help="a capture set (YAML with `sessions:`)")
    p.add_argument("--session", action="append", default=None, metavar="WORD",
                   help="only the sessions whose file name contains WORD (repeatable)")
    p.add_argument("--candidates", action="store_true", help="list every candidate, matching or not")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.set_defaults(handler=cmd_eval_capture)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "n/a"


def cmd_eval_capture(ctx) -> int:
    from store.api import evaluate_capture as evaluate, capture_totals as totals

    args = ctx.args
    scores = evaluate(args.file, only=set(args.session) if args.session else None)
    summary = totals(scores)
    if args.json:
        print_json({"sessions": [s.to_json() for s in scores], "totals": summary})
        return 0
    for score in scores:
        name = Path(score.file).name
        if score.missing:
            out(f"{name}: transcript absent, skipped")
            continue
        out(f"{name}")
        out(f"  learnings captured {len(score.captured)}/{len(score.learnings)} · candidates "
            f"{len(score.candidates)} · matching {score.matching} ({_share(score.matching, len(score.candidates))})"
            f" · most per learning {score.most_per_learning}")
        for candidate in score.candidates:
            if args.candidates or not candidate.learnings:
                mark = "+" if candidate.learnings else "-"
                out(f"  {mark} {candidate.type} {candidate.confidence:.2f} {candidate.title!r} "
                    f"(lines {', '.join(map(str, candidate.lines[:6]))})")
        for index, learning in enumerate(score.learnings):
            if index in score.captured:
                continue
            near = score.nearest(index)
            out(f"  missed [{learning.kind}] {learning.text[:100]}")
            out(f"    keywords {', '.join(learning.keywords)}; nearest: "
                + (f"{near.title!r} (lines {', '.join(map(str, near.lines[:4]))})" if near else "no candidate"))
    out(f"all: learnings captured {summary['captured']}/{summary['learnings']} · candidates "
        f"{summary['candidates']} · matching {summary['matching']} "
        f"({_share(summary['matching'], summary['candidates'])}) · most per learning {summary['most_per_learning']}"
        + (f" · {summary['per_learning']:.2f} candidates per learning" if summary["per_learning"] is not None else ""))
    return 0
