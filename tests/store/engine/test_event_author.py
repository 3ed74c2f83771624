"""Events say who made each change: the configured `team.author`, else the OS user."""

from __future__ import annotations

import getpass

import pytest

from store import Config, Store

pytestmark = pytest.mark.both_backends


def test_events_name_the_configured_author(db_path, clock):
    config = Config.defaults().with_overrides({"team.author": "ana"})
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



def test_an_import_keeps_each_change_s_author_and_names_who_imported(db_path, clock, tmp_path):
    from store.interop.transfer import export_text, import_file
    from store.browse.search import MemoryFilter

    theirs = Config.defaults().with_overrides({"team.author": "bo"})
    with Store.open(tmp_path / "other.db", project="demo", config=theirs, clock=clock) as other:
        memory_id = other.add("Deploys go out on Tuesdays", type="convention").memory.id
        (tmp_path / "history.json").write_text(export_text(other, "json", MemoryFilter()))
        (tmp_path / "plain.yaml").write_text(export_text(other, "yaml", MemoryFilter()))
    ours = Config.defaults().with_overrides({"team.author": "ana"})
    with Store.open(db_path, project="demo", config=ours, clock=clock) as store:
        import_file(store, str(tmp_path / "history.json"))
        # The history carried in the file keeps who made each change.
        assert [(e.kind, e.author) for e in store.events(memory_id)] == [("created", "bo")]
    with Store.open(tmp_path / "third.db", project="demo", config=ours, clock=clock) as store:
        import_file(store, str(tmp_path / "plain.yaml"))
        # A file without history: the import is the one change, and it is ana's.
        assert [(e.kind, e.author) for e in store.events(memory_id)] == [("imported", "ana")]


def test_an_author_from_a_file_or_the_config_is_made_safe(db_path, clock, tmp_path):
    import json

    from store.interop.transfer import export_text, import_file
    from store.browse.search import MemoryFilter

    with Store.open(tmp_path / "other.db", project="demo", clock=clock) as other:
        memory_id = other.add("Deploys go out on Tuesdays", type="convention").memory.id
        document = json.loads(export_text(other, "json", MemoryFilter()))
    # A terminal escape and a name far longer than the column: stored printable, cut to a name's length.
    document["memories"][0]["events"][0]["author"] = "\x1b]0;owned\x07" + "x" * 5000
    (tmp_path / "hostile.json").write_text(json.dumps(document))
    config = Config.defaults().with_overrides({"team.author": "ana\x1b[2J"})
    with Store.open(db_path, project="demo", config=config, clock=clock) as store:
        import_file(store, str(tmp_path / "hostile.json"))
        imported = store.events(memory_id)[0].author
        assert imported.startswith("_]0;owned_x") and len(imported) <= 200 and imported.isprintable()
        mine = store.add("Staging needs the VPN", type="context").memory.id
        assert store.events(mine)[0].author == "ana_[2J"
