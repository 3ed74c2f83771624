"""The review inbox: candidates wait as pending, and a person accepts or rejects them."""

from __future__ import annotations

import json

import pytest

from store import Config, Store

# The CLI's subprocesses on PostgreSQL are covered by test_postgres, sessions, hooks and MCP tests;
# running every one here on both back-ends would double this module's time.


@pytest.fixture
def inbox(db_path, clock):
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        ids = [store.add(text, type=kind, source="automatic", status="pending", session_id="s").memory.id
               for text, kind in (("npm run build failed until next was pinned", "fix"),
                                  ("Edit fails before a Read of the file", "pitfall"),
                                  ("Tests run with vitest", "pattern"))]
        active = store.add("Already known", type="context").memory.id
    return ids, active


def test_inbox_lists_only_pending_memories(run_cli, inbox):
    ids, active = inbox
    listed = json.loads(run_cli("inbox", "--json", check=True).stdout)
    assert sorted(m["id"] for m in listed) == sorted(ids)
    table = run_cli("inbox", check=True).stdout
    assert all(i in table for i in ids) and active not in table and "automatic" in table


def test_accept_makes_candidates_active_with_an_event(run_cli, inbox, db_path):
    ids, _ = inbox
    result = run_cli("accept", ids[0], ids[1], check=True)
    assert f"accepted: {ids[0]}" in result.stdout
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert [m.status for m in store.get_many(ids)] == ["active", "active", "pending"]
        assert store.events(ids[0])[-1].kind == "status_changed"
        assert store.events(ids[0])[-1].detail == {"from": "pending", "to": "active"}


def test_reject_all_moves_the_inbox_to_the_trash_and_dry_run_changes_nothing(run_cli, inbox, db_path):
    ids, active = inbox
    dry = run_cli("reject", "--all", "--dry-run", check=True)
    assert dry.stdout.count("would reject") == 3
    assert len(json.loads(run_cli("inbox", "--json").stdout)) == 3
    done = run_cli("reject", "--all", check=True)
    assert "memdeck restore" in done.stderr
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert {m.status for m in store.get_many(ids)} == {"deleted"}
        assert store.events(ids[2])[-1].kind == "deleted"
        assert store.get(active).status == "active"
    assert json.loads(run_cli("inbox", "--json").stdout) == []


def test_accept_refuses_memories_outside_the_inbox_and_changes_nothing(run_cli, inbox, db_path):
    ids, active = inbox
    result = run_cli("accept", ids[0], active)
    assert result.returncode == 2 and f"not in the inbox: {active} (active)" in result.stderr
    assert run_cli("accept").returncode == 2
    assert run_cli("accept", "mem-1-zzzz").returncode == 4
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        assert store.get(ids[0]).status == "pending"
