"""Files and errors that tell the truth: exports write a symlink's target atomically and refuse
FIFOs, devices and folders; stdout that cannot be written is one line and exit 1; `--db` refuses
what is not a regular file at once; and a read-only store file, a read-only folder or file
system, a full disk, a lock held past the busy timeout and damage are five different messages,
which `memdeck doctor` tells apart.

Read-only files for the root user (who may write any file) are made with the immutable flag
(`chattr +i`); for anyone else, with the mode.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from contextlib import contextmanager
from pathlib import Path

import peewee
import pytest

from store import Config, Store
from store.engine.diagnosis import FULL, LOCKED, describe
from tests.cli_support import memdeck_command


@pytest.fixture
def memory(run_cli):
    run_cli("add", "Payments go through the ledger service", "--type", "constraint", "--confidence", "0.9",
            check=True)


# -- export files ----------------------------------------------------------------------------

def test_export_into_a_symlinked_claude_md_updates_the_file_it_points_at(run_cli, tmp_path, memory):
    (tmp_path / "AGENTS.md").write_text("# Agents\n\nOur rules.\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    run_cli("export", "--format", "agents-md", "--into", "CLAUDE.md", check=True)
    assert (tmp_path / "CLAUDE.md").is_symlink() and os.readlink(tmp_path / "CLAUDE.md") == "AGENTS.md"
    text = (tmp_path / "AGENTS.md").read_text()
    assert text.startswith("# Agents\n\nOur rules.\n") and "Payments go through the ledger service" in text


def test_export_output_through_a_symlink_with_force_replaces_the_target(run_cli, tmp_path, memory):
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    run_cli("export", "--output", "link.json", "--force", check=True)
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "real.json").read_text())["memories"][0]["type"] == "constraint"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("into", [False, True])
def test_export_refuses_a_fifo_a_device_and_a_folder_even_with_force(run_cli, tmp_path, memory, into):
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    (tmp_path / "folder.md").mkdir()
    for target, kind in ((fifo, "a FIFO"), (Path("/dev/null"), "a device"), (tmp_path / "folder.md", "a directory")):
        args = (("--format", "agents-md", "--into", str(target)) if into
                else ("--output", str(target), "--force"))
        result = run_cli("export", *args, timeout=60)
        assert result.returncode == 2
        assert result.stderr == f"memdeck: {target} is {kind}; memdeck writes only regular files\n"
    assert fifo.is_fifo() and (tmp_path / "folder.md").is_dir()


# -- stdout ----------------------------------------------------------------------------------

def test_stdout_closed_early_is_silent_and_exit_0(db_path, memory):
    reader, writer = os.pipe()
    os.close(reader)  # the reader went away (`memdeck list | head -0`): normal in a pipe
    try:
        result = subprocess.run([*memdeck_command(), "list"], stdout=writer, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "MEMDECK_DB": str(db_path)}, timeout=120)
    finally:
        os.close(writer)
    assert result.returncode == 0
    assert result.stderr == ""


def test_stdout_on_a_full_device_is_one_line_and_exit_1(db_path, memory):
    with open("/dev/full", "w") as full:
        result = subprocess.run([*memdeck_command(), "export"], stdout=full, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "MEMDECK_DB": str(db_path)}, timeout=120)
    assert result.returncode == 1
    assert result.stderr == "memdeck: cannot write to stdout: No space left on device\n"


# -- --db ------------------------------------------------------------------------------------

def test_db_at_a_fifo_or_a_device_is_refused_at_once(run_cli, tmp_path):
    fifo = tmp_path / "store.db"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/zero"), "a device")):
        for command in (("list",), ("hook", "session-start")):
            result = run_cli("--db", str(path), *command, input="{}", timeout=60)
            assert result.returncode in (1, 3)
            assert f"{path}: is {kind}, not a store file" in result.stderr
    assert fifo.is_fifo()


# -- errors that tell the truth --------------------------------------------------------------

@contextmanager
def read_only(path: Path):
    """`path` (a file or a folder) made read-only for the tests' user, then writable again."""
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("the immutable flag is not available here, and root may write any file")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)


