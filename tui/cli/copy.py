"""`memdeck copy --from SRC --to DST`: a whole store from SQLite to PostgreSQL or back
(docs/postgres.md)."""

from __future__ import annotations

import argparse

from store.api import postgres_location as location, redacted
from tui.cli.output import info, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "copy", help="copy a whole store between SQLite and PostgreSQL, either way",
        description="Copy every memory, event, session, activity, anchor and embedding vector of the "
                    "store SRC into the store DST (made if new). Each is an SQLite file or a PostgreSQL "
                    "URL. Rows keep their ids: if DST already holds rows with ids of SRC's, the copy is "
                    "refused (saying how many) unless --overwrite, which replaces them (copying again "
                    "then updates what the last copy wrote). DST is written in one transaction: a "
                    "failed copy leaves it unchanged.")
    p.add_argument("--from", dest="source", required=True, type=location, metavar="SRC",
                   help="the store to copy (a file or a postgresql:// URL)")
    p.add_argument("--to", dest="target", required=True, type=location, metavar="DST",
                   help="the store to copy into (a file or a postgresql:// URL)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the rows of DST that have the ids of SRC's rows (else such a copy is refused)")
    p.add_argument("--json", action="store_true", help="print the rows copied per table as JSON")
    p.set_defaults(handler=cmd_copy)


def cmd_copy(ctx) -> int:
    from store.api import copy_store, check_store_folder

    args = ctx.args
    check_store_folder(args.target)
    result = copy_store(args.source, args.target, overwrite=args.overwrite)
    if args.json:
        print_json(result.rows)
        return 0
    shown = ", ".join(counted(count, table) for table, count in result.rows.items())
    info(f"copied {shown} from {_name(args.source)} to {_name(args.target)}")
    return 0


# What a table's rows are called in the summary: (one, many). `--json` keeps the table names.
ROW_NAMES = {
    "project": ("project", "projects"), "memory": ("memory", "memories"), "event": ("event", "events"),
    "session": ("session", "sessions"), "activity": ("activity", "activities"),
    "anchor": ("anchor", "anchors"), "vector_block": ("vector block", "vector blocks"),
    "memory_vector": ("memory vector", "memory vectors"),
    "layer_judgment": ("verdict on a team memory", "verdicts on team memories"),
}


def counted(count: int, table: str) -> str:
    """`2 memories`, `1 vector block`: a count of a table's rows in words."""
    one, many = ROW_NAMES.get(table, (table.replace("_", " "), table.replace("_", " ") + " rows"))
    return f"{count:,} {one if count == 1 else many}"


def _name(where) -> str:
    return redacted(where) if isinstance(where, str) else str(where)
