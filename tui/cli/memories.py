"""Commands on memories: add, list, search, show, edit, delete, restore, purge."""

from __future__ import annotations

import argparse

from store.api import (
    add_anchored, anchor_memory, anchors_of, as_spec, event_note, iso, parse_time, clean_list, Conflict,
    InvalidInput, SOURCES, STATUSES,
)
from tui.cli import values
from tui.cli.output import (
    MEMORY_HEADERS, date, info, memory_rows, one_line, out, print_json, table,
)


def add_filter_options(parser: argparse.ArgumentParser, *, limit: int = 100) -> None:
    parser.add_argument("--type", action="append", default=[], metavar="T", help="only this type (repeatable)")
    parser.add_argument("--hat", action="append", default=[], metavar="H", help="only this hat (repeatable)")
    parser.add_argument("--status", action="append", default=[], choices=STATUSES,
                        help="only this status (repeatable; default: all but deleted)")
    parser.add_argument("--stale", action="store_true",
                        help="only memories whose anchored code changed or went missing at the last check")
    parser.add_argument("--source", action="append", default=[], choices=SOURCES, help="only this source")
    parser.add_argument("--tag", action="append", default=[], metavar="T", help="only memories with this tag (repeatable: all of them)")
    parser.add_argument("--scope", action="append", default=[], metavar="S", help="only this scope")
    parser.add_argument("--min-confidence", type=values.confidence, default=None, metavar="X")
    parser.add_argument("--after", default=None, metavar="DATE", help="created at or after (2026-03-01, 7d, ...)")
    parser.add_argument("--before", default=None, metavar="DATE", help="created before")
    parser.add_argument("--exclude-session", default=None, metavar="ID")
    parser.add_argument("--all-projects", action="store_true", help="every project in the store")
    parser.add_argument("--limit", type=values.count, default=limit,
                        help=f"at most this many (default {limit}; 0 for all; stderr says when more matched)")
    parser.add_argument("--layer", action="append", default=[], choices=("own", "team", "file"),
                        help="only memories of this layer (repeatable; default: every layer; docs/team.md)")
    parser.add_argument("--json", action="store_true", help="print a JSON array")