def test_a_read_only_store_file_reads_refuses_writes_truthfully_and_doctor_says_so(run_cli, db_path, memory):
    with read_only(db_path):
        assert run_cli("list").returncode == 0
        added = run_cli("add", "Another fact", "--type", "context")
        doctor = run_cli("doctor")
    assert added.returncode == 3
    assert added.stderr == (f"memdeck: {db_path}: the store file is read-only (not damaged): memdeck can read it "
                            f"but not change it. Make it writable (chmod u+w {db_path}) or choose another store "
                            "with --db\n")
    assert doctor.returncode == 0 and "BAD" not in doctor.stdout
    assert "note  access" in doctor.stdout and "the store file is read-only" in doctor.stdout
    assert "ok    integrity" in doctor.stdout and "ok    fts" in doctor.stdout


def test_a_read_only_folder_is_said_to_be_one(run_cli, db_path, memory):
    with read_only(db_path.parent):
        listed = run_cli("list")
        doctor = run_cli("doctor", "--json")
    assert listed.returncode == 3
    assert f"its folder {db_path.parent} is read-only (the store is not damaged)" in listed.stderr
    report = json.loads(doctor.stdout)
    assert doctor.returncode == 0 and report["ok"]
    assert report["findings"][0]["check"] == "access" and report["findings"][0]["note"]
    assert not any(p.name.endswith(("-wal", "-shm")) for p in db_path.parent.iterdir())


@contextmanager
def small_file_system(folder: Path, size: str):
    """A tmpfs of `size` mounted at `folder` for the test (skipped where mounting is not allowed)."""
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                      capture_output=True).returncode != 0:
        pytest.skip("mounting a file system needs privileges this run does not have")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_read_only_file_system_is_said_to_be_one(run_cli, tmp_path):
    with small_file_system(tmp_path / "mnt", "4m") as folder:
        store = folder / "memdeck.db"
        run_cli("--db", str(store), "add", "A fact", "--type", "context", check=True)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        added = run_cli("--db", str(store), "add", "Another", "--type", "context")
        doctor = run_cli("--db", str(store), "doctor")
    assert added.returncode == 3 and "the store is on a read-only file system" in added.stderr
    assert doctor.returncode == 0 and "note  access" in doctor.stdout and "read-only file system" in doctor.stdout


def test_a_full_disk_is_said_to_be_full(run_cli, tmp_path):
    with small_file_system(tmp_path / "mnt", "1m") as folder:
        store = folder / "memdeck.db"
        run_cli("--db", str(store), "init", check=True)
        filler = folder / "filler"
        with open(filler, "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(b"x" * 4096)
            except OSError:
                pass  # the disk is full
        added = run_cli("--db", str(store), "add", "x " * 20_000, "--type", "context")
        doctor = run_cli("--db", str(store), "doctor")
    assert added.returncode == 3
    assert "the disk holding the store is full (the store is not damaged)" in added.stderr, added.stderr
    assert "note  access" in doctor.stdout and "the disk holding the store is full" in doctor.stdout


def test_a_store_at_its_size_limit_is_full_not_damaged(db_path, clock):
    # SQLite's own page limit fills a store as a full disk does, with the same error.
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        pages = store.db.execute_sql("PRAGMA page_count").fetchone()[0]
        store.db.execute_sql(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(peewee.OperationalError) as raised:
            store.add("word " * 30_000, type="context")  # within the size limit
    trouble = describe(raised.value, db_path)
    assert trouble.kind == FULL
    assert str(trouble) == (f"{db_path}: the disk holding the store is full (the store is not damaged); nothing "
                            "was written. Free some space and run the command again")


def test_a_lock_held_past_the_busy_timeout_is_locked_not_damaged(db_path, clock):
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        store.project_id()
        other = sqlite3.connect(db_path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            store.db.execute_sql("PRAGMA busy_timeout = 50")
            with pytest.raises(peewee.OperationalError) as raised:
                store.add("A fact", type="context")
        finally:
            other.execute("ROLLBACK")
            other.close()
    trouble = describe(raised.value, db_path)
    assert trouble.kind == LOCKED and "held the store's lock for longer than the 30 s" in str(trouble)


def test_damage_is_the_only_trouble_that_says_damaged(run_cli, db_path):
    db_path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 4000)
    result = run_cli("list")
    assert result.returncode == 3 and "damaged" in result.stderr

