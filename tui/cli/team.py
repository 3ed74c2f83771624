"""`memdeck team`: a PostgreSQL store several people share, with roles PostgreSQL enforces
(`team init URL`, `team grant USER ROLE`, `team members`), and `memdeck blame`: who wrote and who
last changed each of a project's memories (docs/team.md)."""

from __future__ import annotations

import argparse

from store.api import names_file, postgres_location as location, redacted, InvalidInput
from tui.cli.output import date, info, one_line, print_json, table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("team", help="set up a shared PostgreSQL store with roles: init, grant, members",
                       description="A team store: one PostgreSQL database several people use, where "
                                   "PostgreSQL itself holds each person to their role (reader, writer, "
                                   "reviewer; docs/team.md). A refused change exits 6 and changes nothing.")
    team = p.add_subparsers(dest="team_command", metavar="ACTION", required=True)
    q = team.add_parser("init", help="make a PostgreSQL database a team store (run as its owner)",
                        description="Create memdeck's tables in the database at URL (or bring them up to date) "
                                    "and the roles memdeck_reader, memdeck_writer and memdeck_reviewer with "
                                    "their grants and row-level security. Run it as the database's owner; "
                                    "running it again changes nothing.")
    q.add_argument("url", metavar="URL", type=location, help="postgresql://owner@host/database")
    q.add_argument("--review", action=argparse.BooleanOptionalAction, default=None,
                   help="memories shared with `memdeck share` wait in the inbox for a reviewer "
                        "(default: as before; off in a new team store)")
    q.set_defaults(handler=cmd_init)
    q = team.add_parser("grant", help="give a database user a role: reader, writer or reviewer",
                        description="Give USER (a PostgreSQL login role, made without a password if there is "
                                    "none) the memdeck role ROLE, replacing any other they had, in the team "
                                    "store at --db. Readers read and give feedback; writers also add, edit "
                                    "their own memories and propose; reviewers also accept, edit and delete "
                                    "anything.")
    q.add_argument("user", metavar="USER")
    q.add_argument("role", metavar="ROLE", choices=("reader", "writer", "reviewer"))
    q.set_defaults(handler=cmd_grant)
    q = team.add_parser("members", help="who has which role in the team store",
                        description="List the database users with a memdeck role, and their role.")
    q.add_argument("--json", action="store_true", help="print them as JSON")
    q.set_defaults(handler=cmd_members)

    p = sub.add_parser("blame", help="who wrote and who last changed each of the project's memories",
                       description="One line per memory of the project (outside the trash), oldest first: "
                                   "who wrote it and when, and who made its last change (an edit, a status "
                                   "change, a reinforcement, a supersession; not feedback) and when. In a "
                                   "team store the names are database users, recorded by PostgreSQL.")
    p.add_argument("--all", action="store_true", help="the memories in the trash too")
    p.add_argument("--json", action="store_true", help="print them as JSON")
    p.set_defaults(handler=cmd_blame)


def _team_db(where):
    from store.api import connect

    if names_file(where):
        raise InvalidInput("a team store is a PostgreSQL database: give its URL "
                           "(--db postgresql://user@host/database, or MEMDECK_DB)")
    db, _ = connect(str(where))
    return db


def cmd_init(ctx) -> int:
    from store.api import postgres_roles

    db = _team_db(ctx.args.url)
    try:
        postgres_roles.install(db, review=ctx.args.review)
        review = postgres_roles.team_setting(db, "review") == "on"
    except Exception as exc:
        raise postgres_roles.owner_only(exc, db, "set it up (team init)") or exc from None
    finally:
        db.close()
    info(f"team store ready at {redacted(str(ctx.args.url))}: roles "
         f"{', '.join(postgres_roles.ROLE_NAMES.values())}; give each person one with "
         "`memdeck --db URL team grant USER reader|writer|reviewer`")
    info("review: on (memories shared with `memdeck share` wait in the inbox for a reviewer)" if review
         else "review: off (memories shared with `memdeck share` land at once; turn review on: team init URL --review)")
    return 0


def cmd_grant(ctx) -> int:
    from store.api import postgres_roles

    db = _team_db(ctx.args.db)
    try:
        if not postgres_roles.is_team_store(db):
            raise InvalidInput("not a team store yet: run `memdeck team init URL` as the database's owner first")
        made = postgres_roles.grant(db, ctx.args.user, ctx.args.role)
    except Exception as exc:
        raise postgres_roles.owner_only(exc, db, "give roles (team grant)") or exc from None
    finally:
        db.close()
    info(f"{ctx.args.user} is a {ctx.args.role}: may {postgres_roles.MAY[ctx.args.role]}"
         + ("; the login role was made without a password (set one: ALTER ROLE ... PASSWORD)" if made else ""))
    return 0


def cmd_members(ctx) -> int:
    from store.api import postgres_roles

    db = _team_db(ctx.args.db)
    try:
        found = postgres_roles.members(db)
    finally:
        db.close()
    if ctx.args.json:
        print_json([{"user": m.user, "role": m.role} for m in found])
    elif not found:
        info("nobody has a role yet: memdeck team grant USER reader|writer|reviewer")
    else:
        table([[m.user, m.role] for m in found], ("user", "role"))
    return 0


def cmd_blame(ctx) -> int:
    from store.api import blame

    found = blame(ctx.store, include_deleted=ctx.args.all)
    if ctx.args.json:
        print_json([b.to_json() for b in found])
        return 0
    if not found:
        info(f"no memories in project {ctx.store.project!r}")
        return 0
    table([[b.memory_id, b.wrote or "-", date(b.written_at), b.changed_by or "-", date(b.changed_at),
            b.change or "-", one_line(b.title, 50)] for b in found],
          ("id", "wrote", "on", "last change by", "on", "change", "title"))
    return 0


def print_memory_log(ctx, memory_id: str, as_json: bool) -> int:
    """`memdeck log --memory ID`: the memory's history, oldest first, with who made each change;
    from the first layer holding it (a team memory's, with its members' feedback: docs/team.md)."""
    from store.api import iso
    from tui.cli.output import out, print_json_line

    _, store, memory = ctx.layers.locate(memory_id)
    for event in store.events(memory.id):
        if as_json:
            print_json_line({"at": iso(event.at), "kind": event.kind, "author": event.author,
                             "actor": event.actor, "confidence_before": event.confidence_before,
                             "confidence_after": event.confidence_after, "detail": event.detail})
        else:
            out(f"{(iso(event.at) or '-')[:19]}  {event.author or '-'}  {event.kind}  via {event.actor}"
                + (f"  {_changes(event.detail)}" if event.detail.get("changes") else ""))
    return 0


def _changes(detail: dict) -> str:
    return one_line("; ".join(f"{name}" for name in detail["changes"]), 80)
