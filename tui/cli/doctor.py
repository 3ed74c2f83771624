"""`memdeck doctor [--fix] [--json]`: check the store for damage and repair what is safe.

Exit 0 when the store is sound (after the repairs, with --fix), 1 when something is wrong that
--fix would repair, 3 when the file is not a usable store or its pages are damaged.
"""

from __future__ import annotations

import argparse

from store.api import StoreError
from tui.cli.output import info, out, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor", help="check the store (integrity, full-text index, orphaned rows, schema); --fix repairs",
        description="Check the store file: SQLite's integrity check, the full-text index against the "
                    "memory table, events and activities whose memory or session is gone, memories "
                    "of a missing project, and the schema version. Writes nothing unless --fix is "
                    "given; --fix first copies the store to STORE.doctor-DATE.bak, then rebuilds the "
                    "index, drops orphaned rows, re-homes memories of a missing project and migrates "
                    "an old schema. Damaged pages are reported, never written to.")
    p.add_argument("--fix", action="store_true", help="repair what is safe, after a backup copy")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_doctor)


def cmd_doctor(ctx) -> int:
    from store.api import default_db_path, check, repair

    path = ctx.args.db or default_db_path()
    # Not `ctx.store`: opening would create a missing store, migrate an old one, or refuse a
    # damaged one before doctor could say what is wrong with it.
    report = repair(path) if ctx.args.fix else check(path)
    if ctx.args.json:
        print_json(report.to_json())
    else:
        for finding in report.findings:
            label = "BAD " if not finding.ok else "note" if finding.note else "ok  "
            out(f"{label}  {finding.check:<26} {finding.message}")
        if report.backup:
            info(f"backup copy before repairing: {report.backup}")
        for done in report.repairs:
            info(f"repaired: {done}")
    if report.damaged:
        if not ctx.args.json:
            info(f"memdeck: {report.path}: the store is damaged; doctor left it untouched")
        return StoreError.exit_code
    if not report.ok:
        if not ctx.args.json:
            info("run `memdeck doctor --fix` to repair (a backup copy is made first)")
        return 1
    if not ctx.args.json:
        info(f"{report.path}: the store is sound")
    return 0
