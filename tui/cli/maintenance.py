"""Commands on the store as a whole: init, decay, cleanup, reindex, stats, projects, config."""

from __future__ import annotations

import argparse

from tui.cli.output import date, info, one_line, out, print_json, table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("init", help="create the store (and the project) if they do not exist")
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser("decay", help="apply the configured decay policy to unused memories")
    p.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    p.add_argument("--all-projects", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_decay)

    p = sub.add_parser("cleanup", help="purge long-inactive, never-used, low-confidence memories")
    p.add_argument("--dry-run", action="store_true", help="say what would go, change nothing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_cleanup)

    p = sub.add_parser(
        "reindex", help="rebuild the full-text index and the embedding vectors (after a model change)",
        description="Write every memory's identifier words again, rebuild the full-text index, and "
                    "embed every memory with the semantic extra's current model (a vector made by "
                    "another model is never compared with a task's). Without the extra, only the index.")
    p.add_argument("--dry-run", action="store_true", help="say what would be rebuilt, change nothing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_reindex)

    p = sub.add_parser("stats", help="counts by status, type, hat and source")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_stats)

    p = sub.add_parser("projects", help="the projects in the store, with memory counts")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_projects)

    p = sub.add_parser("config", help="the effective config and where each value came from")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_config)


def cmd_init(ctx) -> int:
    store = ctx.store
    store.project_id()
    info(f"store ready: {store.path} (project {store.project!r})")
    return 0


def cmd_decay(ctx) -> int:
    from store.api import run_decay

    args, store = ctx.args, ctx.store
    changes = run_decay(store, dry_run=args.dry_run, all_projects=args.all_projects)
    if args.json:
        print_json([{"id": c.memory_id, "confidence_before": c.confidence_before,
                     "confidence_after": c.confidence_after, "status_before": c.status_before,
                     "status_after": c.status_after} for c in changes])
        return 0
    verb = "would decay" if args.dry_run else "decayed"
    for c in changes:
        note = f"  → {c.status_after}" if c.status_after != c.status_before else ""
        out(f"{verb}: {c.memory_id}  {c.confidence_before:.2f} → {c.confidence_after:.2f}{note}")
    info(f"{verb} {len(changes)} memories (policy {store.config.decay.policy}, {store.config.decay.clock} clock)")
    return 0


def cmd_cleanup(ctx) -> int:
    from store.api import run_cleanup

    args, store = ctx.args, ctx.store
    victims = run_cleanup(store, dry_run=args.dry_run)
    if args.json:
        print_json([m.to_json() for m in victims])
        return 0
    verb = "would purge" if args.dry_run else "purged"
    for m in victims:
        out(f"{verb}: {m.id}  {m.status:<8} {m.confidence:.2f}  {one_line(m.title, 60)}  (since {date(m.updated_at)})")
    info(f"{verb} {len(victims)} memories")
    return 0


def cmd_reindex(ctx) -> int:
    from store.api import embedding, reindex, stale_vectors

    args, store = ctx.args, ctx.store
    if args.dry_run:
        memories = store.backend.memory_table.count()
        report = {"memories": memories, "stale_vectors": stale_vectors(store), "model": embedding.model_id()}
    else:
        result = reindex(store)
        report = {"memories": result.indexed, "embedded": result.embedded, "model": result.model}
    if args.json:
        print_json(report)
        return 0
    verb = "would reindex" if args.dry_run else "reindexed"
    count = f"{report['memories']} {'memory' if report['memories'] == 1 else 'memories'}"
    if report["model"] is None:
        info(f"{verb} {count} (full-text index only: the semantic extra is not "
             "installed, pip install 'memdeck[semantic]')")
    elif args.dry_run:
        info(f"{verb} {count}; {report['stale_vectors']} without a vector from "
             f"{report['model']}")
    else:
        info(f"{verb} {count}; {report['embedded']} vectors from {report['model']}")
    return 0


def cmd_stats(ctx) -> int:
    from store.api import project_stats

    args, store = ctx.args, ctx.store
    ctx.check_named_project()
    stats = project_stats(store)
    if args.json:
        print_json(stats)
        return 0
    out(f"project {stats['project']}: {stats['total']} memories "
          f"({stats['by_status'].get('active', 0)} active, {stats['by_status'].get('pending', 0)} pending, "
          f"{stats['by_status'].get('inactive', 0)} inactive, {stats['by_status'].get('deleted', 0)} in trash)")
    out(f"mean confidence {stats['mean_confidence']:.2f} · {stats['protected']} protected · "
          f"{stats['events']} events · {stats['sessions']} sessions")
    for key in ("by_type", "by_hat", "by_source"):
        if stats[key]:
            out(f"{key[3:]:<7} " + ", ".join(f"{k} {v}" for k, v in stats[key].items()))
    return 0


def cmd_projects(ctx) -> int:
    store = ctx.store
    projects = store.projects()
    if ctx.args.json:
        print_json([{"name": p.name, "root": p.root, "memories": p.memory_count,
                     "current": p.name == store.project} for p in projects])
        return 0
    if not projects:
        info("no projects yet; the first `memdeck add` creates the current one")
        return 0
    table([["*" if p.name == store.project else "", p.name, p.memory_count, p.root or "-"] for p in projects],
          ("", "project", "memories", "root"))
    return 0


def cmd_config(ctx) -> int:
    from store.api import Config, detect_project

    name, root = detect_project()
    config = Config.load(root)
    if ctx.args.json:
        print_json({key: {"value": value, "source": source} for key, value, source in config.items()})
        return 0
    import json

    for key, value, source in config.items():
        out(f"{key} = {json.dumps(value)}    # {source}")
    return 0
