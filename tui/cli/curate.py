"""Commands that keep the store true as the project changes (issue 27): consolidate, the
proposals in the inbox and their resolution, and eval-pairs (measuring the sameness decision)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.cli.output import date, info, one_line, out, print_json, table
from tui.cli.output import progress as show_progress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "consolidate", help="find near-duplicates and chains of updates; propose merges and supersessions",
        description="Compare the project's active and pending memories (same type and scope) and put "
                    "a proposal on the newer memory of each near-duplicate, update or contradiction "
                    "found: a person resolves it with `memdeck resolve`. Successive updates of one fact "
                    "(the same words, a value changing: a commit range, a version, a port, a path) are "
                    "one chain: the newest is kept and holds the proposal, and resolving it supersede "
                    "retires all the older ones. Records of different failures are never proposed as "
                    "updates of each other. Nothing else changes unless the setting consolidate.apply "
                    "is true.")
    p.add_argument("--dry-run", action="store_true", help="say what would be proposed, change nothing")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON: each finding with its chain, oldest first")
    p.set_defaults(handler=cmd_consolidate)

    p = sub.add_parser("proposals", help="open proposals: a memory and the one it may repeat, update or contradict")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_proposals)

    from store.api import RESOLUTIONS

    p = sub.add_parser(
        "resolve", help="decide a proposal: keep-both, supersede, merge, wrong-old or wrong-new",
        description="keep-both: both stay (a pending memory becomes active); supersede: the memory "
                    "with the proposal replaces the other (kept, inactive, restorable); merge: its "
                    "text goes into the other (or --text), it goes to the trash; wrong-old: the other "
                    "is contradicted and superseded; wrong-new: this one is contradicted and trashed.")
    p.add_argument("id", help="the memory holding the proposal")
    p.add_argument("choice", choices=RESOLUTIONS)
    p.add_argument("--text", default=None, help="merge: the merged text (default: the newer memory's)")
    p.set_defaults(handler=cmd_resolve)

    p = sub.add_parser(
        "eval-pairs", help="precision and recall of the same/update/contradiction/distinct decision on labelled pairs",
        description="FILE is YAML with `pairs:`, each {id, label, old, new[, half]}; label is same, "
                    "update, contradiction, related or unrelated (the last two are `distinct`). "
                    "tests/data/pairs/ralph-pairs.yaml is the project's set.")
    p.add_argument("file", type=Path)
    p.add_argument("--half", default=None, help="only the pairs of this half (tune or test)")
    p.add_argument("--mistakes", action="store_true", help="list each pair decided wrongly, with why")
    p.add_argument("--semantic", action="store_true",
                   help="add the semantic signal (the cosine of the texts' vectors; needs the semantic extra)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_eval_pairs)


def cmd_consolidate(ctx) -> int:
    from store.api import consolidate

    args, store = ctx.args, ctx.store

    def progress(done: int, total: int) -> None:
        if done == total or done % 100 == 0:
            show_progress(f"comparing memories: {done}/{total}", done=done == total)

    report = consolidate(store, dry_run=args.dry_run, progress=progress)
    if args.json:
        print_json({**report.to_json(), "dry_run": args.dry_run})
        return 0
    verb = "would propose" if args.dry_run else "proposed"
    rows = [[f.kind + ("" if f.sure or f.kind == "same" else "?"), f.memory_id, f.other_id, one_line(f.why, 90)]
            for f in report.findings]
    if rows:
        table(rows, ["kind", "memory", "other", "why"])
    for finding in report.findings:
        if len(finding.chain) > 2:
            out(f"chain of {len(finding.chain)} held by {finding.memory_id}, oldest first (the newest kept, "
                f"the {len(finding.chain) - 1} before it {'would be ' if args.dry_run else ''}proposed for retirement):")
            for link in finding.chain:
                out(f"  {link.id}  {date(link.created_at)}  {one_line(link.title, 80)}")
    info(f"{report.memories} memories, {report.compared} pairs compared in {report.seconds:.1f}s; "
         f"{verb} {report.proposed if not args.dry_run else len(report.findings)}"
         + (f", applied {report.applied}" if report.applied else "")
         + (f", skipped {report.skipped} (changed meanwhile or already proposed)" if report.skipped else ""))
    if report.findings and not args.dry_run:
        info("review with: memdeck proposals   decide with: memdeck resolve ID keep-both|supersede|merge|wrong-old|wrong-new")
    return 0


def cmd_proposals(ctx) -> int:
    store = ctx.store
    found = store.relations.proposals()
    if ctx.args.json:
        print_json([{"memory": m.to_json(), "other": o.to_json() if o else None, "proposal": m.meta["proposal"]}
                    for m, o in found])
        return 0
    for memory, other in found:
        proposal = memory.meta["proposal"]
        out(f"{memory.id}  {proposal.get('kind')}{'' if proposal.get('sure') else ' (unsure)'} of "
            f"{other.id if other else proposal.get('other') + ' (purged)'}")
        out(f"  new: {one_line(memory.content, 160)}")
        out(f"  old: {one_line(other.content, 160) if other else '-'}")
        out(f"  why: {one_line(str(proposal.get('why', '')), 160)}")
        if proposal.get("chain"):
            out(f"  chain (oldest first; supersede retires all before {memory.id}): "
                + " -> ".join(str(c) for c in proposal["chain"]))
    info(f"{len(found)} open {'proposal' if len(found) == 1 else 'proposals'}"
         + ("; decide with: memdeck resolve ID keep-both|supersede|merge|wrong-old|wrong-new" if found else ""))
    return 0


def cmd_resolve(ctx) -> int:
    from store.api import Curator

    args, store = ctx.args, ctx.store
    result = Curator(store, actor="cli").resolve(args.id, args.choice, text=args.text)
    info(result.summary)
    return 0


def cmd_eval_pairs(ctx) -> int:
    from store.api import Config, KINDS, evaluate_sameness as evaluate, load_pairs

    args = ctx.args
    pairs = load_pairs(args.file)
    # The thresholds of the effective config (the project's .memdeck.yml, the user's file).
    if args.semantic:
        from store.api import InvalidInput, embedding

        if not embedding.available():
            raise InvalidInput("--semantic needs the semantic extra: pip install 'memdeck[semantic]'")
    report = evaluate(pairs, Config.load(None).sameness, half=args.half, semantic=args.semantic)
    if args.json:
        print_json(report.to_json())
        return 0
    table([[k, _figure(report.precision[k]), _figure(report.recall[k]), str(report.support[k])] for k in KINDS],
          ["class", "precision", "recall", "pairs"])
    out(f"silent losses (update or contradiction decided same): {len(report.silent_losses)}"
        + (f" ({', '.join(report.silent_losses)})" if report.silent_losses else ""))
    out(f"retired wrongly (distinct decided a sure update): {len(report.retired_wrongly)}"
        + (f" ({', '.join(report.retired_wrongly)})" if report.retired_wrongly else ""))
    if args.mistakes:
        for m in report.mistakes:
            out(f"{m['id']}  {m['label']} decided {m['decided']}: {one_line(m['why'], 140)}")
    info(f"{report.pairs} pairs" + (f" (half {args.half})" if args.half else ""))
    return 0


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
