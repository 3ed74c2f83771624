"""Commands that read the session log: `memdeck sessions` lists the project's sessions with their
counts, `memdeck log SESSION` prints one session's log (what the workbench's session view
shows), optionally of some kinds only, and with `--follow` keeps printing as it grows."""

from __future__ import annotations

import time

from store.api import iso, InvalidInput, ACTIVITY_KINDS
from tui.cli.ingest import _Stop  # SIGINT/SIGTERM end a following read between two reads
from tui.cli.output import flush, info, one_line, out, print_json, print_json_line, table

POLL_SECONDS = 0.5


def register(sub) -> None:
    p = sub.add_parser("sessions", help="the project's sessions, newest first, with what happened in each",
                       description="List the project's sessions, newest first: when each started and ended "
                                   "(live while it is being ingested, until idle for sessions.idle_minutes), "
                                   "and the counts of its log.")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p.add_argument("--json", action="store_true", help="print them as JSON on stdout")
    p.set_defaults(handler=cmd_sessions)

    p = sub.add_parser("log", help="one session's log, as the workbench's session view shows it",
                       description="Print the log of SESSION (its id, or the start of it): one line per entry, "
                                   "oldest first. Exit 4 if there is no such session.")
    p.add_argument("session", metavar="SESSION", nargs="?")
    p.add_argument("--memory", metavar="ID", default=None,
                   help="instead of a session's log: this memory's history, with who made each change")
    p.add_argument("--kind", action="append", default=None, metavar="K", choices=ACTIVITY_KINDS,
                   help="only entries of this kind (repeat for several): " + ", ".join(ACTIVITY_KINDS))
    p.add_argument("--follow", action="store_true",
                   help="keep printing new entries until the session ends, or Ctrl-C / SIGTERM")
    p.add_argument("--json", action="store_true", help="one JSON object per entry and line (JSON Lines)")
    p.set_defaults(handler=cmd_log)


def cmd_sessions(ctx) -> int:
    from store.api import summaries

    args, store = ctx.args, ctx.store
    if args.limit < 1:
        raise InvalidInput(f"--limit must be 1 or more, not {args.limit}")
    found = summaries(store, limit=args.limit)
    if args.json:
        print_json([s.to_json() for s in found])
        return 0
    if not found:
        info(f"no sessions in project {store.project!r}; `memdeck ingest TRANSCRIPT` records one")
        return 0
    table([[s.session.id, _minute(s.session.started_at), "live" if s.live else _minute(s.ended_at),
            s.session.agent or "-", str(s.activities), str(s.markers), str(s.created + s.reinforced),
            str(s.candidates), str(s.errors)] for s in found],
          ("session", "started", "ended", "agent", "entries", "markers", "memories", "candidates", "errors"))
    return 0


def cmd_log(ctx) -> int:
    from store.api import find, tail

    args, store = ctx.args, ctx.store
    if args.memory is not None or args.session is None:
        if args.memory is None or args.session is not None:
            raise InvalidInput("give a SESSION or --memory ID, one of the two")
        from tui.cli.team import print_memory_log

        return print_memory_log(ctx, args.memory, args.json)
    session = find(store, args.session)
    kinds = tuple(args.kind) if args.kind else None
    stop = None
    if args.follow:
        stop = _Stop()
        stop.install()
    last = -1
    while True:
        # Read the end and the store's version before the entries: whatever was written before
        # the session ended is printed, and a write after the read wakes the wait below.
        ended = stop is None or stop.requested or store.sessions.get(session.id).ended_at is not None
        version = store.data_version()
        for entry in tail(store, session.id, last, kinds):
            _print_entry(entry, args.json)
            last = entry.seq
        if ended:
            return 0
        while store.data_version() == version and not stop.requested:
            time.sleep(POLL_SECONDS)


def _minute(ts: float | None) -> str:
    return (iso(ts) or "-")[:16].replace("T", " ")


def _print_entry(entry, as_json: bool) -> None:
    if as_json:
        print_json_line(entry.to_json())
        return
    memory = f" [{entry.memory_id}]" if entry.memory_id else ""
    out(f"{iso(entry.at)}  {entry.seq:>5}  {entry.kind:<17} {one_line(entry.summary, 160)}{memory}")
    flush()
