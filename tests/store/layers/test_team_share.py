"""`memdeck share`: own memories copied to a real PostgreSQL team store with their history and who
shared them, held to the sharer's role; `--to-file` appends to the repository's team file
(docs/team.md)."""

from __future__ import annotations

import json
import os
import subprocess
from functools import partial

import pytest

from tests.cli_support import run_in_process
from postgres_server import dump
from team_support import as_member


@pytest.fixture
def people(postgres_server, tmp_path):
    """A team store with a reader (ana), a writer (bo) and a reviewer (di), each with an own
    SQLite store and a config naming the team store; `run(user, ...)` runs memdeck as them in a
    git repository, `run(user, ..., team=True)` on the team store itself."""
    owner_url = postgres_server.fresh_database()
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    url = partial(as_member, owner_url)  # the team store as that database user

    def run(user: str, *args: str, team: bool = False, check: bool = False):
        config = tmp_path / f"{user}.yml"
        if not config.exists():
            config.write_text(f"team:\n  db: '{url(user)}'\n  author: {user}\n", encoding="utf-8")
        env = {**os.environ, "MEMDECK_DB": url(user) if team else str(tmp_path / f"{user}.db"),
               "MEMDECK_PROJECT": "demo", "MEMDECK_CONFIG": str(config), "XDG_CACHE_HOME": str(tmp_path / "cache")}
        result = run_in_process([*args], env=env, cwd=repo)
        if check and result.returncode != 0:
            raise AssertionError(f"memdeck {' '.join(args)} as {user} exited {result.returncode}:\n{result.stderr}")
        return result

    run("postgres", "team", "init", owner_url, team=True, check=True)
    for user, role in (("ana", "reader"), ("bo", "writer"), ("di", "reviewer")):
        run("postgres", "team", "grant", user, role, team=True, check=True)
    run.owner_url = owner_url
    run.repo = repo
    return run


def _add(people, user: str, text: str) -> str:
    memory_id = json.loads(people(user, "add", text, "--type", "convention", "--json", check=True).stdout)["id"]
    people(user, "edit", memory_id, "--add-tags", "deploys", check=True)
    return memory_id


def _events(people, user: str, memory_id: str, *, team: bool = False) -> list[dict]:
    return json.loads(people(user, "show", memory_id, "--json", team=team, check=True).stdout)["events"]


def test_sharing_copies_the_memory_with_its_history_and_who_shared_it(people, tmp_path):
    from store.engine.config import Config
    from store.engine.core import Store
    from store.engine.feedback import give_feedback

    memory_id = _add(people, "bo", "Deploys go out on Tuesdays")
    with Store.open(tmp_path / "bo.db", project="demo", config=Config.defaults()) as own:
        give_feedback(own, memory_id, "not_relevant", task="rotate the staging database password")
        assert own.get(memory_id).meta["not_relevant"]
    shared = people("bo", "share", memory_id)
    assert shared.returncode == 0 and "shared" in shared.stderr, shared.stderr
    on_team = json.loads(people("di", "list", "--json", team=True, check=True).stdout)
    assert [(m["id"], m["status"], m["tags"]) for m in on_team] == [(memory_id, "active", ["deploys"])]
    # Bo's agents' verdicts stay in bo's store: no other member's prime is judged by them.
    shown = json.loads(people("di", "show", memory_id, "--json", team=True, check=True).stdout)
    assert "not_relevant" not in shown["meta"] and shown["meta"]["shared"]["by"] == "bo"
    events = _events(people, "di", memory_id, team=True)
    assert [e["kind"] for e in events] == ["created", "edited", "judged", "shared"]
    assert events[0]["detail"]["recorded_by"] == "bo"  # the history keeps who wrote it
    assert {e["author"] for e in events} == {"bo"}  # PostgreSQL names the sharer on every row
    assert events[-1]["detail"]["by"] == "bo"
    # The own store records the share; reading both layers shows the memory once.
    assert _events(people, "bo", memory_id)[-1]["kind"] == "shared"
    listed = json.loads(people("bo", "list", "--json", check=True).stdout)
    assert [(m["id"], m["layer"]) for m in listed] == [(memory_id, "own")]
    # Another member reads it as a team memory.
    assert [(m["id"], m["layer"]) for m in json.loads(people("ana", "list", "--json", check=True).stdout)] \
        == [(memory_id, "team")]
    # Sharing again copies nothing.
    again = people("bo", "share", memory_id, "--json", check=True)
    assert json.loads(again.stdout)[0]["already"] is True
    assert len(_events(people, "di", memory_id, team=True)) == 4


