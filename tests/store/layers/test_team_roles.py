"""A team store: PostgreSQL holds each database user to their memdeck role (reader, writer,
reviewer), through memdeck and through a client that bypasses it; the trail names who did what
(`memdeck log --memory`, `memdeck blame`)."""

from __future__ import annotations

import json
import os
from functools import partial

import pytest

from postgres_server import dump
from tests.cli_support import run_in_process
from team_support import as_member


@pytest.fixture
def team(postgres_server, tmp_path):
    """A team store with a reader (ana), two writers (bo, cy) and a reviewer (di); `run(user, ...)`
    runs memdeck as that database user, `url(user)` is their URL."""
    owner_url = postgres_server.fresh_database()

    url = partial(as_member, owner_url)  # the team store as that database user

    def run(user: str, *args: str, check: bool = False):
        env = {**os.environ, "MEMDECK_DB": url(user), "MEMDECK_PROJECT": "demo"}
        result = run_in_process([*args], env=env, cwd=tmp_path)
        if check and result.returncode != 0:
            raise AssertionError(f"memdeck {' '.join(args)} as {user} exited {result.returncode}:\n{result.stderr}")
        return result

    run("postgres", "team", "init", owner_url, check=True)
    for user, role in (("ana", "reader"), ("bo", "writer"), ("cy", "writer"), ("di", "reviewer")):
        run("postgres", "team", "grant", user, role, check=True)
    run.url = url
    run.owner_url = owner_url
    return run


def _added(team, user: str, text: str) -> str:
    return json.loads(team(user, "add", text, "--type", "convention", "--json", check=True).stdout)["id"]


def _refused_once(result, *words: str) -> None:
    assert result.returncode == 6, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert "nothing was changed" in lines[0]


def test_members_and_init_again(team):
    again = team("postgres", "team", "init", team.owner_url)
    assert again.returncode == 0, again.stderr
    members = json.loads(team("postgres", "team", "members", "--json", check=True).stdout)
    assert {m["user"]: m["role"] for m in members} == {"ana": "reader", "bo": "writer", "cy": "writer",
                                                       "di": "reviewer"}
    # A new grant replaces the old role.
    team("postgres", "team", "grant", "cy", "reader", check=True)
    members = json.loads(team("postgres", "team", "members", "--json", check=True).stdout)
    assert {m["user"]: m["role"] for m in members}["cy"] == "reader"


def test_a_reader_reads_and_gives_feedback_but_cannot_write_through_memdeck(team):
    memory_id = _added(team, "bo", "Deploys go out on Tuesdays")
    before = dump(team.owner_url)
    _refused_once(team("ana", "add", "Staging needs the VPN", "--type", "context"), "ana is a reader",
                  "may not add")
    _refused_once(team("ana", "edit", memory_id, "--title", "Deploys on Fridays"), "ana is a reader")
    _refused_once(team("ana", "delete", memory_id), "ana is a reader")
    assert dump(team.owner_url) == before
    listed = json.loads(team("ana", "list", "--json", check=True).stdout)
    assert [m["id"] for m in listed] == [memory_id]
    # Reading with the usage recorded (prime --record) is feedback: allowed.
    primed = team("ana", "prime", "--task", "when do deploys go out", "--record")
    assert primed.returncode == 0, primed.stderr
    assert [e["kind"] for e in _log(team, "ana", memory_id)][-1] == "used"
    assert _log(team, "ana", memory_id)[-1]["author"] == "ana"


