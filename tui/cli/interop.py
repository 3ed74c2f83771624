"""`memdeck import` and `memdeck export`: memories in and out of the store in the formats other
agents use (memdeck JSON, Ralph markdown, Nova26 JSON, YAML, CLAUDE.md / AGENTS.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from store.api import STATUSES
from tui.cli import values
from tui.cli.output import info, out, print_json, write_data

IMPORT_FORMATS = ("auto", "json", "ralph", "nova", "yaml")
EXPORT_FORMATS = ("json", "ralph", "nova", "yaml", "agents-md", "cursor-rules")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import", help="import memories from a memdeck, Ralph, Nova26 or YAML file",
        description="Import memories. A memory with its own id stays its own memory and a second "
                    "import of the same file changes nothing; memories without ids reinforce similar "
                    "ones. All or nothing: on any error the store is left as it was.")
    p.add_argument("file", help="the file to read ('-' for stdin)")
    p.add_argument("--format", default="auto", choices=IMPORT_FORMATS,
                   help="default: told from the file's name and content")
    p.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=cmd_import)

    p = sub.add_parser(
        "export", help="export memories as memdeck JSON, Ralph markdown, Nova26 JSON, YAML, agents-md or cursor-rules",
        description="Export the project's memories (all but the trash, unless --status says) to stdout "
                    "or a file. agents-md writes the top memories as a managed block; with --into it "
                    "replaces only that block in AGENTS.md (kept within the 32 KiB Codex reads), CLAUDE.md, "
                    "GEMINI.md or .github/copilot-instructions.md. cursor-rules writes them as Cursor's "
                    "rule file, .cursor/rules/memdeck.mdc at the project root (or --output).")
    p.add_argument("--format", default="json", choices=EXPORT_FORMATS)
    p.add_argument("--type", action="append", default=[], metavar="T", help="only this type (repeatable)")
    p.add_argument("--hat", action="append", default=[], metavar="H", help="only this hat (repeatable)")
    p.add_argument("--status", action="append", default=[], choices=STATUSES,
                   help="only this status (repeatable; default: all but deleted)")
    p.add_argument("--tag", action="append", default=[], metavar="T", help="only memories with this tag (repeatable)")
    p.add_argument("--min-confidence", type=values.confidence, default=None, metavar="X")
    p.add_argument("--all-projects", action="store_true", help="every project in the store")
    p.add_argument("--limit", type=values.count, default=None,
                   help="at most this many (default: all; agents-md: setting interop.agents_md_limit)")
    p.add_argument("--output", "-o", type=Path, default=None, metavar="FILE", help="write to FILE, not stdout")
    p.add_argument("--force", action="store_true", help="overwrite --output FILE if it exists")
    p.add_argument("--into", type=Path, default=None, metavar="FILE",
                   help="agents-md only: write the managed block into this AGENTS.md, CLAUDE.md, GEMINI.md or "
                        ".github/copilot-instructions.md; the rest of the file stays as it was")
    p.set_defaults(handler=cmd_export)


def _print_skipped(skipped: list[tuple[str, str]], each_up_to: int = 3) -> None:
    """One line per memory skipped for a reason few share; one line for a reason many share
    (re-importing an unchanged file skips every memory: a line each says nothing more)."""
    by_reason: dict[str, list[str]] = {}
    for what, why in skipped:
        by_reason.setdefault(why, []).append(what)
    for why, which in by_reason.items():
        if len(which) <= each_up_to:
            for what in which:
                out(f"  skipped {what}: {why}")
        else:
            out(f"  skipped {len(which)} memories: {why} ({', '.join(which[:each_up_to])}, …)")


def cmd_import(ctx) -> int:
    from store.api import InvalidInput, import_file

    args = ctx.args
    summary = import_file(ctx.store, args.file, format=args.format, dry_run=args.dry_run)
    found = len(summary.added) + len(summary.updated) + len(summary.skipped)
    if not found and summary.problems:
        for problem in summary.problems:
            info(f"{args.file}: {problem}")
        raise InvalidInput(f"{args.file}: no memories could be read ({len(summary.problems)} problems above)")
    if args.json:
        print_json(summary.to_json())
        return 0
    verb = "would import" if args.dry_run else "imported"
    out(f"{verb} {args.file} ({summary.format}): {len(summary.added)} added, "
          f"{len(summary.updated)} updated, {len(summary.skipped)} skipped"
          + (f", {summary.sessions_added} sessions, {summary.activities_added} activities"
             if summary.sessions_added or summary.activities_added else ""))
    elsewhere = sorted({project for _, project in summary.added} - {ctx.store.project})
    if elsewhere:
        out(f"  added into project{'s' if len(elsewhere) > 1 else ''} {', '.join(elsewhere)} "
              "(as the file says)")
    for memory_id, why in summary.updated:
        out(f"  updated {memory_id}: {why}")
    _print_skipped(summary.skipped)
    for note in summary.notes:
        out(f"  note: {note}")
    for problem in summary.problems:
        info(f"{args.file}: {problem}")
    if args.dry_run:
        info("dry run: nothing was written")
    return 0


def cmd_export(ctx) -> int:
    from store.api import InvalidInput, write_output, export_into, export_text, MemoryFilter

    args, store = ctx.args, ctx.store
    if args.into is not None and args.format != "agents-md":
        raise InvalidInput("--into works with --format agents-md; use --output for other formats")
    if args.into is not None and args.output is not None:
        raise InvalidInput("give --into or --output, not both")
    if args.limit is not None and args.limit < 1:
        raise InvalidInput("--limit must be 1 or more")
    if args.min_confidence is not None and not 0 <= args.min_confidence <= 1:
        raise InvalidInput("--min-confidence must be from 0 to 1")
    flt = MemoryFilter(all_projects=args.all_projects, types=tuple(store.check_type(t) for t in args.type),
                       hats=tuple(args.hat), statuses=tuple(args.status), tags=tuple(args.tag),
                       min_confidence=args.min_confidence)
    if args.into is not None:
        export_into(store, args.into, flt, limit=args.limit)
        info(f"wrote the memdeck block into {args.into}")
        return 0
    text = export_text(store, args.format, flt, limit=args.limit)
    if args.format == "cursor-rules" and args.output is None:
        from tui.cli.claude_setup import project_root

        # memdeck's own file in Cursor's rules folder: replaced each time, like the managed block.
        path = project_root() / ".cursor" / "rules" / "memdeck.mdc"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_output(path, text, replacing=True)
        info(f"wrote {path}")
        return 0
    if args.output is not None:
        write_output(args.output, text, force=args.force)
        info(f"wrote {args.output}")
    else:
        write_data(text)
    return 0
