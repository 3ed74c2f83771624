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
# may write on any memory.
FEEDBACK_COLUMNS = ("confidence", "use_count", "last_used_at", "decayed_at", "status", "status_changed_at",
                    "version")
# The most one member (not the memory's owner, nor a reviewer) may raise the confidence of a
# memory in all (the ledger `memdeck_raise`): ten helpful verdicts (`confidence.usage_boost`
# 0.02) or two reinforcements (`confidence.reinforce_boost` 0.1). From an explicit memory's 0.6
# one member reaches 0.8, short of the 0.9 at which a memory is critical and injected into every
# prime (`injection.critical.min_confidence`): that takes a second member, or the owner or a
# reviewer.
RAISE_BOUND = 0.2
# What a writer may change on another's memory besides feedback: a reinforcement (tags, file
# refs, the time it was last confirmed) and a proposal (meta).
PROPOSE_COLUMNS = ("tags", "file_refs", "updated_at", "meta")
# The derived search tables, written by the client of whoever changes a memory's text (a
# writer's add indexes what is pending: `store.index.reindex.index_pending`); with the
# identifier words (`memory.words`) they are writers' to write. A reader's client never
# indexes (`PostgresBackend.may_index`).
DERIVED = ("memory_pending", "memory_vector", "vector_block")
# What a reader's client updates besides feedback, column by column: its sessions, and (on its
# own memories only: the trigger `memdeck_anchor_allowed`) an anchor's last check. Every UPDATE a
# reader holds is per column: PostgreSQL lets whoever holds a table-level UPDATE, DELETE or
# TRUNCATE take any lock of the table (LOCK TABLE ... ACCESS EXCLUSIVE, which every member's
# prime would wait for), and a column-level grant lets them take none above ROW EXCLUSIVE.
SESSION_COLUMNS = ("agent", "hat", "task", "source_path", "meta", "ended_at", "files_touched")
ANCHOR_CHECK_COLUMNS = ("status", "path", "start_line", "end_line", "checked_at", "file_size", "file_mtime_ns")


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


def _grants_sql(schema: str = "public") -> list[str]:
    feedback = ", ".join(FEEDBACK_COLUMNS)
    everyone = ", ".join(ROLE_NAMES.values())
    return [
        f"GRANT USAGE ON SCHEMA {schema} TO memdeck_reader",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO memdeck_reader",
        # Whatever a reader held before (a store set up by an earlier memdeck: table-level UPDATE
        # of sessions, activities and anchors, the derived tables), taken back with its column
        # grants; what a reader may write is granted again below.
        f"REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA {schema} FROM memdeck_reader",
        # A sequence is taken from (nextval), never set: setval to its maximum would stop every add.
        f"REVOKE UPDATE ON ALL SEQUENCES IN SCHEMA {schema} FROM {everyone}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO memdeck_reader",
        f"GRANT UPDATE ({feedback}) ON memory TO memdeck_reader",
        "GRANT INSERT ON event, project, session, activity TO memdeck_reader",
        f"GRANT UPDATE ({', '.join(SESSION_COLUMNS)}) ON session TO memdeck_reader",
        # Anchors: the rows of one's own memories only (the trigger `memdeck_anchor_allowed`).
        f"GRANT UPDATE ({', '.join(ANCHOR_CHECK_COLUMNS)}) ON anchor TO memdeck_reader",
        f"GRANT INSERT, UPDATE, DELETE ON {', '.join(DERIVED)} TO memdeck_writer",
        "GRANT INSERT, UPDATE ON memory TO memdeck_writer",
        "GRANT INSERT, DELETE ON anchor TO memdeck_writer",
        "GRANT DELETE, UPDATE ON memory, event, project, session, activity TO memdeck_reviewer",
        # The functions that write what review let in, and the trail's held events, run only
        # inside the triggers (as the store's owner), never called by a member.
        f"REVOKE ALL ON FUNCTION {schema}.memdeck_let_in(TEXT, TEXT), {schema}.memdeck_held(TEXT, TEXT, TEXT, TEXT) "
        "FROM PUBLIC",
    ]


