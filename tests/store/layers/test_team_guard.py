"""A team store nobody can get around (issue 41): every rule is the server's, tried here as a
member with their own credentials through a plain client (psycopg, as psql would), never through
memdeck: a session's settings (a TEMP TABLE named `memory`, SET ROLE, search_path) change no
check; owner, id, creation time and every event's author are kept; review holds whatever a
non-reviewer writes; readers change nothing another member relies on."""

from __future__ import annotations

import pytest

from store.backends import postgres_roles
from store.backends.opening import connect
from team_support import as_member



@pytest.fixture
def store(postgres_server):
    """A team store: ana a reader, bo and cy writers, di a reviewer; `store.conn(user)` a
    psycopg connection as that member (autocommit), `store.owner` as the store's owner."""
    import psycopg

    owner = postgres_server.fresh_database()
    db, _ = connect(owner)
    try:
        postgres_roles.install(db)
        for user, role in (("ana", "reader"), ("bo", "writer"), ("cy", "writer"), ("di", "reviewer")):
            postgres_roles.grant(db, user, role)
    finally:
        db.close()
    opened = []

    class Store:
        url = owner

        @staticmethod
        def conn(user: str):
            conn = psycopg.connect(as_member(owner, user), autocommit=True)
            opened.append(conn)
            return conn

    Store.owner = Store.conn("postgres")
    Store.owner.execute("INSERT INTO project (name, created_at) VALUES ('demo', 0)")
    yield Store
    for conn in opened:
        conn.close()


def add(conn, memory_id: str, *, status: str = "active", content: str = "Deploys go out on Tuesdays",
        scope: str | None = None) -> None:
    conn.execute(
        "INSERT INTO public.memory (id, project_id, type, title, content, confidence, source, status, created_at, "
        "updated_at, status_changed_at, content_hash, scope) SELECT %s, id, 'convention', %s, %s, 0.5, 'explicit', "
        "%s, 1, 1, 1, 'h', %s FROM public.project WHERE name = 'demo'",
        (memory_id, content[:40], content, status, scope))


def row(store, memory_id: str, *columns: str):
    return store.owner.execute(f"SELECT {', '.join(columns)} FROM memory WHERE id = %s", (memory_id,)).fetchone()


def refused(conn, statement: str, params=(), match: str | None = None) -> None:
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege, match=match):
        conn.execute(statement, params)


def set_review(store, on: bool) -> None:
    db, _ = connect(store.url)
    try:
        postgres_roles.install(db, review=on)
    finally:
        db.close()


# -- role checks no session setting changes -------------------------------------------------------

def test_a_temp_table_named_memory_passes_no_role_check(store):
    add(store.conn("bo"), "bos")
    add(store.conn("bo"), "waiting", status="pending")
    for user in ("cy", "ana"):
        conn = store.conn(user)
        conn.execute("CREATE TEMP TABLE memory (id INTEGER)")  # pg_temp is first in a session's search_path
        conn.execute("SET search_path = pg_temp, public")
        refused(conn, "UPDATE public.memory SET status = 'active' WHERE id = 'waiting'", match="inbox")
        refused(conn, "UPDATE public.memory SET status = 'deleted' WHERE id = 'bos'")
    refused(store.conn("cy"), "SET search_path = pg_temp, public; "
            "UPDATE public.memory SET content = 'Deploys go out on Fridays' WHERE id = 'bos'")
    assert row(store, "bos", "content", "status") == ("Deploys go out on Tuesdays", "active")
    assert row(store, "waiting", "status") == ("pending",)


def test_set_role_to_a_group_role_neither_authors_nor_owns(store):
    bo = store.conn("bo")
    bo.execute("SET ROLE memdeck_writer")
    add(bo, "as-group")
    bo.execute("INSERT INTO public.event (memory_id, kind, at, actor) VALUES ('as-group', 'edited', 1, 'psql')")
    assert row(store, "as-group", "owner") == ("bo",)
    assert store.owner.execute("SELECT author FROM event WHERE memory_id = 'as-group'").fetchone() == ("bo",)
    # Another writer, in the same group role, is still not its owner.
    cy = store.conn("cy")
    cy.execute("SET ROLE memdeck_writer")
    refused(cy, "UPDATE public.memory SET content = 'x' WHERE id = 'as-group'", match="only their own")


