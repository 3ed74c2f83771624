"""`memdeck verify`: check anchored memories against the code.

Exit 0 when every anchor is fresh or moved, 1 when any changed or went missing (so a CI step or
a hook can act on it), 4 for an unknown id.
"""

from __future__ import annotations

import argparse

from tui.cli.output import info, one_line, print_json, table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify", help="check anchored memories against the code (fresh, moved, changed, missing)",
        description="Read the lines each anchored memory points at and compare them with what they were "
                    "when it was anchored: fresh (the same), moved (found elsewhere in the file, or the "
                    "file renamed: the anchor follows), changed, or missing. Saves the results: a fresh "
                    "memory counts as verified now. Exit 1 when any memory changed or went missing.")
    p.add_argument("ids", nargs="*", metavar="ID", help="only these memories (default: every anchored one)")
    p.add_argument("--json", action="store_true",
                   help='print [{"id", "status", "anchors": [{"path", "start", "end", "status", ...}]}]')
    p.add_argument("--dry-run", action="store_true", help="check, but save nothing")
    p.set_defaults(handler=cmd_verify)


def cmd_verify(ctx) -> int:
    from store.api import verify

    args, store = ctx.args, ctx.store
    results = verify(store, args.ids or None, save=not args.dry_run)
    checked = {r.memory_id for r in results}
    for memory_id in args.ids:
        if memory_id not in checked:
            info(f"{memory_id} has no anchors: nothing to check")
    if args.json:
        print_json([r.to_json() for r in results])
    elif not results and not args.ids:
        info(f"no anchored memories in project {store.project!r}; anchor one with: "
             "memdeck add TEXT --type fix --anchor PATH:START-END")
    else:
        titles = {m.id: m.title for m in store.get_many([r.memory_id for r in results])}
        rows = []
        for result in results:
            for index, check in enumerate(result.anchors):
                first = index == 0
                rows.append([result.memory_id if first else "", result.status if first else "",
                             check.describe(), one_line(titles[result.memory_id], 50) if first else ""])
        table(rows, ("id", "status", "anchor", "title"))
    counts = {s: sum(r.status == s for r in results) for s in ("fresh", "moved", "changed", "missing")}
    if results:
        info(f"{len(results)} anchored: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    return 1 if counts["changed"] or counts["missing"] else 0
