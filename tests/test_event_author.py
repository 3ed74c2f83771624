"""Events say who made each change: the configured `team.author`, else the OS user."""

from __future__ import annotations

import getpass

import pytest

from store import Config, Store

pytestmark = pytest.mark.both_backends


def test_events_name_the_configured_author(db_path, clock):
    config = Config.defaults()
    config.values["team.author"] = "ana"
    with Store.open(db_path, project="demo", config=config, clock=clock) as store:
        memory = store.add("Deploys go out on Tuesdays", type="convention").memory
        store.edit(memory.id, title="Deploys go out on Tuesdays only")
        assert [(e.kind, e.author) for e in store.events(memory.id)] == [("created", "ana"), ("edited", "ana")]


def test_without_a_configured_author_the_os_user_is_named(store):
    memory = store.add("Deploys go out on Tuesdays", type="convention").memory
    assert store.events(memory.id)[0].author == getpass.getuser()


def test_show_prints_who_made_each_change(run_cli, tmp_path):
    (tmp_path / "config-home" / "memdeck").mkdir(parents=True)
    (tmp_path / "config-home" / "memdeck" / "config.yml").write_text("team:\n  author: ana\n")
    added = run_cli("add", "Deploys go out on Tuesdays", "--type", "convention", "--json", check=True)
    import json

    memory_id = json.loads(added.stdout)["id"]
    shown = run_cli("show", memory_id, check=True).stdout
    assert "created" in shown and "(ana)" in shown
