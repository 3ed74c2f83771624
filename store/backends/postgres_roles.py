"""Who may do what in a team store, enforced by PostgreSQL itself (GRANTs, row-level security and
one trigger), so a client that bypasses memdeck (psql, a script) is held to the same rules.

Three roles, each a PostgreSQL role without login that people's login roles are members of:

- `memdeck_reader`: reads everything and gives feedback (a memory used, judged helpful or wrong:
  its confidence, use count and status between active and inactive); records its sessions.
- `memdeck_writer`: a reader who also adds memories (owned by them), edits their own, and
  proposes (reinforces another's memory, puts a proposal on it, supersedes it).
- `memdeck_reviewer`: a writer who also accepts (moves a pending memory out of the inbox), edits
  and deletes anything, and rewrites history (purge).

The database's owner (who ran `memdeck team init`) may do everything, as a reviewer may.
The roles are the server's (PostgreSQL roles are not per database): a person who is a writer of
one memdeck database on a server is a writer of every memdeck database there that was set up
with `team init`.

In a team store every event names the database user who recorded it, and every memory the
database user who added it (`memory.owner`), whatever the client says.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.engine.errors import InvalidInput, MemdeckError

ROLES = ("reader", "writer", "reviewer")
ROLE_NAMES = {role: f"memdeck_{role}" for role in ROLES}
# What each role may do, as `memdeck team` and the refusals say it.
MAY = {
    "reader": "read and give feedback",
    "writer": "read, give feedback, add memories, edit their own and propose",
    "reviewer": "read, give feedback, add, accept, edit and delete any memory",
}
# The columns feedback writes (used, helpful, wrong; decay; a contradiction), which every role
# may write on any memory; and the derived `words` (identifier words, written after any write).
FEEDBACK_COLUMNS = ("confidence", "use_count", "last_used_at", "decayed_at", "status", "status_changed_at",
                    "version", "words")
# What a writer may change on another's memory besides feedback: a reinforcement (tags, file
# refs, the time it was last confirmed) and a proposal (meta).
PROPOSE_COLUMNS = ("tags", "file_refs", "updated_at", "meta")
# Tables every role writes as a side effect of reading (the derived search tables, sessions,
# the anchors' last check, a project seen for the first time).
DERIVED = ("memory_pending", "memory_vector", "vector_block")


class Refused(MemdeckError):
    """The team store's rules do not let this database user make this change; nothing changed."""

    exit_code = 6


def _roles_sql() -> list[str]:
    statements = []
    for role in ROLES:
        name = ROLE_NAMES[role]
        statements.append(f"""DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{name}') THEN
                CREATE ROLE {name} NOLOGIN;
            END IF; END $$""")
    # A writer is a reader too, a reviewer a writer: each role's grants reach the ones above it.
    statements += ["GRANT memdeck_reader TO memdeck_writer", "GRANT memdeck_writer TO memdeck_reviewer"]
    return statements


def _grants_sql() -> list[str]:
    feedback = ", ".join(FEEDBACK_COLUMNS)
    return [
        "GRANT USAGE ON SCHEMA public TO memdeck_reader",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO memdeck_reader",
        "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO memdeck_reader",
        f"GRANT UPDATE ({feedback}) ON memory TO memdeck_reader",
        "GRANT INSERT ON event TO memdeck_reader",
        "GRANT INSERT ON project TO memdeck_reader",
        "GRANT INSERT, UPDATE ON session, activity TO memdeck_reader",
        "GRANT UPDATE ON anchor TO memdeck_reader",
        f"GRANT INSERT, UPDATE, DELETE ON {', '.join(DERIVED)} TO memdeck_reader",
        "GRANT INSERT, UPDATE ON memory TO memdeck_writer",
        "GRANT INSERT, DELETE ON anchor TO memdeck_writer",
        "GRANT DELETE, UPDATE ON memory, event, project, session, activity TO memdeck_reviewer",
    ]