def _rules_sql(schema: str) -> list[str]:
    """The functions, triggers and policies of a team store, in the schema `schema` (quoted).
    Every function runs with a fixed search_path (pg_catalog, the store's schema, pg_temp last)
    and names its objects with their schema: nothing a session sets (a TEMP TABLE named
    `memory`, its search_path, SET ROLE) changes what it checks. Who acts is `session_user`, the
    login, not `current_user`, which SET ROLE memdeck_writer would make a group role."""
    s = schema
    fixed = f"SET search_path = pg_catalog, {s}, pg_temp"
    immutable = ("title", "content", "type", "scope", "hat", "protected", "task", "project_id", "owner",
                 "supersedes", "session_id", "source", "created_at", "content_hash", "verified_at")
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in immutable)
    reviewed_text = "md5(concat_ws(chr(31), NEW.title, NEW.content, NEW.type, coalesce(NEW.scope, ''), " \
                    "coalesce(NEW.hat, '')))"
    denied = "RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = "
    return [
        # The store's owner: a login that is (a member of) the owner of its `memory` table.
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_is_owner() RETURNS BOOLEAN LANGUAGE sql STABLE {fixed} AS $$
           SELECT pg_catalog.pg_has_role(session_user, c.relowner, 'MEMBER')
           FROM pg_catalog.pg_class AS c WHERE c.oid = '{s}.memory'::pg_catalog.regclass
           $$""",
        # Reviewers and the store's owner may do anything.
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_may_review() RETURNS BOOLEAN LANGUAGE sql STABLE {fixed} AS $$
           SELECT pg_catalog.pg_has_role(session_user, 'memdeck_reviewer', 'MEMBER') OR {s}.memdeck_is_owner()
           $$""",
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_review_on() RETURNS BOOLEAN LANGUAGE sql STABLE
           SECURITY DEFINER {fixed} AS $$
           SELECT coalesce((SELECT value = 'on' FROM {s}.memdeck_team WHERE key = 'review'), false)
           $$""",
        # The trail is the database's: whatever a client writes, an event names who recorded it
        # and a new memory who added it (the login, whatever role the session set).
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_recorded_by() RETURNS trigger LANGUAGE plpgsql {fixed} AS $$
           DECLARE capped TEXT;
           BEGIN
               IF TG_TABLE_NAME = 'event' THEN
                   NEW.author := session_user;
                   -- A raise the edit trigger capped in this transaction (the ledger's bound):
                   -- the event says the confidence the server kept, not the one asked for.
                   capped := coalesce(current_setting('memdeck.capped_' || md5(NEW.memory_id), true), '');
                   IF capped <> '' AND NEW.confidence_after > capped::double precision THEN
                       PERFORM set_config('memdeck.capped_' || md5(NEW.memory_id), '', true);
                       NEW.confidence_after := capped::double precision;
                       BEGIN
                           NEW.detail := (NEW.detail::jsonb || jsonb_build_object('raise_capped', true))::text;
                       EXCEPTION WHEN others THEN  -- a detail that is not JSON stays as written
                           NULL;
                       END;
                   END IF;
               ELSE
                   NEW.owner := session_user;
               END IF;
               RETURN NEW;
           END $$""",
        f"DROP TRIGGER IF EXISTS event_recorded_by ON {s}.event",
        f"CREATE TRIGGER event_recorded_by BEFORE INSERT ON {s}.event FOR EACH ROW "
        f"EXECUTE FUNCTION {s}.memdeck_recorded_by()",
        f"DROP TRIGGER IF EXISTS memory_recorded_by ON {s}.memory",
        f"CREATE TRIGGER memory_recorded_by BEFORE INSERT ON {s}.memory FOR EACH ROW "
        f"EXECUTE FUNCTION {s}.memdeck_recorded_by()",
        # An event, once written, is the trail's: only the store's owner rewrites one.
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_event_kept() RETURNS trigger LANGUAGE plpgsql {fixed} AS $$
           BEGIN
               IF NOT {s}.memdeck_is_owner() AND (NEW.author IS DISTINCT FROM OLD.author
                   OR NEW.memory_id IS DISTINCT FROM OLD.memory_id OR NEW.kind IS DISTINCT FROM OLD.kind
                   OR NEW.at IS DISTINCT FROM OLD.at OR NEW.id IS DISTINCT FROM OLD.id) THEN
                   {denied} format('memdeck: may not rewrite event %s of the trail (only the store''s owner does)', OLD.id);
               END IF;
               RETURN NEW;
           END $$""",
        f"DROP TRIGGER IF EXISTS event_kept ON {s}.event",
        f"CREATE TRIGGER event_kept BEFORE UPDATE ON {s}.event FOR EACH ROW EXECUTE FUNCTION {s}.memdeck_event_kept()",
        # Review, held by the server: the text a reviewer let in (or any text while review was off).
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_let_in(memory TEXT, text_hash TEXT) RETURNS void LANGUAGE sql
           SECURITY DEFINER {fixed} AS $$
           INSERT INTO {s}.memdeck_review (memory_id, text_hash, by, at)
           VALUES (memory, text_hash, session_user, extract(epoch FROM clock_timestamp()))
           ON CONFLICT (memory_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, by = EXCLUDED.by, at = EXCLUDED.at
           $$""",
        # A write review holds: the memory stays pending, and the trail says the server held it.
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_held(memory TEXT, was TEXT, asked TEXT, why TEXT) RETURNS void
           LANGUAGE sql SECURITY DEFINER {fixed} AS $$
           INSERT INTO {s}.event (memory_id, kind, at, actor, detail)
           VALUES (memory, 'status_changed', extract(epoch FROM clock_timestamp()), 'server',
                   json_build_object('from', was, 'to', 'pending', 'asked', asked, 'held_for_review', true,
                                     'why', why)::text)
           $$""",
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_add_allowed() RETURNS trigger LANGUAGE plpgsql
           SECURITY DEFINER {fixed} AS $$
           DECLARE asked_key TEXT := 'memdeck.asked_' || md5(NEW.id);
                   asked TEXT;
           BEGIN
               IF TG_WHEN = 'BEFORE' THEN
                   IF NEW.status <> 'pending' AND NOT {s}.memdeck_may_review() AND {s}.memdeck_review_on() THEN
                       PERFORM set_config(asked_key, NEW.status, true);  -- for the AFTER trigger's event
                       NEW.status := 'pending';
                   END IF;
                   RETURN NEW;
               END IF;
               asked := coalesce(current_setting(asked_key, true), '');
               IF asked <> '' THEN
                   PERFORM set_config(asked_key, '', true);
                   PERFORM {s}.memdeck_held(NEW.id, NULL, asked, 'added by a non-reviewer while the team store reviews');
               ELSIF NEW.status <> 'pending' THEN
                   PERFORM {s}.memdeck_let_in(NEW.id, {reviewed_text});
               END IF;
               RETURN NULL;
           END $$""",
        f"DROP TRIGGER IF EXISTS memory_add_allowed ON {s}.memory",
        f"CREATE TRIGGER memory_add_allowed BEFORE INSERT ON {s}.memory FOR EACH ROW "
        f"EXECUTE FUNCTION {s}.memdeck_add_allowed()",
        f"DROP TRIGGER IF EXISTS memory_add_recorded ON {s}.memory",
        f"CREATE TRIGGER memory_add_recorded AFTER INSERT ON {s}.memory FOR EACH ROW "
        f"EXECUTE FUNCTION {s}.memdeck_add_allowed()",
        # What a GRANT cannot say (it is per column, not per row): a writer edits only their own
        # memories; nobody but a reviewer accepts (takes a memory out of the inbox) or deletes
        # another's; nobody but the store's owner changes who owns a memory, its id or when it
        # was made; with review on, a non-reviewer's change of text, or a move to active of a
        # text no reviewer let in, leaves the memory pending. Feedback may not make a memory
        # answer what its text does not say (its identifier words come from its text) nor jump
        # in confidence.
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_edit_allowed() RETURNS trigger LANGUAGE plpgsql
           SECURITY DEFINER {fixed} AS $$
           DECLARE whose TEXT := coalesce(OLD.owner, 'nobody (written before the team store)');
                   text_changed BOOLEAN;
                   hay TEXT;
                   word TEXT;
                   given DOUBLE PRECISION;
                   room DOUBLE PRECISION;
           BEGIN
               IF NOT {s}.memdeck_is_owner() AND (NEW.owner IS DISTINCT FROM OLD.owner
                   OR NEW.id IS DISTINCT FROM OLD.id OR NEW.created_at IS DISTINCT FROM OLD.created_at) THEN
                   {denied} format('memdeck: may not change the owner, id or creation time of memory %s '
                                   '(only the store''s owner does)', OLD.id);
               END IF;
               text_changed := NEW.title IS DISTINCT FROM OLD.title OR NEW.content IS DISTINCT FROM OLD.content
                   OR NEW.type IS DISTINCT FROM OLD.type OR NEW.scope IS DISTINCT FROM OLD.scope
                   OR NEW.hat IS DISTINCT FROM OLD.hat;
               IF {s}.memdeck_may_review() THEN
                   IF NEW.status IN ('active', 'inactive') OR NOT {s}.memdeck_review_on() THEN
                       PERFORM {s}.memdeck_let_in(NEW.id, {reviewed_text});
                   END IF;
                   RETURN NEW;
               END IF;
               IF NEW.status IS DISTINCT FROM OLD.status AND OLD.status = 'pending' THEN
                   {denied} format('memdeck: may not accept or reject memory %s from the inbox (reviewers do)', OLD.id);
               END IF;
               IF OLD.owner IS DISTINCT FROM session_user THEN
                   IF {changed} THEN
                       {denied} format('memdeck: may edit only their own memories; memory %s is %s''s', OLD.id, whose);
                   END IF;
                   IF NEW.status IS DISTINCT FROM OLD.status
                      AND (NEW.status NOT IN ('active', 'inactive') OR OLD.status NOT IN ('active', 'inactive')) THEN
                       {denied} format('memdeck: may not delete or restore memory %s, which is %s''s', OLD.id, whose);
                   END IF;
               END IF;
               IF NEW.confidence IS DISTINCT FROM OLD.confidence AND (NEW.confidence > 1 OR NEW.confidence < 0
                  OR (NEW.confidence > OLD.confidence + 0.25 AND OLD.owner IS DISTINCT FROM session_user)) THEN
                   {denied} format('memdeck: may not raise the confidence of memory %s by more than feedback does', OLD.id);
               END IF;
               -- On another's memory, a member's raises add up to at most {RAISE_BOUND} in all: past
               -- that a raise is clamped (feedback never fails), and the ledger keeps each total.
               IF NEW.confidence > OLD.confidence AND OLD.owner IS DISTINCT FROM session_user THEN
                   SELECT r.raised INTO given FROM {s}.memdeck_raise AS r
                   WHERE r.memory_id = OLD.id AND r.member = session_user;
                   room := greatest(0, {RAISE_BOUND} - coalesce(given, 0));
                   IF NEW.confidence - OLD.confidence > room THEN
                       NEW.confidence := OLD.confidence + room;
                       PERFORM set_config('memdeck.capped_' || md5(OLD.id), NEW.confidence::text, true);
                   END IF;
                   IF NEW.confidence > OLD.confidence THEN
                       INSERT INTO {s}.memdeck_raise AS r (memory_id, member, raised)
                       VALUES (OLD.id, session_user, NEW.confidence - OLD.confidence)
                       ON CONFLICT (memory_id, member) DO UPDATE SET raised = r.raised + EXCLUDED.raised;
                   END IF;
               END IF;
               IF NEW.words IS DISTINCT FROM OLD.words AND NEW.words <> '' THEN
                   hay := lower(NEW.title || ' ' || NEW.content || ' ' || NEW.tags);
                   FOR word IN SELECT DISTINCT w FROM regexp_split_to_table(lower(NEW.words), '\\s+') AS w LOOP
                       IF word <> '' AND strpos(hay, word) = 0 THEN
                           {denied} format('memdeck: the identifier words of memory %s must come from its text', OLD.id);
                       END IF;
                   END LOOP;
               END IF;
               IF NOT {s}.memdeck_review_on() THEN
                   IF NEW.status IN ('active', 'inactive') THEN
                       PERFORM {s}.memdeck_let_in(NEW.id, {reviewed_text});
                   END IF;
               ELSIF NEW.status IN ('active', 'inactive') AND (text_changed OR NOT EXISTS (
                       SELECT 1 FROM {s}.memdeck_review AS r WHERE r.memory_id = NEW.id
                       AND r.text_hash = {reviewed_text})) THEN
                   PERFORM {s}.memdeck_held(NEW.id, OLD.status, NEW.status, CASE WHEN text_changed
                       THEN 'its text changed after a reviewer let it in' ELSE 'no reviewer has let this text in' END);
                   NEW.status := 'pending';
               END IF;
               RETURN NEW;
           END $$""",
        f"DROP TRIGGER IF EXISTS memory_edit_allowed ON {s}.memory",
        f"CREATE TRIGGER memory_edit_allowed BEFORE UPDATE ON {s}.memory FOR EACH ROW "
        f"EXECUTE FUNCTION {s}.memdeck_edit_allowed()",
        # Anchors: a non-reviewer adds, checks or removes only the anchors of their own memories.
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_anchor_allowed() RETURNS trigger LANGUAGE plpgsql
           SECURITY DEFINER {fixed} AS $$
           DECLARE target TEXT := CASE WHEN TG_OP = 'DELETE' THEN OLD.memory_id ELSE NEW.memory_id END;
                   whose TEXT;
           BEGIN
               IF NOT {s}.memdeck_may_review() THEN
                   SELECT owner INTO whose FROM {s}.memory WHERE id = target;
                   IF whose IS DISTINCT FROM session_user
                      OR (TG_OP = 'UPDATE' AND OLD.memory_id IS DISTINCT FROM NEW.memory_id) THEN
                       {denied} format('memdeck: may change only the anchors of their own memories; memory %s is %s''s',
                                       target, coalesce(whose, 'nobody'));
                   END IF;
               END IF;
               RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
           END $$""",
        f"DROP TRIGGER IF EXISTS anchor_allowed ON {s}.anchor",
        f"CREATE TRIGGER anchor_allowed BEFORE INSERT OR UPDATE OR DELETE ON {s}.anchor FOR EACH ROW "
        f"EXECUTE FUNCTION {s}.memdeck_anchor_allowed()",
        # A vector block is checked as it is written: as many ids as slots, every slot one size.
        f"""CREATE OR REPLACE FUNCTION {s}.memdeck_block_checked() RETURNS trigger LANGUAGE plpgsql {fixed} AS $$
           DECLARE width BIGINT;
           BEGIN
               IF NEW.slots < 0 OR json_array_length(NEW.ids::json) <> NEW.slots
                  OR (NEW.slots > 0 AND octet_length(NEW.vectors) % NEW.slots <> 0)
                  OR (NEW.slots = 0 AND octet_length(NEW.vectors) <> 0) THEN
                   {denied} format('memdeck: vector block %s does not hold %s vectors of one size', NEW.id, NEW.slots);
               END IF;
               IF NEW.slots > 0 THEN
                   SELECT octet_length(b.vectors) / b.slots INTO width FROM {s}.vector_block AS b
                   WHERE b.project_id = NEW.project_id AND b.model = NEW.model AND b.id <> NEW.id AND b.slots > 0
                   LIMIT 1;
                   IF width IS NOT NULL AND width <> octet_length(NEW.vectors) / NEW.slots THEN
                       {denied} format('memdeck: vector block %s holds vectors of another size than the model''s', NEW.id);
                   END IF;
               END IF;
               RETURN NEW;
           END $$""",
        f"DROP TRIGGER IF EXISTS vector_block_checked ON {s}.vector_block",
        f"CREATE TRIGGER vector_block_checked BEFORE INSERT OR UPDATE ON {s}.vector_block FOR EACH ROW "
        f"EXECUTE FUNCTION {s}.memdeck_block_checked()",
        # Row-level security: everyone reads every memory; a new memory is its adder's.
        f"ALTER TABLE {s}.memory ENABLE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS memdeck_read ON {s}.memory",
        f"CREATE POLICY memdeck_read ON {s}.memory FOR SELECT TO memdeck_reader USING (true)",
        f"DROP POLICY IF EXISTS memdeck_add ON {s}.memory",
        f"CREATE POLICY memdeck_add ON {s}.memory FOR INSERT TO memdeck_writer "
        f"WITH CHECK (owner = session_user OR {s}.memdeck_may_review())",
        # Which columns of whose memory: the GRANTs and the trigger above.
        f"DROP POLICY IF EXISTS memdeck_change ON {s}.memory",
        f"CREATE POLICY memdeck_change ON {s}.memory FOR UPDATE TO memdeck_reader USING (true) WITH CHECK (true)",
        f"DROP POLICY IF EXISTS memdeck_delete ON {s}.memory",
        f"CREATE POLICY memdeck_delete ON {s}.memory FOR DELETE TO memdeck_reviewer USING (true)",
    ]