def test_a_reader_may_not_share_one_line_exit_6_nothing_changed(people):
    memory_id = _add(people, "ana", "Staging needs the VPN")
    before = dump(people.owner_url)
    own_before = _events(people, "ana", memory_id)
    result = people("ana", "share", memory_id)
    assert result.returncode == 6, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "ana is a reader" in lines[0] and "nothing was changed" in lines[0], lines
    assert dump(people.owner_url) == before
    assert _events(people, "ana", memory_id) == own_before


def test_a_team_store_that_reviews_shares_puts_them_in_the_inbox(people):
    people("postgres", "team", "init", people.owner_url, "--review", team=True, check=True)
    memory_id = _add(people, "bo", "Feature flags are removed two sprints after launch")
    assert "waits in the team's inbox" in people("bo", "share", memory_id, check=True).stderr
    pending = json.loads(people("di", "list", "--json", "--status", "pending", team=True, check=True).stdout)
    assert [m["id"] for m in pending] == [memory_id]
    # The writer may not accept it; the reviewer may.
    assert people("bo", "edit", memory_id, "--status", "active", team=True).returncode == 6
    people("di", "edit", memory_id, "--status", "active", team=True, check=True)
    # Init again without --review keeps the setting; --no-review turns it off.
    people("postgres", "team", "init", people.owner_url, team=True, check=True)
    second = _add(people, "bo", "Release branches are cut on Mondays")
    people("bo", "share", second, check=True)
    assert json.loads(people("di", "show", second, "--json", team=True, check=True).stdout)["status"] == "pending"
    people("postgres", "team", "init", people.owner_url, "--no-review", team=True, check=True)
    third = _add(people, "bo", "Hotfixes skip the release train")
    people("bo", "share", third, check=True)
    assert json.loads(people("di", "show", third, "--json", team=True, check=True).stdout)["status"] == "active"


def test_share_without_a_team_store_is_one_line(tmp_path):
    env = {**os.environ, "MEMDECK_DB": str(tmp_path / "own.db")}
    added = run_in_process(["add", "x marks the spot", "--type", "context"], env=env, cwd=tmp_path)
    result = run_in_process(["share", added.stdout.strip()], env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "memdeck: no team store to share with: set team.db (a PostgreSQL URL) in your config; docs/team.md"]


# -- --to-file -------------------------------------------------------------------------------------------

EXISTING = """\
# Reviewed in pull requests; keep entries short.
format: memdeck
version: 1
memories:
  - id: team-1
    type: pitfall
    content: The staging database resets every night.
"""