def _log(team, user: str, memory_id: str) -> list[dict]:
    out = team(user, "log", "--memory", memory_id, "--json", check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def test_a_reader_cannot_write_through_a_client_that_bypasses_memdeck(team):
    import psycopg

    memory_id = _added(team, "bo", "Deploys go out on Tuesdays")
    before = dump(team.owner_url)
    with psycopg.connect(team.url("ana"), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 1
        for statement in (
            "UPDATE memory SET title = 'owned' WHERE id = %s",
            "DELETE FROM memory WHERE id = %s",
            "DELETE FROM event WHERE memory_id = %s",
            "INSERT INTO memory (id, project_id, type, title, content, confidence, source, status, created_at, "
            "updated_at, status_changed_at, content_hash) SELECT %s || 'x', project_id, type, title, content, 1, "
            "source, 'active', 0, 0, 0, 'h' FROM memory",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement, (memory_id,))
    assert dump(team.owner_url) == before


def test_a_writer_edits_their_own_not_another_writers(team):
    import psycopg

    bos = _added(team, "bo", "Deploys go out on Tuesdays")
    team("bo", "edit", bos, "--title", "Deploys go out on Tuesdays only", check=True)
    before = dump(team.owner_url)
    _refused_once(team("cy", "edit", bos, "--title", "Deploys go out on Fridays"), "cy is a writer",
                  "may edit only their own memories", f"memory {bos} is bo's")
    _refused_once(team("cy", "delete", bos), "cy is a writer", "bo's")
    with psycopg.connect(team.url("cy"), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only their own"):
            conn.execute("UPDATE memory SET content = 'Deploys go out on Fridays' WHERE id = %s", (bos,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # the owner is the database's, not the client's
            conn.execute("UPDATE memory SET owner = 'cy' WHERE id = %s", (bos,))
        # A forged author or owner is replaced by the database user.
        conn.execute("INSERT INTO memory (id, project_id, type, title, content, confidence, source, status, "
                     "created_at, updated_at, status_changed_at, content_hash, owner) SELECT 'forged', project_id, "
                     "type, 'x', 'x', 0.5, 'explicit', 'active', 0, 0, 0, 'h', 'bo' FROM memory WHERE id = %s", (bos,))
        conn.execute("INSERT INTO event (memory_id, kind, at, actor, author) VALUES ('forged', 'created', 0, 'psql', 'bo')")
        assert conn.execute("SELECT owner FROM memory WHERE id = 'forged'").fetchone()[0] == "cy"
        assert conn.execute("SELECT author FROM event WHERE memory_id = 'forged'").fetchone()[0] == "cy"
    after = [row for row in dump(team.owner_url) if "forged" not in row]
    assert [r for r in after if "memdeck_change" not in r] == [r for r in before if "memdeck_change" not in r]
    assert json.loads(team("cy", "show", bos, "--json", check=True).stdout)["title"] == "Deploys go out on Tuesdays only"


def test_a_reviewer_edits_and_deletes_anything_and_the_trail_names_each(team):
    bos = _added(team, "bo", "Deploys go out on Tuesdays")
    team("di", "edit", bos, "--title", "Deploys go out on Fridays", check=True)
    log = _log(team, "ana", bos)
    assert [(e["kind"], e["author"]) for e in log] == [("created", "bo"), ("edited", "di")]
    blamed = json.loads(team("ana", "blame", "--json", check=True).stdout)
    assert [(b["id"], b["wrote"], b["changed_by"], b["change"]) for b in blamed] == [(bos, "bo", "di", "edited")]
    plain = team("ana", "blame", check=True).stdout
    assert "bo" in plain.splitlines()[1] and "di" in plain.splitlines()[1]
    team("di", "delete", bos, check=True)
    team("di", "purge", check=True)
    assert json.loads(team("ana", "list", "--json", check=True).stdout) == []


def test_a_user_without_a_role_is_told_so(team, postgres_server):
    import psycopg

    with psycopg.connect(team.owner_url, autocommit=True) as conn:
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'eve') "
                     "THEN CREATE ROLE eve LOGIN; END IF; END $$")
    _refused_once(team("eve", "list"), "has no role in this team store", "team grant")
    # Once the store is open (a grant taken away meanwhile is the same), the user is named.
    team("postgres", "team", "grant", "eve", "reader", check=True)
    with psycopg.connect(team.owner_url, autocommit=True) as conn:
        conn.execute("REVOKE memdeck_reader FROM eve")
    _refused_once(team("eve", "list"), "has no role in this team store")


def test_team_commands_need_a_postgresql_url(tmp_path):
    result = run_in_process(["--db", str(tmp_path / "x.db"), "team", "grant", "ana", "reader"], cwd=tmp_path)
    assert result.returncode == 2 and "PostgreSQL" in result.stderr
    assert not (tmp_path / "x.db").exists()


def test_only_a_reviewer_accepts_and_a_writer_proposes_by_repeating_anothers_memory(team):
    bos = _added(team, "bo", "Deploys go out on Tuesdays")
    pending = json.loads(team("bo", "add", "Staging needs the VPN", "--type", "context", "--status", "pending",
                              "--json", check=True).stdout)["id"]
    before = dump(team.owner_url)
    _refused_once(team("bo", "accept", pending), "bo is a writer", f"may not accept or reject memory {pending}")
    _refused_once(team("cy", "reject", pending), "cy is a writer")
    assert dump(team.owner_url) == before
    team("di", "accept", pending, check=True)
    assert json.loads(team("ana", "show", pending, "--json", check=True).stdout)["status"] == "active"
    # Another writer repeating bo's statement reinforces it (a proposal's kind of change).
    repeated = json.loads(team("cy", "add", "Deploys go out on Tuesdays", "--type", "convention", "--tags", "ops",
                               "--json", check=True).stdout)
    assert repeated["id"] == bos and "ops" in repeated["tags"]
    assert [(e["kind"], e["author"]) for e in _log(team, "ana", bos)][-1] == ("reinforced", "cy")
    # A writer's prime records usage of everyone's memories (feedback).
    assert team("cy", "prime", "--task", "when do deploys go out", "--record").returncode == 0


def test_a_team_store_an_older_memdeck_made_says_its_owner_must_upgrade_it(team, tmp_path):
    """A member's newer memdeck may not add the schema's newest migration to the team store (a
    reader or writer may not create tables): it says so, naming both versions and what the owner
    runs, instead of "no role"; once the owner has, the member reads it again."""
    import psycopg

    from store.backends.migrations import MIGRATIONS, SCHEMA_VERSION

    newest = MIGRATIONS[-1]
    assert newest.version == 15, "undo the newest migration here"
    with psycopg.connect(team.owner_url, autocommit=True) as conn:  # the store as the older memdeck left it
        conn.execute("DROP TABLE memdeck_review CASCADE")
        conn.execute("DELETE FROM schema_migration WHERE version = %s", (newest.version,))
    refused = team("ana", "list")
    assert refused.returncode != 0
    line = refused.stderr.strip().splitlines()[-1]
    assert f"schema {SCHEMA_VERSION - 1}" in line and f"needs {SCHEMA_VERSION}" in line, line
    assert "memdeck team init" in line and "no role" not in line
    # As a layer beside an own store, the same line says why the team layer is not read.
    env = {**os.environ, "MEMDECK_DB": str(tmp_path / "own.db"), "MEMDECK_PROJECT": "demo"}
    config_home = tmp_path / "config-home" / "memdeck"
    config_home.mkdir(parents=True)
    (config_home / "config.yml").write_text(f"team:\n  db: '{team.url('ana')}'\n", encoding="utf-8")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config-home")
    primed = run_in_process(["prime", "--task", "deploys"], env=env, cwd=tmp_path)
    assert primed.returncode == 0, primed.stderr
    assert f"needs {SCHEMA_VERSION}" in primed.stderr and "no role" not in primed.stderr
    team("postgres", "team", "init", team.owner_url, check=True)
    assert team("ana", "list").returncode == 0


def test_team_init_by_a_member_who_is_not_the_owner_is_refused_in_one_line(team):
    result = team("bo", "team", "init", team.url("bo"))
    _refused_once(result, "bo", "owner")
    assert "Traceback" not in result.stderr


def test_team_init_says_whether_review_is_on(team):
    assert "review: off" in team("postgres", "team", "init", team.owner_url, check=True).stderr
    assert "review: on" in team("postgres", "team", "init", team.owner_url, "--review", check=True).stderr
    assert "review: on" in team("postgres", "team", "init", team.owner_url, check=True).stderr


def test_a_writers_add_held_for_review_says_so(team):
    """With review on, the server holds a writer's add pending, and `add` says what the server
    holds (issue 41): the JSON's status and `held_for_review`, and a line on stderr; the same
    add with review off, or a reviewer's, says nothing of it."""
    team("postgres", "team", "init", team.owner_url, "--review", check=True)
    said = json.loads(team("bo", "add", "Deploys go out on Tuesdays", "--type", "convention", "--json",
                           check=True).stdout)
    assert said["status"] == "pending" and said["held_for_review"] is True
    assert json.loads(team("di", "show", said["id"], "--json", check=True).stdout)["status"] == "pending"
    line = team("bo", "add", "Staging resets nightly", "--type", "context", check=True)
    held = json.loads(team("di", "show", line.stdout.strip(), "--json", check=True).stdout)
    assert held["status"] == "pending"
    assert "pending: held for a reviewer" in line.stderr, line.stderr
    assert "held_for_review" not in json.loads(team("di", "add", "Releases are tagged on main", "--type", "convention",
                                                    "--json", check=True).stdout)
    team("postgres", "team", "init", team.owner_url, "--no-review", check=True)
    line = team("bo", "add", "Hotfixes skip the release train", "--type", "convention", check=True)
    assert "held" not in line.stderr, line.stderr