# The team store's own settings, which its owner sets and every member reads (`review`: on when
# shared memories wait in the inbox for a reviewer).
SETTINGS_SQL = "CREATE TABLE IF NOT EXISTS memdeck_team (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
# The text of each memory a reviewer let in (or that was written while review was off), as an
# md5 of its title, content, type, scope and hat: with review on, a non-reviewer's memory becomes
# active only with a text let in. Written by the triggers alone (schema migration 15).
REVIEW_SQL = """CREATE TABLE IF NOT EXISTS memdeck_review (
    memory_id VARCHAR(32) PRIMARY KEY REFERENCES memory (id) ON DELETE CASCADE ON UPDATE CASCADE,
    text_hash TEXT NOT NULL,
    by TEXT,
    at DOUBLE PRECISION
)"""
# How much each member has raised the confidence of each memory they do not own (feedback,
# reinforcement), written by the trigger `memdeck_edit_allowed` alone (running as the store's
# owner; members may read it, none may write it): a member's total on a memory is held to
# `RAISE_BOUND`.
RAISE_SQL = """CREATE TABLE IF NOT EXISTS memdeck_raise (
    memory_id VARCHAR(32) NOT NULL REFERENCES memory (id) ON DELETE CASCADE ON UPDATE CASCADE,
    member TEXT NOT NULL,
    raised DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (memory_id, member)
)"""
LET_IN_EXISTING = ("INSERT INTO memdeck_review (memory_id, text_hash, by, at) SELECT id, md5(concat_ws(chr(31), "
                   "title, content, type, coalesce(scope, ''), coalesce(hat, ''))), owner, updated_at FROM memory "
                   "WHERE status <> 'pending' ON CONFLICT (memory_id) DO NOTHING")