def filter_from_args(args, store):
    from store.api import MemoryFilter

    now = store.now()
    return MemoryFilter(
        all_projects=args.all_projects,
        types=tuple(store.check_type(t) for t in args.type),
        hats=tuple(args.hat),
        statuses=tuple(args.status),
        sources=tuple(args.source),
        tags=tuple(args.tag),
        scopes=tuple(args.scope),
        min_confidence=args.min_confidence,
        created_after=parse_time(args.after, now) if args.after else None,
        created_before=parse_time(args.before, now) if args.before else None,
        exclude_session=args.exclude_session,
        stale=args.stale,
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("add", help="store a memory (or reinforce the one it repeats)",
                       description="Store a memory. If an active memory of the same project, type and "
                                   "scope says the same thing, it is reinforced instead, and its id printed.")
    p.add_argument("content", help="the memory's text ('-' reads it from stdin)")
    p.add_argument("--type", required=True, help="architecture, pattern, pitfall, fix, ... (aliases accepted)")
    p.add_argument("--title", default=None, help="default: the content's first sentence")
    p.add_argument("--tags", default=None, metavar="a,b")
    p.add_argument("--hat", default=None)
    p.add_argument("--scope", default=None, help="the service or component it is about; `personal`: about you, "
                                                  "injected in every project (docs/team.md)")
    p.add_argument("--files", default=None, metavar="GLOB,GLOB", help="file refs (globs)")
    p.add_argument("--confidence", type=values.confidence, default=None, help="0 to 1 (default: by source)")
    p.add_argument("--source", default="explicit", choices=SOURCES)
    p.add_argument("--status", default="active", choices=("active", "pending", "inactive"))
    p.add_argument("--session", default=None, help="the session it came from")
    p.add_argument("--task", default=None, help="the task it came from")
    p.add_argument("--supersedes", default=None, metavar="ID",
                   help="this memory contradicts ID: ID loses confidence and points here")
    p.add_argument("--anchor", action="append", default=[], metavar="PATH[:START-END]",
                   help="anchor it to a file or lines of it, checked by `memdeck verify` and prime (repeatable)")
    p.add_argument("--json", action="store_true", help="print the memory as JSON (with its id and anchors)")
    p.set_defaults(handler=cmd_add)

    p = sub.add_parser("list", help="list memories", description="List memories, newest change first.")
    add_filter_options(p)
    p.add_argument("--sort", default="updated",
                   choices=("updated", "created", "confidence", "used", "type", "title", "hat", "scope", "status"))
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("search", help="full-text and fuzzy search",
                       description="Search titles, content and tags (BM25, title weighted highest), "
                                   "then titles by fuzzy match for typos. Any text is safe to search.")
    p.add_argument("query")
    add_filter_options(p, limit=20)
    p.add_argument("--no-fuzzy", action="store_true", help="full-text matches only")
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("show", help="one memory with its history")
    p.add_argument("id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser("edit", help="change a memory's fields (records an edited event)")
    p.add_argument("id")
    p.add_argument("--title")
    p.add_argument("--content")
    p.add_argument("--type")
    p.add_argument("--tags", metavar="a,b", help="replace the tags")
    p.add_argument("--add-tags", metavar="a,b")
    p.add_argument("--remove-tags", metavar="a,b")
    p.add_argument("--files", metavar="GLOB,GLOB", help="replace the file refs")
    p.add_argument("--hat")
    p.add_argument("--scope")
    p.add_argument("--confidence", type=values.confidence)
    p.add_argument("--status", choices=STATUSES)
    p.add_argument("--protect", dest="protected", action="store_const", const=True,
                   help="never decays (a protected memory)")
    p.add_argument("--unprotect", dest="protected", action="store_const", const=False)
    p.add_argument("--verified", action="store_true", help="mark it verified now")
    p.add_argument("--expect-version", type=values.count, default=None, metavar="N",
                   help="change it only if it is still at version N (from show --json); else exit 5")
    p.add_argument("--anchor", action="append", default=[], metavar="PATH[:START-END]",
                   help="anchor it to a file or lines of it, as they are now (repeatable)")
    p.add_argument("--no-anchors", action="store_true", help="drop its anchors")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_edit)

    p = sub.add_parser("delete", help="move memories to the trash (restorable)")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--dry-run", action="store_true", help="say what would move, change nothing")
    p.add_argument("--expect-version", type=values.count, default=None, metavar="N",
                   help="move it only if it is still at version N (from show --json); else exit 5 (one ID)")
    p.set_defaults(handler=cmd_delete)

    p = sub.add_parser("restore", help="take memories out of the trash")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--expect-version", type=values.count, default=None, metavar="N",
                   help="restore it only if it is still at version N (from show --json or trash --json); "
                        "else exit 5 (one ID)")
    p.set_defaults(handler=cmd_restore)

    p = sub.add_parser("trash", help="list the memories in the trash")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_trash)

    p = sub.add_parser("purge", help="empty the trash for good")
    p.add_argument("ids", nargs="*", metavar="ID", help="only these (default: the whole trash)")
    p.add_argument("--dry-run", action="store_true", help="say what would go, change nothing")
    p.set_defaults(handler=cmd_purge)


def cmd_add(ctx) -> int:
    import sys

    args, store = ctx.args, ctx.store
    # One character past the limit is enough to refuse: a 20 MB pipe is not read whole.
    limit = int(store.config.interop.max_memory_chars)
    content = sys.stdin.read(limit + 1) if args.content == "-" else args.content
    specs = [as_spec(a) for a in args.anchor]  # a malformed range is refused before anything is stored
    fields = dict(type=args.type, title=args.title, tags=args.tags, hat=args.hat, scope=args.scope,
                  file_refs=args.files, confidence=args.confidence, source=args.source,
                  status=args.status, session_id=args.session, task=args.task, actor="cli")
    if args.supersedes:
        fields["supersedes"] = args.supersedes
    result, anchored = add_anchored(store, content, specs, **fields)
    # A new memory asked for as active or inactive that came back pending, with no sameness
    # decision sending it to the inbox: a team store that reviews held it (its server's rule,
    # store/backends/postgres_roles.py), and the output says what the server holds.
    held = result.created and not result.decided and result.memory.status == "pending" != args.status
    if args.json:
        print_json({**result.memory.to_json(), "action": result.action,
                    "anchors": [a.to_json() for a in anchored.anchors],
                    **({"decided": result.decided} if result.decided else {}),
                    **({"held_for_review": True} if held else {})})
    else:
        out(result.memory.id)
        info(f"{result.action} {result.memory.id} ({result.memory.type}, confidence {result.memory.confidence:.2f})")
        if held:
            info(f"pending: held for a reviewer (this team store reviews what is added; asked {args.status}); "
                 f"a reviewer accepts it with: memdeck accept {result.memory.id}")
        if result.decided:  # an update or contradiction of another memory (store.engine.sameness)
            d = result.decided
            info(f"{'supersedes' if d['superseded'] else 'in the inbox: may ' + ('repeat' if d['kind'] == 'same' else 'update' if d['kind'] == 'update' else 'contradict')} "
                 f"{d['other']} ({d['why']})" + ("" if d["superseded"] else
                                                 f"; decide with: memdeck resolve {result.memory.id} CHOICE"))
    return 0


