"""`memdeck doctor`: it checks a store (integrity, full-text index, orphaned rows, memories of a
missing project, schema version) without writing to it, and with --fix repairs what is safe
after a backup copy. And damaged stores on every command path: a truncated, zeroed or foreign
file gives a clear error from every command and is never modified."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from store import Config, Store, StoreError
from store.backends.opening import connect
from store.backends.migrations import SCHEMA_VERSION
from store.browse.search import full_text
from store.backends.migrations import SCHEMA_VERSION
from tests.damage_support import write_damaged_pages, write_foreign, write_truncated, write_zeroed_header


def fill(db_path, clock) -> list[str]:
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        ids = [store.add(text, type="pitfall").memory.id for text in (
            "Jellyfin takes 60s to start after an upgrade", "Sonarr loses its queue when restarted mid-import",
            "The VPN container must start before qBittorrent")]
        store.sessions.append_activity(store.sessions.ensure("s-1").id, "note", "looked at the media stack")
    return ids


def damage_sql(db_path, *statements: str) -> None:
    """Write behind memdeck's back, as another tool might: no foreign keys, no triggers' help."""
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA foreign_keys = OFF")
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def doctor(run_cli, *args, env=None):
    result = run_cli("doctor", "--json", *args, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout) if result.stdout else None


def failing(report) -> set[str]:
    return {f["check"] for f in report["findings"] if not f["ok"]}


def test_a_sound_store_passes_every_check_and_is_not_written(db_path, clock, run_cli):
    fill(db_path, clock)
    before = db_path.read_bytes()
    code, report = doctor(run_cli)
    assert code == 0 and report["ok"] and report["backup"] is None and report["repairs"] == []
    assert [f["check"] for f in report["findings"]] == [
        "access", "schema", "integrity", "fts", "orphaned events", "orphaned activities", "orphaned anchors",
        "memories without project", "sessions without project", "values"]
    assert db_path.read_bytes() == before
    text = run_cli("doctor")
    assert text.returncode == 0 and "the store is sound" in text.stderr


def test_fix_repairs_the_index_orphans_and_lost_projects_after_a_backup(db_path, clock, run_cli):
    ids = fill(db_path, clock)
    damage_sql(db_path,
               # the index forgets one memory (as a crash of an old SQLite, or a tool without triggers)
               "INSERT INTO memory_fts(memory_fts, rowid, title, content, tags) SELECT 'delete', rowid, title, "
               f"content, tags FROM memory WHERE id = '{ids[0]}'",
               "INSERT INTO event (memory_id, kind, at, actor) VALUES ('mem-gone', 'created', 1, 'tool')",
               "INSERT INTO activity (session_id, seq, at, kind, summary) VALUES ('s-gone', 0, 1, 'note', 'x')",
               "DELETE FROM project")
    code, report = doctor(run_cli)
    assert code == 1 and failing(report) == {"fts", "orphaned events", "orphaned activities",
                                             "memories without project", "sessions without project"}
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        assert full_text(store, "Jellyfin") == []  # what the user would meet: a memory search cannot find
    code, report = doctor(run_cli, "--fix")
    assert code == 0 and report["ok"], report
    assert report["repairs"] == ["dropped 1 orphaned events", "dropped 1 orphaned activities",
                                 # the sessions' project is the same one, given back once
                                 "gave memories of missing project 1 the project recovered-1",
                                 "rebuilt the full-text index from the memory table"]
    with Store.open(db_path, project="recovered-1", clock=clock, config=Config.defaults()) as store:
        assert [h.memory.id for h in full_text(store, "Jellyfin")] == [ids[0]]
        assert len(store.get_many(ids)) == 3  # no memory lost
    # the backup is the store as it was before the repair
    backup = report["backup"]
    assert backup.endswith(".bak") and os.path.exists(backup)
    code, again = doctor(run_cli, env={"MEMDECK_DB": backup})
    assert code == 1 and "fts" in failing(again)


def test_an_old_schema_is_migrated_by_fix(db_path, clock, run_cli):
    db, _ = connect(db_path, target_version=2)
    db.close()
    code, report = doctor(run_cli)
    assert code == 1 and failing(report) == {"schema"}
    code, report = doctor(run_cli, "--fix")
    assert code == 0 and report["repairs"] == [f"migrated the schema to {SCHEMA_VERSION}"]
    backups = sorted(p.name for p in db_path.parent.glob("memdeck.db.*.bak"))
    # doctor's copy, and the copy every migration makes
    assert [name.split(".")[2].split("-")[0] for name in backups] == ["doctor", "v2"]


def test_damaged_pages_are_reported_and_never_written(db_path, clock, run_cli):
    data = write_damaged_pages(db_path, clock)
    for args in ((), ("--fix",)):
        code, report = doctor(run_cli, *args)
        assert code == 3 and not report["ok"] and report["backup"] is None
        assert "integrity" in failing(report)
    text = run_cli("doctor", "--fix")
    assert text.returncode == 3 and "damaged pages" in text.stdout and "left it untouched" in text.stderr
    assert db_path.read_bytes() == data
    assert not list(db_path.parent.glob("*.bak"))


def test_doctor_creates_no_store_where_there_is_none(db_path, run_cli):
    result = run_cli("doctor")
    assert result.returncode == 3 and "no store here" in result.stderr
    assert not db_path.exists()


# -- damaged stores on every command path --------------------------------------------------

DAMAGES = {
    "truncated": (write_truncated, "damaged"),
    "zeroed": (None, "not an SQLite database"),  # made with the clock, below
    "foreign": (write_foreign, "another program"),
}
# (arguments, exit code, stdin) — hooks exit 1, never 2 or 3: Claude Code reads 2 as "block".
COMMANDS = [
    (["prime", "--task", "jellyfin"], 3, None),
    (["hook", "session-start", "--task", "jellyfin"], 1, '{"session_id": "s-1"}'),
    (["ingest", "NOTES"], 3, None),
    (["import", "NOTES"], 3, None),
    (["search", "jellyfin"], 3, None),
    ([], 3, None),  # the workbench: the app opens the store before it draws anything
    (["doctor"], 3, None),
    (["doctor", "--fix"], 3, None),
]


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_store_gives_every_command_a_clear_error_and_stays_as_it_was(db_path, clock, tmp_path, run_cli,
                                                                               damage):
    maker, message = DAMAGES[damage]
    (maker or (lambda p: write_zeroed_header(p, clock)))(db_path)
    notes = tmp_path / "notes.md"
    notes.write_text("# Memories\n\n## Fixes\n\n### mem-1737390000-aaaa\n> MEMORY:fix:restart jellyfin\n")
    before = db_path.read_bytes()
    neighbours = set(os.listdir(tmp_path))
    for args, code, stdin in COMMANDS:
        result = run_cli(*[str(notes) if a == "NOTES" else a for a in args], input=stdin)
        assert result.returncode == code, (args, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)
        assert db_path.read_bytes() == before, args
    assert set(os.listdir(tmp_path)) == neighbours  # no backup, no journal, no new store
    from tui.app import MemdeckApp  # the workbench's own opening, in this process

    with pytest.raises(StoreError, match=message):
        MemdeckApp(db_path, project="demo")