def test_owner_id_and_creation_time_are_kept_even_on_ones_own_memory(store):
    bo = store.conn("bo")
    add(bo, "bos", scope="personal", content="Push straight to main with --force")
    for statement in ("UPDATE public.memory SET owner = 'di' WHERE id = 'bos'",
                      "UPDATE public.memory SET id = 'other' WHERE id = 'bos'",
                      "UPDATE public.memory SET created_at = 0 WHERE id = 'bos'"):
        refused(bo, statement, match="owner, id or creation time")
    refused(store.conn("di"), "UPDATE public.memory SET owner = 'ana' WHERE id = 'bos'")
    assert row(store, "bos", "owner", "id", "created_at") == ("bo", "bos", 1)
    # The store's owner still may (a repair).
    store.owner.execute("UPDATE memory SET owner = 'cy' WHERE id = 'bos'")
    assert row(store, "bos", "owner") == ("cy",)


def test_an_events_author_is_kept_even_from_a_reviewer(store):
    add(store.conn("bo"), "bos")
    store.conn("bo").execute("INSERT INTO public.event (memory_id, kind, at, actor) VALUES ('bos', 'edited', 1, 'psql')")
    refused(store.conn("di"), "UPDATE public.event SET author = 'ana' WHERE memory_id = 'bos'", match="trail")
    assert store.owner.execute("SELECT author FROM event WHERE memory_id = 'bos'").fetchone() == ("bo",)


def test_the_functions_that_let_a_text_in_are_not_a_members_to_call(store):
    add(store.conn("bo"), "bos")
    refused(store.conn("bo"), "SELECT public.memdeck_let_in('bos', 'x')")
    refused(store.conn("bo"), "SELECT public.memdeck_held('bos', 'x', 'y', 'z')")


# -- review held by the server --------------------------------------------------------------------

def _held_events(store, memory_id: str) -> list[tuple]:
    return store.owner.execute(
        "SELECT author, detail::json->>'asked', detail::json->>'to' FROM event WHERE memory_id = %s "
        "AND detail::json->>'held_for_review' = 'true' ORDER BY id", (memory_id,)).fetchall()


def test_with_review_on_every_path_a_writer_takes_stays_pending(store):
    set_review(store, True)
    bo = store.conn("bo")
    add(bo, "straight")  # added as active
    assert row(store, "straight", "status") == ("pending",)
    assert _held_events(store, "straight") == [("bo", "active", "pending")]
    add(bo, "quiet", status="inactive")  # shared inactive, then activated
    assert row(store, "quiet", "status") == ("pending",)
    # Accepted by a reviewer, then its text rewritten by its writer: pending again.
    store.conn("di").execute("UPDATE public.memory SET status = 'active' WHERE id = 'straight'")
    assert row(store, "straight", "status") == ("active",)
    bo.execute("UPDATE public.memory SET content = 'Deploys go out on Fridays' WHERE id = 'straight'")
    assert row(store, "straight", "status", "content") == ("pending", "Deploys go out on Fridays")
    assert _held_events(store, "straight")[-1] == ("bo", "active", "pending")
    # Accepted, let go inactive (feedback) and active again: the same text, no review needed.
    store.conn("di").execute("UPDATE public.memory SET status = 'active' WHERE id = 'straight'")
    store.conn("ana").execute("UPDATE public.memory SET status = 'inactive' WHERE id = 'straight'")
    store.conn("ana").execute("UPDATE public.memory SET status = 'active' WHERE id = 'straight'")
    assert row(store, "straight", "status") == ("active",)
    # A reviewer's own add is active at once.
    add(store.conn("di"), "dis")
    assert row(store, "dis", "status") == ("active",)