def _limit(args) -> int | None:
    return None if args.limit == 0 else args.limit


def cmd_list(ctx) -> int:
    ctx.check_named_project()
    args, store = ctx.args, ctx.store
    flt = filter_from_args(args, store)
    limit = _limit(args)
    layers = ctx.layers
    memories = layers.list(flt, sort=args.sort, limit=limit, layers=tuple(args.layer))
    if args.json:
        print_json([m.to_json() for m in memories])
    elif not memories:
        info(f"no memories in project {store.project!r} match; add one with: memdeck add TEXT --type pattern")
        return 0
    elif layers.others:  # several layers: each row says its own
        table([[*row, m.layer] for row, m in zip(memory_rows(memories), memories)], (*MEMORY_HEADERS, "layer"))
    else:
        table(memory_rows(memories), MEMORY_HEADERS)
    # A script reading --json is told too: a cut list looks like a whole one.
    if limit is not None and len(memories) == limit:
        total = layers.count(flt, tuple(args.layer))
        if total > limit:
            info(f"{limit} of {total} shown; --limit 0 shows all")
    return 0


def cmd_search(ctx) -> int:
    ctx.check_named_project()
    args, store = ctx.args, ctx.store
    limit = _limit(args) or 10_000
    # One more than asked for: whether more matched, without counting every match.
    hits = ctx.layers.search(args.query, filter_from_args(args, store), limit=limit + 1, fuzzy=not args.no_fuzzy,
                             layers=tuple(args.layer))
    cut, hits = len(hits) > limit, hits[:limit]
    if args.json:
        print_json([{**h.memory.to_json(), "score": round(h.score, 4), "match": h.match} for h in hits])
    elif not hits:
        info(f"nothing matches {args.query!r}")
        return 0
    else:
        layered = bool(ctx.layers.others)
        table([[*row, h.match, *([h.memory.layer] if layered else [])]
               for row, h in zip(memory_rows(h.memory for h in hits), hits)],
              (*MEMORY_HEADERS, "match", *(["layer"] if layered else [])))
    if cut:
        info(f"the best {limit} matches shown, more matched; --limit 0 shows all")
    return 0


def cmd_show(ctx) -> int:
    args = ctx.args
    layer, store, memory = ctx.layers.locate(args.id)
    events = store.events(args.id)
    if args.json:
        print_json({**memory.to_json(), "anchors": [a.to_json() for a in anchors_of(store, memory.id)],
                    "events": [e.to_json() for e in events]})
        return 0
    out(f"{memory.id}  {memory.type} · {memory.status}{' · protected' if memory.protected else ''}")
    out(f"title:      {one_line(memory.title)}")
    if layer != "own":
        out(f"layer:      {layer} (read-only here; docs/team.md)")
    out(f"confidence: {memory.confidence:.2f}   used {memory.use_count}×   source: {memory.source}")
    for label, value in (("project", memory.project), ("hat", memory.hat), ("scope", memory.scope),
                         ("tags", ", ".join(memory.tags)), ("files", ", ".join(memory.file_refs)),
                         ("session", memory.session_id), ("task", memory.task),
                         ("supersedes", memory.supersedes),
                         ("superseded by", memory.meta.get("superseded_by")),
                         ("proposal", _proposal_line(memory.meta.get("proposal")))):
        if value:
            out(f"{label + ':':<11} {one_line(str(value))}")
    for anchor in anchors_of(store, memory.id):
        out(f"{'anchor:':<11} {one_line(anchor.spec)}  {anchor.status} (since {anchor.since()})")
    out(f"created:    {iso(memory.created_at)}   updated: {iso(memory.updated_at)}"
          f"   last used: {iso(memory.last_used_at) or 'never'}")
    out()
    out(memory.content)
    out()
    out("history")
    for event in events:
        note = _event_note(event)
        who = f" ({event.author})" if event.author else ""
        out(one_line(f"  {iso(event.at)}  {event.kind:<14} {event.confidence_change()}  {event.actor}{who}{note}"))
    return 0


def _proposal_line(proposal) -> str | None:
    """A memory's open proposal (store.engine.sameness): what it may be of which memory, and why."""
    if not isinstance(proposal, dict):
        return None
    return f"{proposal.get('kind')} of {proposal.get('other')}: {proposal.get('why', '')}"