def _rules_sql() -> list[str]:
    immutable = ("title", "content", "type", "scope", "hat", "protected", "task", "project_id", "owner",
                 "supersedes", "session_id", "source", "created_at", "content_hash", "verified_at")
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in immutable)
    return [
        # Reviewers and the database's owner (who set the store up) may do anything.
        """CREATE OR REPLACE FUNCTION memdeck_may_review() RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
           SELECT pg_has_role('memdeck_reviewer', 'MEMBER')
               OR pg_has_role((SELECT relowner FROM pg_class WHERE oid = 'memory'::regclass), 'MEMBER')
           $$""",
        # The trail is the database's: whatever a client writes, an event names who recorded it
        # and a new memory who added it.
        """CREATE OR REPLACE FUNCTION memdeck_recorded_by() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
               IF TG_TABLE_NAME = 'event' THEN
                   NEW.author := current_user;
               ELSE
                   NEW.owner := current_user;
               END IF;
               RETURN NEW;
           END $$""",
        "DROP TRIGGER IF EXISTS event_recorded_by ON event",
        "CREATE TRIGGER event_recorded_by BEFORE INSERT ON event FOR EACH ROW EXECUTE FUNCTION memdeck_recorded_by()",
        "DROP TRIGGER IF EXISTS memory_recorded_by ON memory",
        "CREATE TRIGGER memory_recorded_by BEFORE INSERT ON memory FOR EACH ROW EXECUTE FUNCTION memdeck_recorded_by()",
        # What a GRANT cannot say (it is per column, not per row): a writer edits only their own
        # memories, and nobody but a reviewer accepts (takes a memory out of the inbox) or
        # deletes another's.
        f"""CREATE OR REPLACE FUNCTION memdeck_edit_allowed() RETURNS trigger LANGUAGE plpgsql AS $$
           DECLARE whose TEXT := coalesce(OLD.owner, 'nobody (written before the team store)');
           BEGIN
               IF memdeck_may_review() THEN
                   RETURN NEW;
               END IF;
               IF NEW.status IS DISTINCT FROM OLD.status AND OLD.status = 'pending' THEN
                   RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = format(
                       'memdeck: may not accept or reject memory %s from the inbox (reviewers do)', OLD.id);
               END IF;
               IF OLD.owner IS DISTINCT FROM current_user THEN
                   IF {changed} THEN
                       RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = format(
                           'memdeck: may edit only their own memories; memory %s is %s''s', OLD.id, whose);
                   END IF;
                   IF NEW.status IS DISTINCT FROM OLD.status
                      AND (NEW.status NOT IN ('active', 'inactive') OR OLD.status NOT IN ('active', 'inactive')) THEN
                       RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = format(
                           'memdeck: may not delete or restore memory %s, which is %s''s', OLD.id, whose);
                   END IF;
               END IF;
               RETURN NEW;
           END $$""",
        "DROP TRIGGER IF EXISTS memory_edit_allowed ON memory",
        "CREATE TRIGGER memory_edit_allowed BEFORE UPDATE ON memory FOR EACH ROW EXECUTE FUNCTION memdeck_edit_allowed()",
        # Row-level security: everyone reads every memory; a new memory is its adder's.
        "ALTER TABLE memory ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS memdeck_read ON memory",
        "CREATE POLICY memdeck_read ON memory FOR SELECT TO memdeck_reader USING (true)",
        "DROP POLICY IF EXISTS memdeck_add ON memory",
        "CREATE POLICY memdeck_add ON memory FOR INSERT TO memdeck_writer "
        "WITH CHECK (owner = current_user OR memdeck_may_review())",
        # Which columns of whose memory: the GRANTs and the trigger above.
        "DROP POLICY IF EXISTS memdeck_change ON memory",
        "CREATE POLICY memdeck_change ON memory FOR UPDATE TO memdeck_reader USING (true) WITH CHECK (true)",
        "DROP POLICY IF EXISTS memdeck_delete ON memory",
        "CREATE POLICY memdeck_delete ON memory FOR DELETE TO memdeck_reviewer USING (true)",
    ]