def test_a_memory_written_while_review_was_off_stays_let_in_when_it_is_turned_on(store):
    add(store.conn("bo"), "before")
    store.conn("bo").execute("UPDATE public.memory SET status = 'inactive' WHERE id = 'before'")
    set_review(store, True)
    store.conn("bo").execute("UPDATE public.memory SET status = 'active' WHERE id = 'before'")
    assert row(store, "before", "status") == ("active",)


# -- readers and writers change nothing another member relies on -----------------------------------

def test_a_reader_may_not_set_a_sequence(store):
    refused(store.conn("ana"), "SELECT setval('public.memory_rowid_seq', 9223372036854775807)")
    refused(store.conn("bo"), "SELECT setval(pg_get_serial_sequence('public.event', 'id'), 2147483647)")


def test_anchors_are_changed_only_on_ones_own_memories(store):
    bo = store.conn("bo")
    add(store.conn("di"), "critical")
    store.conn("di").execute("INSERT INTO public.anchor (memory_id, path, line_hash, snapshot, created_at) "
                             "VALUES ('critical', 'pay.py', 'h', 'x', 1)")
    refused(store.conn("ana"), "UPDATE public.anchor SET status = 'changed' WHERE memory_id = 'critical'",
            match="anchors of their own")
    refused(bo, "DELETE FROM public.anchor WHERE memory_id = 'critical'")
    refused(bo, "INSERT INTO public.anchor (memory_id, path, line_hash, snapshot, created_at) "
                "VALUES ('critical', 'x.py', 'h', 'x', 1)")
    add(bo, "bos")
    bo.execute("INSERT INTO public.anchor (memory_id, path, line_hash, snapshot, created_at) "
               "VALUES ('bos', 'pay.py', 'h', 'x', 1)")
    bo.execute("UPDATE public.anchor SET status = 'moved' WHERE memory_id = 'bos'")
    assert store.owner.execute("SELECT memory_id, status FROM anchor ORDER BY id").fetchall() == [
        ("critical", "fresh"), ("bos", "moved")]


def test_feedback_may_not_make_a_memory_answer_any_task(store):
    """The identifier words are the index's, written by a writer's client (a reader's never
    indexes): a writer indexing another's memory writes only words from its text."""
    add(store.conn("bo"), "bos")
    cy, ana = store.conn("cy"), store.conn("ana")
    refused(cy, "UPDATE public.memory SET words = 'payments refund ledger kubernetes' WHERE id = 'bos'",
            match="identifier words")
    refused(ana, "UPDATE public.memory SET words = 'deploys tuesdays' WHERE id = 'bos'")
    refused(ana, "UPDATE public.memory SET confidence = 1 WHERE id = 'bos'", match="confidence")
    cy.execute("UPDATE public.memory SET words = 'deploys tuesdays' WHERE id = 'bos'")
    ana.execute("UPDATE public.memory SET confidence = 0.6 WHERE id = 'bos'")
    assert row(store, "bos", "words", "confidence") == ("deploys tuesdays", 0.6)