def install(db, *, review: bool | None = None) -> None:
    """Make the store at `db` (a migrated PostgreSQL store, opened by its owner) a team store: the
    roles, their grants, the trail's trigger and the edit rules. Running it again changes nothing
    (a store migrated since gets the grants of its new tables). `review`: whether shared memories
    wait for a reviewer (None: as it was; off in a new team store)."""
    from psycopg import sql

    schema = db._execute_cursor("SELECT current_schema()", ()).fetchone()[0]
    quoted = sql.Identifier(schema).as_string(db.connection())
    with db.atomic():
        for statement in (*_roles_sql(), SETTINGS_SQL, REVIEW_SQL, RAISE_SQL, *_rules_sql(quoted),
                          *_grants_sql(quoted)):
            db.cursor().execute(statement)  # no parameters: the `%s` of format() stay
        if review is not None:
            db._execute_cursor("INSERT INTO memdeck_team (key, value) VALUES ('review', %s) "
                               "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", ("on" if review else "off",))


def again_if_team_store(db) -> None:
    """Schema migration 15's last step: a team store gets the rules of this memdeck (the owner
    migrating it by opening it is the owner running `team init` again)."""
    if is_team_store(db):
        install(db)


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
        "SELECT session_user, relrowsecurity FROM pg_class WHERE oid = to_regclass('memory')", ()).fetchone()
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
        "SELECT session_user, pg_has_role(session_user, (SELECT relowner FROM pg_class WHERE oid = 'memory'::regclass), "
        "'MEMBER'), " + ", ".join(f"pg_has_role(session_user, '{ROLE_NAMES[r]}', 'MEMBER')" for r in reversed(ROLES)),
        ()).fetchone()
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


def owner_only(exc: BaseException, db, what: str) -> Refused | None:
    """A `Refused` saying in one line that only the store's owner does `what` (team init, team
    grant), naming the user and the role they have; None if `exc` is no refusal."""
    if _driver_error(exc) is None:
        return None
    try:
        if db.in_transaction():
            db.rollback()
        user, role = role_of(db)
    except Exception:  # the line still says what was refused
        user, role = "this database user", "none"
    has = "no role" if role == "none" else f"a {role}"
    return Refused(f"refused: {user} has {has} in this team store; only its owner may {what}; nothing was changed")


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