# The team store's own settings, which its owner sets and every member reads (`review`: on when
# shared memories wait in the inbox for a reviewer).
SETTINGS_SQL = "CREATE TABLE IF NOT EXISTS memdeck_team (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def install(db, *, review: bool | None = None) -> None:
    """Make the store at `db` (a migrated PostgreSQL store, opened by its owner) a team store: the
    roles, their grants, the trail's trigger and the edit rules. Running it again changes nothing
    (a store migrated since gets the grants of its new tables). `review`: whether shared memories
    wait for a reviewer (None: as it was; off in a new team store). Raises `Refused` when this
    database user may not (only the database's owner sets up its roles)."""
    try:
        with db.atomic():
            for statement in (*_roles_sql(), SETTINGS_SQL, *_grants_sql(), *_rules_sql()):
                db.cursor().execute(statement)  # no parameters: the `%s` of format() stay
            if review is not None:
                db._execute_cursor("INSERT INTO memdeck_team (key, value) VALUES ('review', %s) "
                                   "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                                   ("on" if review else "off",))
    except Exception as exc:
        original = _driver_error(exc)
        if original is None:
            raise
        user = db._execute_cursor("SELECT current_user", ()).fetchone()[0]
        said = str(original).strip().splitlines()[0] if str(original).strip() else "permission denied"
        raise Refused(f"refused: {user} may not set up this team store ({said}): `memdeck team init` is "
                      "run by the database's owner; nothing was changed") from None


def team_setting(db, key: str) -> str | None:
    """One of the team store's settings (`memdeck_team`), None when unset or not a team store."""
    if not db._execute_cursor("SELECT to_regclass('memdeck_team')", ()).fetchone()[0]:
        return None
    row = db._execute_cursor("SELECT value FROM memdeck_team WHERE key = %s", (key,)).fetchone()
    return row[0] if row else None


def is_team_store(db) -> bool:
    return bool(db._execute_cursor(
        "SELECT relrowsecurity FROM pg_class WHERE oid = to_regclass('memory')", ()).fetchone()[0] or False)


def team_user(db) -> str | None:
    """The database user, in a team store (where PostgreSQL records them on every event and
    memory); None in a PostgreSQL store without roles."""
    row = db._execute_cursor(
        "SELECT current_user, relrowsecurity FROM pg_class WHERE oid = to_regclass('memory')", ()).fetchone()
    return row[0] if row and row[1] else None


def grant(db, user: str, role: str) -> bool:
    """Give `user` (a PostgreSQL login role; made, without a password, if there is none) exactly
    `role`: any other memdeck role they had is taken away. True if the login role was made."""
    from psycopg import sql

    if role not in ROLES:
        raise InvalidInput(f"unknown role {role!r}; one of {', '.join(ROLES)}")
    if not user or len(user) > 63 or not user.isprintable():
        raise InvalidInput(f"{user!r} is not a PostgreSQL user name (1 to 63 printable characters)")
    if user.startswith("memdeck_") or user.startswith("pg_"):
        raise InvalidInput(f"{user!r} is a role's name, not a person's")
    conn = db.connection()
    name = sql.Identifier(user)
    with db.atomic():
        made = not db._execute_cursor("SELECT 1 FROM pg_roles WHERE rolname = %s", (user,)).fetchone()
        if made:
            db._execute_cursor(sql.SQL("CREATE ROLE {} LOGIN").format(name).as_string(conn), ())
        for other in ROLES:
            db._execute_cursor(sql.SQL("REVOKE {} FROM {}").format(
                sql.Identifier(ROLE_NAMES[other]), name).as_string(conn), ())
        db._execute_cursor(sql.SQL("GRANT {} TO {}").format(sql.Identifier(ROLE_NAMES[role]), name).as_string(conn), ())
    return made


@dataclass(frozen=True)
class Member:
    user: str
    role: str


def members(db) -> list[Member]:
    """Every login role with a memdeck role, with their highest one."""
    rows = db._execute_cursor(
        "SELECT m.rolname, r.rolname FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid "
        "JOIN pg_roles m ON m.oid = a.member WHERE r.rolname = ANY(%s) AND m.rolname NOT LIKE 'memdeck\\_%%' "
        "ORDER BY m.rolname", (list(ROLE_NAMES.values()),)).fetchall()
    highest: dict[str, str] = {}
    for user, role in rows:
        role = role.removeprefix("memdeck_")
        if user not in highest or ROLES.index(role) > ROLES.index(highest[user]):
            highest[user] = role
    return [Member(u, r) for u, r in highest.items()]


def role_of(db) -> tuple[str, str]:
    """(the database user, their memdeck role: reader, writer, reviewer, owner, or none)."""
    user, owner, reviewer, writer, reader = db._execute_cursor(
        "SELECT current_user, pg_has_role((SELECT relowner FROM pg_class WHERE oid = 'memory'::regclass), 'MEMBER'), "
        + ", ".join(f"pg_has_role('{ROLE_NAMES[r]}', 'MEMBER')" for r in reversed(ROLES)), ()).fetchone()
    role = "owner" if owner else "reviewer" if reviewer else "writer" if writer else "reader" if reader else "none"
    return user, role


def refusal(exc: BaseException, db) -> Refused | None:
    """A `Refused` saying in one line what this user's role may not do, if `exc` is PostgreSQL
    refusing a change for lack of privilege (SQLSTATE 42501); None for any other error."""
    original = _driver_error(exc)
    if original is None:
        return None
    text = str(original).strip().splitlines()[0] if str(original).strip() else ""
    try:
        if db is None:  # refused while opening the store: no role to read anything with
            raise LookupError
        if db.in_transaction():
            db.rollback()
        user, role = role_of(db)
    except Exception:  # the message still says what was refused
        user, role = "this database user", "none"
    if role == "none":
        return Refused(f"refused: {user} has no role in this team store; nothing was changed "
                       "(its owner gives one: memdeck team grant USER reader|writer|reviewer)")
    if text.startswith("memdeck: "):
        what = text.removeprefix("memdeck: ")
    elif "row-level security" in text:
        what = "may add memories only as themselves"
    elif role == "reader":
        what = "may not add, edit or delete memories"
    elif " memory" in text or " event" in text:
        what = "may not delete memories for good or rewrite their history"
    else:
        what = f"may not do this ({text})"
    return Refused(f"refused: {user} is a {role} ({MAY.get(role, 'may do anything')}); "
                   f"a {role} {what}; nothing was changed")


def is_refusal(exc: BaseException) -> bool:
    """Whether `exc` is PostgreSQL refusing for lack of privilege (SQLSTATE 42501)."""
    return _driver_error(exc) is not None


def _driver_error(exc: BaseException) -> BaseException | None:
    """psycopg's InsufficientPrivilege (SQLSTATE 42501) behind Peewee's wrapping, if that is it."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if getattr(exc, "sqlstate", None) == "42501":
            return exc
        inner = exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else None
        exc = inner or exc.__cause__ or exc.__context__
    return None