def test_one_member_raises_anothers_memory_by_a_bounded_total(store):
    """Feedback raises a memory's confidence a step at a time (0.02 a helpful verdict, 0.1 a
    writer's reinforcement), and the server refused only a step over 0.25: a reader repeating
    small steps reached 1.0. Now each member's total raise of a memory they do not own is at
    most `RAISE_BOUND` (a ledger the server's trigger alone writes); past it a raise is
    clamped, not refused (feedback must not fail). A second member adds their own share; the
    memory's owner and reviewers are not bound; a lowering is not held back and gives no room."""
    from store.backends.postgres_roles import RAISE_BOUND

    raise_by = "UPDATE public.memory SET confidence = least(1, confidence + %s) WHERE id = %s"
    bo, ana, cy = store.conn("bo"), store.conn("ana"), store.conn("cy")
    add(bo, "bos")  # confidence 0.5
    for _ in range(100):
        ana.execute(raise_by, (0.1, "bos"))
    assert row(store, "bos", "confidence")[0] == pytest.approx(0.5 + RAISE_BOUND)
    ana.execute("UPDATE public.memory SET confidence = confidence - 0.1 WHERE id = 'bos'")  # judged wrong
    ana.execute(raise_by, (0.02, "bos"))
    assert row(store, "bos", "confidence")[0] == pytest.approx(0.4 + RAISE_BOUND)
    for _ in range(100):
        cy.execute(raise_by, (0.02, "bos"))
    assert row(store, "bos", "confidence")[0] == pytest.approx(0.4 + 2 * RAISE_BOUND)
    # The ledger is the trigger's: no member writes it, a reviewer neither.
    for user in ("ana", "cy", "di"):
        refused(store.conn(user), "DELETE FROM public.memdeck_raise")
        refused(store.conn(user), "UPDATE public.memdeck_raise SET raised = 0")
        refused(store.conn(user), "INSERT INTO public.memdeck_raise (memory_id, member, raised) VALUES ('bos', 'eve', -5)")
    # The memory's owner sets their own memory's confidence, in one step; a reviewer anyone's.
    bo.execute("UPDATE public.memory SET confidence = 1 WHERE id = 'bos'")
    assert row(store, "bos", "confidence") == (1.0,)
    add(cy, "cys")
    store.conn("di").execute("UPDATE public.memory SET confidence = 0.95 WHERE id = 'cys'")
    assert row(store, "cys", "confidence") == (0.95,)


def test_a_readers_helpful_verdicts_past_the_bound_never_fail_and_the_trail_says_what_was_kept(store):
    """Through memdeck's own client: a reader's helpful verdicts past the bound are each
    recorded (use counted, no error), the confidence stays within it, and each `used` event's
    confidence after is the one the server kept."""
    from store import Config, Store
    from store.backends.postgres_roles import RAISE_BOUND

    add(store.conn("bo"), "bos")
    with Store.open(as_member(store.url, "ana"), project="demo", config=Config.defaults()) as ana:
        for _ in range(15):  # 0.02 each: the bound is reached after 10
            after = ana.record_usage(["bos"], actor="mcp")[0]
        assert after.confidence == pytest.approx(0.5 + RAISE_BOUND) and after.use_count == 15
        events = ana.events("bos")
    used = [e for e in events if e.kind == "used"]
    assert len(used) == 15 and used[-1].confidence_after == pytest.approx(0.5 + RAISE_BOUND)
    assert all(e.confidence_after <= 0.5 + RAISE_BOUND + 1e-9 for e in used)
    assert sum(1 for e in used if e.confidence_after == e.confidence_before) == 5


def test_a_vector_block_of_the_wrong_size_is_refused_by_the_server(store):
    bo = store.conn("bo")  # a writer's client writes the vectors of what it indexes
    bo.execute("INSERT INTO public.vector_block (project_id, model, slots, version, ids, vectors) "
               "SELECT id, 'm', 2, 1, '[\"a\", \"b\"]', %s FROM public.project", (b"\0" * 8,))
    with pytest.raises(Exception, match="vectors of one size|another size"):
        bo.execute("INSERT INTO public.vector_block (project_id, model, slots, version, ids, vectors) "
                   "SELECT id, 'm', 2, 1, '[\"a\", \"b\"]', %s FROM public.project", (b"\0" * 7,))
    bo.execute("INSERT INTO public.vector_block (project_id, model, slots, version, ids, vectors) "
               "SELECT id, 'm', 1, 1, '[\"c\"]', %s FROM public.project", (b"\0" * 4,))
    with pytest.raises(Exception, match="another size"):
        bo.execute("UPDATE public.vector_block SET vectors = %s WHERE slots = 2", (b"\0" * 6,))


# -- messages ------------------------------------------------------------------------------------

