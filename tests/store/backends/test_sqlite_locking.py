"""A long-lived store (the MCP server, the workbench) keeps writing while other stores on the same
file are opened and closed: in this process (an evaluation's scratch store, a layer) and in
others (hooks, the `memdeck` command line). Each write lands in the long-lived store's own file,
through its own connection, and none waits for a lock the same process holds ("database is
locked" after the 30 s busy wait, before the models followed the store that writes)."""

from __future__ import annotations

import sqlite3
import subprocess

import pytest

from store import Config, Store
from store.engine.feedback import give_feedback
from tests.cli_support import memdeck_command

WRITES = {
    "feedback helpful": lambda s, m: give_feedback(s, m.id, "helpful", task="retry a webhook"),
    "feedback not_relevant": lambda s, m: give_feedback(s, m.id, "not_relevant", task="style the grid"),
    "feedback wrong": lambda s, m: give_feedback(s, m.id, "wrong", note="retries are fixed"),
    "edit": lambda s, m: s.edit(m.id, title="Webhook retries back off exponentially"),
    "set_status": lambda s, m: s.set_status([m.id], "inactive"),
    "record_usage": lambda s, m: s.record_usage([m.id], session_id="s1"),
    "add": lambda s, m: s.add("Queue consumers acknowledge after the write commits", type="pattern"),
    "reinforce": lambda s, m: s.add("Webhook retries back off", type="pattern"),
}


def open_store(path):
    return Store.open(path, project="demo", config=Config.defaults())


def in_file(path) -> tuple[int, int]:
    """The file's memories and their versions (every write of a memory raises its version), and
    its events, read by a connection of its own (what another process sees)."""
    conn = sqlite3.connect(path)
    try:
        return (conn.execute("SELECT COUNT(*) + COALESCE(SUM(version), 0) FROM memory").fetchone()[0],
                conn.execute("SELECT COUNT(*) FROM event").fetchone()[0])
    finally:
        conn.close()


def write_checked(store, memory, write, path):
    """Run `write` on `store`: it goes through the store's own connection and all of it, the
    memory's row and its event, reaches the store's file."""
    (rows, events), before_own = in_file(path), store.backend.own_changes()
    write(store, memory)
    assert store.backend.own_changes() > before_own
    now_rows, now_events = in_file(path)
    assert now_rows > rows and now_events > events


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_write_after_another_store_on_the_file_opened_and_closed(tmp_path, write):
    path = tmp_path / "memdeck.db"
    with open_store(path) as long_lived:
        memory = long_lived.add("Webhook retries back off", type="pattern").memory
        long_lived.get(memory.id)
        with open_store(path):
            pass
        write_checked(long_lived, memory, write, path)


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_write_while_another_store_on_the_file_is_open(tmp_path, write):
    path = tmp_path / "memdeck.db"
    with open_store(path) as long_lived:
        memory = long_lived.add("Webhook retries back off", type="pattern").memory
        with open_store(path) as other:
            write_checked(long_lived, memory, write, path)
            assert other.get(memory.id).id == memory.id  # the other store reads on afterwards


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_write_after_a_scratch_store_elsewhere_lands_in_the_own_file(tmp_path, write):
    path, scratch = tmp_path / "memdeck.db", tmp_path / "scratch.db"
    with open_store(path) as long_lived:
        memory = long_lived.add("Webhook retries back off", type="pattern").memory
        with open_store(scratch) as other:
            other.add("A scratch note of an evaluation", type="context")
        scratch_before = in_file(scratch)
        write_checked(long_lived, memory, write, path)
        assert in_file(scratch) == scratch_before


def memdeck(path, *args):
    done = subprocess.run([*memdeck_command(), "--db", str(path), "--project", "demo", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_a_long_lived_store_writes_between_command_line_processes(tmp_path):
    """The MCP server's case: `memdeck` processes open, write and close the store while the
    long-lived one stays open; each of its writes then goes through."""
    path = tmp_path / "memdeck.db"
    with open_store(path) as long_lived:
        memory = long_lived.add("Webhook retries back off", type="pattern").memory
        long_lived.get(memory.id)
        cli_added = []
        for name, write in WRITES.items():
            added = memdeck(path, "add", f"Deploys drain the queue first ({name})", "--type", "pattern").strip()
            cli_added.append(added)
            memdeck(path, "edit", added, "--title", f"Drain first ({name})")
            memdeck(path, "list")
            write_checked(long_lived, long_lived.get(memory.id), write, path)
    with open_store(path) as reopened:
        assert reopened.get(memory.id).title == "Webhook retries back off exponentially"  # the edit
        kinds = [event.kind for event in reopened.events(memory.id)]
        assert kinds.count("used") == 2 and kinds.count("edited") == 1 and "judged" in kinds  # every write
        assert {reopened.get(id).title for id in cli_added} == {f"Drain first ({name})" for name in WRITES}


@pytest.mark.parametrize("beside", ["same file", "another file"])
def test_a_purge_after_another_store_opened_and_closed_empties_the_own_trash(tmp_path, beside):
    path = tmp_path / "memdeck.db"
    with open_store(path) as long_lived:
        thrown = long_lived.add("A note to throw away", type="context").memory
        long_lived.trash.delete([thrown.id])
        with open_store(path if beside == "same file" else tmp_path / "other.db") as other:
            other.add("A note of the other store", type="context")
        assert [m.id for m in long_lived.trash.purge([thrown.id])] == [thrown.id]
        conn = sqlite3.connect(path)  # the memory and its events are gone from the own file
        try:
            assert conn.execute("SELECT (SELECT COUNT(*) FROM memory WHERE id = ?) + "
                                "(SELECT COUNT(*) FROM event WHERE memory_id = ?)", (thrown.id, thrown.id)).fetchone() == (0,)
        finally:
            conn.close()