def _event_note(event) -> str:
    detail = event.detail
    if event.kind == "proposed":
        other = f"of {detail['other']}" if detail.get("other") else f"by {detail.get('by')}"
        return f"  ({detail.get('kind')} {other}: {one_line(str(detail.get('why', '')), 100)})"
    if event.kind == "resolved":
        return f"  ({detail.get('choice')}, with {detail.get('other')})"
    if event.kind == "reinforced" and detail.get("text"):
        return f"  (as: {one_line(detail['text'], 100)})"
    if "verdict" in detail:  # an agent's feedback
        return f"  ({detail['verdict']}" + (f": {one_line(detail['note'], 80)})" if detail.get("note") else ")")
    if "changes" in detail:
        return "  (" + ", ".join(sorted(detail["changes"])) + ")"
    if "by" in detail:
        return f"  (by {detail['by']}" + (f": {one_line(detail['note'], 80)})" if detail.get("note") else ")")
    if "to" in detail:
        return f"  ({detail.get('from')} → {detail['to']})"
    if event.kind in ("anchored", "checked"):
        return f"  ({event_note(event.kind, detail)})"
    if event.session_id:
        return f"  session {event.session_id}"
    return ""


def cmd_edit(ctx) -> int:
    args, store = ctx.args, ctx.store
    changes = {k: getattr(args, k) for k in ("title", "content", "type", "hat", "scope", "confidence",
                                              "status", "protected") if getattr(args, k) is not None}
    if args.tags is not None:
        changes["tags"] = clean_list(args.tags)
    if args.files is not None:
        changes["file_refs"] = clean_list(args.files)
    if args.verified:
        changes["verified_at"] = store.now()
    if not changes and not (args.add_tags or args.remove_tags or args.anchor or args.no_anchors):
        raise InvalidInput("nothing to change: give --title, --content, --type, --tags, --anchor, ...")

    def change(memory):
        if args.expect_version is not None and memory.version != args.expect_version:
            raise Conflict(memory.id, args.expect_version, memory)
        if not (args.add_tags or args.remove_tags):
            return changes
        # Relative to the tags as they are under the write lock, so a tag another process adds
        # meanwhile (a reinforcement) is kept.
        removed = set(clean_list(args.remove_tags))
        tags = [*changes.get("tags", memory.tags), *clean_list(args.add_tags)]
        return {**changes, "tags": tuple(t for t in clean_list(tags) if t not in removed)}

    with store.transaction():
        memory = store.get(args.id)
        updated = store.modify(args.id, change, actor="cli")
        if args.anchor or args.no_anchors:
            anchor_memory(store, args.id, args.anchor, actor="cli", replace=args.no_anchors)
            updated = store.get(args.id)
    if args.json:
        print_json(updated.to_json())
    else:
        info(f"edited {updated.id}" if updated != memory else f"{updated.id} already had those values")
    return 0


def expect_version(store, args) -> None:
    """`--expect-version N` of `delete` and `restore`: the one memory named must still be at
    version N, read in the caller's transaction (else a conflict, exit 5, nothing written)."""
    if args.expect_version is None:
        return
    if len(args.ids) != 1:
        raise InvalidInput(f"--expect-version goes with one ID, not {len(args.ids)}")
    memory = store.get(args.ids[0])
    if memory.version != args.expect_version:
        raise Conflict(memory.id, args.expect_version, memory)


def cmd_delete(ctx) -> int:
    args, store = ctx.args, ctx.store
    with store.transaction():  # the version checked is the version moved
        memories = store.get_many(args.ids)
        expect_version(store, args)
        if args.dry_run:
            for m in memories:
                out(f"would move to trash: {m.id}  {one_line(m.title, 60)}")
            return 0
        store.trash.delete(args.ids, actor="cli")
    info(f"moved {len(memories)} to the trash; undo with: memdeck restore {' '.join(args.ids)}")
    return 0


def cmd_restore(ctx) -> int:
    args, store = ctx.args, ctx.store
    with store.transaction():
        expect_version(store, args)
        restored = store.trash.restore(args.ids, actor="cli")
    for m in restored:
        info(f"restored {m.id} ({m.status})")
    return 0


def cmd_trash(ctx) -> int:
    memories = ctx.store.trash.memories()
    if ctx.args.json:
        print_json([m.to_json() for m in memories])
    elif not memories:
        info("the trash is empty")
    else:
        table(memory_rows(memories), MEMORY_HEADERS)
    return 0


def cmd_purge(ctx) -> int:
    args, store = ctx.args, ctx.store
    victims = store.trash.purge(args.ids or None, dry_run=args.dry_run)
    verb = "would purge" if args.dry_run else "purged"
    for m in victims:
        out(f"{verb}: {m.id}  {one_line(m.title, 60)}  (deleted {date(m.updated_at)})")
    info(f"{verb} {len(victims)} memor{'y' if len(victims) == 1 else 'ies'} from the trash")
    return 0