def test_team_init_and_grant_by_a_member_are_one_line_exit_6(store, tmp_path):
    import os
    import subprocess

    from cli_support import memdeck_command

    def run(user: str, *args: str):
        env = {**os.environ, "MEMDECK_DB": as_member(store.url, user), "MEMDECK_PROJECT": "demo"}
        return subprocess.run([*memdeck_command(), *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=120)

    for user, args, role, what in (
            ("bo", ("team", "init", as_member(store.url, "bo")), "a writer", "team init"),
            ("di", ("team", "init", as_member(store.url, "di"), "--review"), "a reviewer", "team init"),
            ("di", ("team", "grant", "ana", "writer"), "a reviewer", "team grant")):
        done = run(user, *args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 6 and len(lines) == 1, done.stderr
        assert f"{user} has {role}" in lines[0] and what in lines[0] and "nothing was changed" in lines[0], lines[0]
    db, _ = connect(store.url)
    try:
        assert {m.user: m.role for m in postgres_roles.members(db)}["ana"] == "reader"
        assert postgres_roles.team_setting(db, "review") != "on"
    finally:
        db.close()


# -- every value read from the team store is checked before use -------------------------------------

def test_a_vector_block_of_the_wrong_size_is_left_out_of_primes_and_dropped_by_doctor(store):
    """Blocks the server's check came too late for (written before it, or the first of their
    model): a prime reads the sound ones and leaves the others out; doctor reports them and
    --fix drops them, their memories queued to be embedded again."""
    import numpy as np

    from store.backends import doctor
    from store.backends.vectors import ProjectVectors

    add(store.conn("bo"), "m1")
    add(store.conn("bo"), "m2", content="Staging resets nightly")
    project = store.owner.execute("SELECT id FROM project").fetchone()[0]
    good = np.ones((2, 4), dtype=np.float16).tobytes()
    store.owner.execute("ALTER TABLE vector_block DISABLE TRIGGER vector_block_checked")  # as before the check
    for slots, ids, blob in ((2, '["m1", "m2"]', good), (1, '["m1"]', b"\0" * 7), (1, '["m2"]', b"\0" * 12),
                             (2, '["m1"]', good)):
        store.owner.execute("INSERT INTO vector_block (project_id, model, slots, version, ids, vectors) "
                            "VALUES (%s, 'm', %s, 1, %s, %s)", (project, slots, ids, blob))
    db, _ = connect(as_member(store.url, "ana"))
    try:
        vectors = ProjectVectors(project, "m").read(db)
        assert vectors.ids == ("m1", "m2") and vectors.matrix.shape == (2, 4)
        assert list(vectors.cosines(np.ones(3, dtype=np.float32))) == [0, 0]  # another model's size
    finally:
        db.close()
    found = {f.check: f for f in doctor.check(store.url).findings}
    assert not found["vector blocks"].ok and found["vector blocks"].count == 3
    fixed = doctor.repair(store.url)
    assert {f.check: f.ok for f in fixed.findings}["vector blocks"]
    assert store.owner.execute("SELECT count(*) FROM vector_block").fetchone()[0] == 1
    assert {r[0] for r in store.owner.execute("SELECT memory_id FROM memory_pending")} >= {"m1", "m2"}


# -- a long prompt through a team layer is linear ------------------------------------------------------

def test_a_long_prompt_asks_the_team_store_no_more_than_a_short_one(store, tmp_path):
    """The prompt hook with a team layer was quadratic in the prompt's length (each word stemmed
    in a statement of its own, against a cache copied at every call; every word of a megabyte
    prompt read). Counted in statements the team store is sent, not in seconds: a prompt of
    3,000 distinct words and one of 40,000 send the same number (the task is its first 16,000
    characters, and its words are stemmed together)."""
    import random

    from store import Config, Store
    from store.engine.records import InjectionContext
    from store.layers.layers import Layers
    from store.retrieval.injection import MAX_TASK_CHARS, prime_for_prompt

    with Store.open(as_member(store.url, "bo"), project="demo", config=Config.defaults()) as bo:
        for i in range(5):
            bo.add(f"Deploys of service{i} go out on Tuesdays after the release notes", type="convention")
    config = Config.defaults().with_overrides({"team.db": as_member(store.url, "ana")}, "test")
    own = Store.open(tmp_path / "own.db", project="demo", config=config)
    words = "deploy release notes tuesday payments ledger refund service staging".split()
    sent = []
    try:
        for n in (3000, 40000):
            prompt = "when do deploys go out after the release notes? " + " ".join(
                f"{random.choice(words)}{i}" for i in range(n))
            with Layers.open(own, file=False) as layers:
                team = layers.store("team").db
                count = [0]
                real = team._execute_cursor

                def counted(*args, real=real, count=count, **kwargs):
                    count[0] += 1
                    return real(*args, **kwargs)

                team._execute_cursor = counted
                result = prime_for_prompt(own, InjectionContext(task=prompt, project="demo"), layers=layers)
                sent.append(count[0])
                assert any(r.memory.layer == "team" for r in result.included + result.excluded)
    finally:
        own.close()
    assert len(prompt) > 10 * MAX_TASK_CHARS
    assert sent[1] <= sent[0] + 2, sent


# -- locks: a reader holds none that another member waits for past the team timeouts -----------------

# Every mode above ROW EXCLUSIVE (which conflicts only with a table's owner's maintenance):
# PostgreSQL grants them to whoever holds table-level UPDATE, DELETE or TRUNCATE on the table
# (LockTableAclCheck); a column-level UPDATE does not count.
STRONG_LOCKS = ("SHARE UPDATE EXCLUSIVE", "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE")


def test_a_reader_may_lock_no_table_of_the_store(store):
    """An ACCESS EXCLUSIVE lock held by a reader made every member's prime and hooks wait: no
    table of the store may be locked by a reader in any mode above ROW EXCLUSIVE."""
    import psycopg

    ana = store.conn("ana")
    tables = [r[0] for r in store.owner.execute(
        "SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY 1")]
    assert {"memory", "event", "session", "activity", "anchor", "memory_pending", "memory_vector",
            "vector_block", "memdeck_review"} <= set(tables)
    let = []
    for table in tables:
        for mode in STRONG_LOCKS:
            try:
                with ana.transaction():
                    ana.execute(f"LOCK TABLE public.{table} IN {mode} MODE NOWAIT")
                let.append(f"{table} {mode}")
            except psycopg.errors.InsufficientPrivilege:
                pass
    assert not let, let
    # What a reader's client writes it still may: feedback, its sessions, a first project.
    add(store.conn("bo"), "bos")
    ana.execute("UPDATE public.memory SET use_count = use_count + 1, confidence = 0.52, last_used_at = 2, "
                "decayed_at = NULL, status = 'inactive', status_changed_at = 2, version = version + 1 WHERE id = 'bos'")
    ana.execute("INSERT INTO public.project (name, created_at) VALUES ('anas', 1)")
    ana.execute("INSERT INTO public.session (id, project_id, started_at) SELECT 's1', id, 1 FROM public.project "
                "WHERE name = 'demo'")
    ana.execute("UPDATE public.session SET agent = 'claude', hat = 'dev', task = 't', source_path = 'p', "
                "meta = '{}', files_touched = '[]', ended_at = 3 WHERE id = 's1'")
    ana.execute("INSERT INTO public.activity (session_id, seq, at, kind, summary) VALUES ('s1', 1, 1, 'note', 'x')")
    ana.execute("INSERT INTO public.event (memory_id, kind, at, actor) VALUES ('bos', 'used', 2, 'prime')")
    # Nothing a writer relies on: the derived index, the identifier words, activities once written.
    for statement in ("DELETE FROM public.memory_pending", "INSERT INTO public.memory_pending VALUES ('bos')",
                      "DELETE FROM public.memory_vector", "UPDATE public.vector_block SET dead = ''",
                      "UPDATE public.memory SET words = 'deploys' WHERE id = 'bos'",
                      "UPDATE public.activity SET summary = 'y'", "TRUNCATE public.event"):
        refused(ana, statement)


def _member_hook(store, tmp_path, user: str, hook: str, prompt: str = ""):
    """`memdeck hook HOOK` as `user` runs it: their own store beside the team store (as them)."""
    import json
    import os

    from cli_support import run_in_process

    config = tmp_path / f"{user}.yml"
    config.write_text(f"team:\n  db: '{as_member(store.url, user)}'\n", encoding="utf-8")
    env = {**os.environ, "MEMDECK_DB": str(tmp_path / f"{user}.db"), "MEMDECK_PROJECT": "demo",
           "MEMDECK_CONFIG": str(config), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    payload = {"session_id": f"{user}-session", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
               "hook_event_name": "UserPromptSubmit" if prompt else "SessionStart", "prompt": prompt}
    args = ["hook", hook, *(["--task", "when do deploys go out"] if hook == "session-start" else [])]
    return run_in_process(args, input=json.dumps(payload), env=env, cwd=tmp_path)


def _own(store, tmp_path, user: str):
    from store import Config, Store

    config = Config.defaults().with_overrides({"team.db": as_member(store.url, user)}, "test")
    return Store.open(tmp_path / f"{user}.db", project="demo", config=config)


def test_a_readers_client_leaves_the_index_to_writers_and_works_without_it(store, tmp_path):
    """Readers may not write the derived index (issue 41): on a team store holding memories no
    client has indexed yet, a reader's hooks, prime and feedback work (the memories are found by
    their text) and leave them waiting; a writer's next add indexes them, as before."""
    from tui.mcp_server.agent_session import AgentSession

    from store import Config, Store

    for n, text in enumerate(("Deploys go out on Tuesdays after the release notes (deployService)",
                              "The staging database resets every night at two (staging_reset)")):
        add(store.owner, f"unindexed-{n}", content=text)
    waiting = {"unindexed-0", "unindexed-1"}
    pending = lambda: {r[0] for r in store.owner.execute("SELECT memory_id FROM memory_pending")}  # noqa: E731
    assert pending() == waiting
    prompted = _member_hook(store, tmp_path, "ana", "user-prompt-submit", "when do deploys go out?")
    assert prompted.returncode == 0 and prompted.stderr == "", prompted.stderr
    assert "Deploys go out on Tuesdays" in prompted.stdout
    started = _member_hook(store, tmp_path, "ana", "session-start")  # records the use in the team store
    assert started.returncode == 0 and started.stderr == "", started.stderr
    assert "Deploys go out on Tuesdays" in started.stdout
    agent = AgentSession(lambda: _own(store, tmp_path, "ana"))
    try:
        assert agent.context("when do deploys go out")["layers"]["unindexed-0"] == "team"
        assert agent.feedback("unindexed-0", "helpful")["layer"] == "team"
        assert agent.feedback("unindexed-1", "wrong")["layer"] == "team"
    finally:
        agent.close()
    assert row(store, "unindexed-0", "use_count")[0] >= 2
    assert pending() == waiting and row(store, "unindexed-0", "words") == ("",)
    with Store.open(as_member(store.url, "ana"), project="demo", config=Config.defaults()) as ana:
        assert not ana.backend.may_index() and ana.index_pending() == 0
    with Store.open(as_member(store.url, "bo"), project="demo", config=Config.defaults()) as bo:
        assert bo.backend.may_index()
        bo.add("Releases are tagged on main by the release captain", type="convention")
    assert pending() == set()
    assert row(store, "unindexed-0", "words") == ("deploy service",)


@pytest.mark.parametrize("lock", ["rows", "advisory"])
def test_a_reader_holding_row_or_advisory_locks_delays_no_hook_past_the_team_timeouts(store, tmp_path, lock):
    """What a reader may still lock: the rows of `memory` (SELECT ... FOR UPDATE needs UPDATE of
    one column, which feedback is) and any advisory lock, memdeck's write lock among them. Held
    in an open transaction, neither keeps another member's hooks waiting past the team
    connection's lock wait. The prompt hook reads the team store and writes nothing there: it
    does not wait at all. The session-start hook with a task records the team memory's use in
    the team store: it waits at most the lock wait, then ends with its memories and one line
    saying the use was not recorded. (No clock is read: the hook ending is the proof, and its
    line says what it waited for.)"""
    from store.backends.postgres import WRITE_LOCK

    add(store.conn("bo"), "bos", content="Deploys go out on Tuesdays after the release notes")
    with _own(store, tmp_path, "cy") as own:
        own.add("Deploys of the payments service need the finance team's sign-off", type="convention")
    ana = store.conn("ana")
    ana.execute("BEGIN")
    if lock == "rows":
        assert ana.execute("SELECT id FROM public.memory FOR UPDATE").fetchall() == [("bos",)]
    else:
        ana.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK,))
    try:
        prompted = _member_hook(store, tmp_path, "cy", "user-prompt-submit", "when do deploys go out?")
        assert prompted.returncode == 0 and prompted.stderr == "", prompted.stderr
        assert "finance team's sign-off" in prompted.stdout and "Deploys go out on Tuesdays" in prompted.stdout
        started = _member_hook(store, tmp_path, "cy", "session-start")
        assert started.returncode == 0, started.stderr
        assert "finance team's sign-off" in started.stdout and "Deploys go out on Tuesdays" in started.stdout
        lines = started.stderr.strip().splitlines()
        assert len(lines) == 1 and "use not recorded in the team layer" in lines[0], started.stderr
        assert "lock" in lines[0] and "past 2s" in lines[0], lines[0]
    finally:
        ana.execute("ROLLBACK")
        ana.execute("SELECT pg_advisory_unlock_all()")
    assert row(store, "bos", "use_count") == (0,)


def test_a_long_prompts_words_are_read_from_an_analyzed_team_store_in_statements_of_one_size(store, tmp_path):
    """On a team store PostgreSQL has analyzed (as every store in use is), a prompt's words were
    read in one statement with a branch a word (a GIN lookup each) and their shares sampled
    with a filter a word: statements that grew with the words, and PostgreSQL's work on a
    statement of n branches grew with n squared (1,500 words took 4 s and the team layer was
    dropped at the statement timeout). Now a prompt of 1,500 distinct words sends the team
    store no more statements, and none longer, than one of 150: counted in the statements'
    text, not timed. (That the words' matches are the same however they are read:
    tests/store/backends/test_postgres_word_matches.py.)"""
    import random

    from store import Config, Store
    from store.backends import postgres_search
    from store.engine.records import InjectionContext
    from store.layers.layers import Layers
    from store.retrieval.injection import prime_for_prompt

    with Store.open(as_member(store.url, "bo"), project="demo", config=Config.defaults()) as bo:
        for i in range(30):
            bo.add(f"Deploys of service{i} go out on Tuesdays after the release notes", type="convention")
    store.owner.execute("VACUUM ANALYZE memory")
    words = "deploy release notes tuesday payments ledger refund service staging".split()
    sent = []
    with _own(store, tmp_path, "ana") as own:
        for n in (150, 1500):
            prompt = "when do deploys go out after the release notes? " + " ".join(
                f"{random.choice(words)}{i}" for i in range(n))
            postgres_search._matches.clear()  # nothing kept from the prompt before
            with Layers.open(own, file=False) as layers:
                team = layers.store("team").db
                statements: list[str] = []
                real = team._execute_cursor

                def recorded(sql, *args, real=real, statements=statements, **kwargs):
                    statements.append(sql)
                    return real(sql, *args, **kwargs)

                team._execute_cursor = recorded
                result = prime_for_prompt(own, InjectionContext(task=prompt, project="demo"), layers=layers)
                assert not layers.dropped, layers.dropped
                assert any(r.memory.layer == "team" for r in result.included + result.excluded)
                sent.append(sorted(len(sql) for sql in statements))
    # As many statements or fewer (what the first read is kept), none longer than the longest
    # for a tenth of the words (give or take a bound of a range: a few characters).
    assert len(sent[1]) <= len(sent[0]) and max(sent[1]) <= max(sent[0]) + 20, sent
