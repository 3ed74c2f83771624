"""`memdeck share ID…`: copy own memories to the team store (setting `team.db`) with their
history, or with `--to-file` append them to the repository's team file (docs/team.md)."""

from __future__ import annotations

import argparse

from tui.cli.output import info, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("share", help="copy your memories to the team store (or the team file)",
                       description="Copy memories of your own store to the team store (setting team.db) with "
                                   "their history, recording who shared them. When the team store reviews "
                                   "what is shared (`memdeck team init --review`), they arrive pending, in the "
                                   "reviewers' inbox. A role that may not add memories is refused (exit 6) and "
                                   "nothing changes. With --to-file: append them to the repository's team file "
                                   "(team.file, .memdeck/team.yaml) instead, to propose in a pull request.")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--to-file", action="store_true", help="append to the team file instead of the team store")
    p.add_argument("--json", action="store_true", help="print what was shared as JSON")
    p.set_defaults(handler=cmd_share)


def cmd_share(ctx) -> int:
    if ctx.args.to_file:
        return _to_file(ctx)
    from store.api import InvalidInput, StoreError, share

    layers = ctx.layers
    team = layers.store("team")
    if team is None:
        problem = dict(layers.problems).get("team")
        if problem:
            raise StoreError(f"cannot share: {problem}")
        raise InvalidInput("no team store to share with: set team.db (a PostgreSQL URL) in your config; "
                           "docs/team.md")
    done = share(ctx.store, team, ctx.args.ids)
    if ctx.args.json:
        print_json([{"id": d.id, "title": d.title, "status": d.status, "already": d.already, "anchors": d.anchors}
                    for d in done])
        return 0
    for d in done:
        if d.already:
            info(f"{d.id} is in the team store already ({d.status})")
        elif d.status == "pending":
            info(f"shared {d.id}: it waits in the team's inbox for a reviewer")
        else:
            info(f"shared {d.id} with the team")
    return 0


def _to_file(ctx) -> int:
    from store.api import InvalidInput, team_file_location, append

    store = ctx.store
    path = team_file_location(store.config, store.project_root)
    if path is None:
        raise InvalidInput("no team file: share --to-file needs a project (a git repository) and team.file set")
    memories = store.get_many(ctx.args.ids)
    added = append(path, memories, by=store.author, at=store.now())
    with store.transaction():
        for memory_id in added:
            store.record_event(memory_id, "shared", before=None, after=None, actor="cli",
                               detail={"to": "file", "file": str(path), "by": store.author})
    if ctx.args.json:
        print_json([{"id": m.id, "title": m.title, "added": m.id in added} for m in memories])
        return 0
    for memory in memories:
        info(f"{'appended' if memory.id in added else 'already in'} {path}: {memory.id}")
    if added:
        info("propose the change in a pull request; the team reads it as the layer `file`")
    return 0