def test_share_to_file_appends_and_keeps_what_was_there(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".memdeck").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    team_file = repo / ".memdeck" / "team.yaml"
    team_file.write_text(EXISTING, encoding="utf-8")
    env = {**os.environ, "MEMDECK_DB": str(tmp_path / "own.db"), "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def run(*args):
        return run_in_process([*args], env=env, cwd=repo)

    memory_id = json.loads(run("add", "Deploys go out on Tuesdays", "--type", "convention", "--tags", "ops",
                               "--json").stdout)["id"]
    result = run("share", "--to-file", memory_id)
    assert result.returncode == 0, result.stderr
    text = team_file.read_text(encoding="utf-8")
    assert text.startswith(EXISTING)
    assert f"  - id: {memory_id}\n" in text
    listed = {m["id"]: m["layer"] for m in json.loads(run("list", "--json").stdout)}
    assert listed == {"team-1": "file", memory_id: "own"}
    assert [e["kind"] for e in json.loads(run("show", memory_id, "--json").stdout)["events"]][-1] == "shared"
    # Again: nothing appended.
    assert run("share", "--to-file", memory_id).returncode == 0
    assert team_file.read_text(encoding="utf-8") == text


def test_share_to_file_refuses_a_file_it_cannot_append_to_and_changes_nothing(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".memdeck").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    team_file = repo / ".memdeck" / "team.yaml"
    env = {**os.environ, "MEMDECK_DB": str(tmp_path / "own.db"), "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def run(*args):
        return run_in_process([*args], env=env, cwd=repo)

    memory_id = run("add", "Deploys go out on Tuesdays", "--type", "convention").stdout.strip()
    for text in ("format: memdeck\nversion: 1\nmemories:\n- type: pitfall\n  content: x\nnotes: keep me\n",
                 "format: memdeck\nversion: 1\nmemories: []\n"):
        team_file.write_text(text, encoding="utf-8")
        result = run("share", "--to-file", memory_id)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "nothing was changed" in result.stderr
        assert team_file.read_text(encoding="utf-8") == text
    assert [p.name for p in team_file.parent.iterdir()] == ["team.yaml"]
    # A missing file is made, with the schema's header.
    team_file.unlink()
    assert run("share", "--to-file", memory_id).returncode == 0
    assert team_file.read_text(encoding="utf-8").startswith("# The team's memories")
    assert [m["layer"] for m in json.loads(run("list", "--json", "--layer", "file").stdout)] == ["file"]


def test_a_user_without_a_role_reads_their_own_store_and_is_told_why_the_team_is_not(people):
    import psycopg

    with psycopg.connect(people.owner_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'eve'").fetchone():
            conn.execute("CREATE ROLE eve LOGIN")
    _add(people, "bo", "Deploys go out on Tuesdays")
    mine = json.loads(people("eve", "add", "I keep notes in Obsidian", "--type", "preference", "--json",
                             check=True).stdout)["id"]
    result = people("eve", "list", "--json")
    assert result.returncode == 0, result.stderr
    assert [m["id"] for m in json.loads(result.stdout)] == [mine]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "the team layer is not read" in lines[0] and "no role in this team store" in lines[0], lines


def test_sharing_carries_the_memorys_anchors_and_a_member_checks_them(people):
    (people.repo / "deploy.py").write_text("def deploy():\n    return 'tuesday'\n", encoding="utf-8")
    added = json.loads(people("bo", "add", "deploy() only ships on Tuesdays", "--type", "convention",
                              "--anchor", "deploy.py:1-2", "--json", check=True).stdout)
    shared = json.loads(people("bo", "share", added["id"], "--json", check=True).stdout)
    assert shared[0]["anchors"] == 1
    on_team = json.loads(people("di", "show", added["id"], "--json", team=True, check=True).stdout)
    mine = json.loads(people("bo", "show", added["id"], "--json", check=True).stdout)
    assert [(a["path"], a["start"], a["end"], a["status"]) for a in on_team["anchors"]] == [("deploy.py", 1, 2, "fresh")]
    assert [{k: a[k] for k in ("path", "start", "end", "commit", "blob")} for a in on_team["anchors"]] == \
        [{k: a[k] for k in ("path", "start", "end", "commit", "blob")} for a in mine["anchors"]]
    # Another member's check of the team's copy reads the file (the sharer's file size and time
    # were not carried): the code changed under it. A reader may not record it on bo's memory
    # (anchors change only on one's own memories, issue 41); a reviewer's check does.
    (people.repo / "deploy.py").write_text("def deploy():\n    return 'friday'\n", encoding="utf-8")
    assert people("ana", "verify", team=True).returncode == 6
    on_team = json.loads(people("di", "show", added["id"], "--json", team=True, check=True).stdout)
    assert [a["status"] for a in on_team["anchors"]] == ["fresh"]
    people("di", "verify", team=True)  # exit 1: an anchor changed
    on_team = json.loads(people("di", "show", added["id"], "--json", team=True, check=True).stdout)
    assert [a["status"] for a in on_team["anchors"]] == ["changed"]
