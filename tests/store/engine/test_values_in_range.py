"""Values in range, everywhere: `add`, `edit` and every import path refuse the same out-of-range
dates, id timestamps, confidences and sizes with a clear message; nonsense filters are refused;
project names are checked (and made safe when derived from a directory); and a store that already
holds values out of range still lists, shows, exports and opens, while `doctor` reports them and
`doctor --fix` clamps them."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from ui_support import pilot_test

from store import Config, Store
from store.engine.errors import InvalidInput
from store.engine.limits import MAX_CONTENT_CHARS, name_problem
from tests.data_support import T0
from tui.testing import SIZE, settle
from tui.app import MemdeckApp
from tui.widgets.memory_list import MemoryList


def count(db_path) -> int:
    if not db_path.exists():
        return 0
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0]


def import_text(run_cli, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return run_cli("import", str(path))


# -- sizes ---------------------------------------------------------------------------------------

def test_add_takes_no_more_than_an_import_would(run_cli, db_path):
    result = run_cli("add", "-", "--type", "fix", input="x" * (MAX_CONTENT_CHARS + 1))
    assert result.returncode == 2 and f"over the limit of {MAX_CONTENT_CHARS}" in result.stderr
    assert count(db_path) == 0


def test_edit_takes_no_more_than_an_import_would(store):
    memory = store.add("short", type="fix").memory
    with pytest.raises(InvalidInput, match="over the limit"):
        store.edit(memory.id, content="y" * (MAX_CONTENT_CHARS + 1))
    assert store.get(memory.id).content == "short"


def test_the_longest_memory_add_takes_exports_and_imports_again(run_cli, tmp_path):
    run_cli("add", "-", "--type", "fix", input="z" * MAX_CONTENT_CHARS, check=True)
    for fmt in ("json", "ralph", "yaml", "nova"):
        exported = run_cli("export", "--format", fmt, check=True).stdout
        fresh = {"MEMDECK_DB": str(tmp_path / f"fresh-{fmt}.db")}
        path = tmp_path / f"export.{fmt}"
        path.write_text(exported, encoding="utf-8")
        result = run_cli("import", str(path), "--format", fmt, env=fresh)
        assert result.returncode == 0, (fmt, result.stderr)


# -- dates and id timestamps ---------------------------------------------------------------------

BAD_TIMES = ["9999-12-31T00:00:00Z", 1e300, "0001-01-01T00:00:00+05:00", -5.0]


@pytest.mark.parametrize("bad", BAD_TIMES)
def test_json_import_refuses_a_date_out_of_range(run_cli, tmp_path, db_path, bad):
    document = {"memories": [{"id": "mem-1-aaaa", "type": "fix", "content": "fine", "created_at": "2026-01-01"},
                             {"id": "mem-2-bbbb", "type": "fix", "content": "bad", "last_used_at": bad}]}
    result = import_text(run_cli, tmp_path, "in.json", json.dumps(document))
    assert result.returncode == 2 and "memories[1].last_used_at" in result.stderr
    assert "outside the dates memdeck keeps (1970-01-01 to 2100-01-01)" in result.stderr
    assert count(db_path) == 0


def test_yaml_and_nova_imports_refuse_the_same_dates(run_cli, tmp_path, db_path):
    yaml_result = import_text(run_cli, tmp_path, "in.yaml",
                              "memories:\n- type: fix\n  content: bad\n  created_at: 9999-12-31 00:00:00\n")
    assert yaml_result.returncode == 2 and "outside the dates" in yaml_result.stderr
    nova = {"entries": [{"key": "k", "value": "bad", "category": "pattern", "createdAt": "9999-01-01T00:00:00Z"}]}
    nova_result = import_text(run_cli, tmp_path, "nova.json", json.dumps(nova))
    assert nova_result.returncode == 2, nova_result.stderr
    assert count(db_path) == 0


def test_ralph_import_refuses_an_id_whose_timestamp_is_out_of_range(run_cli, tmp_path, db_path):
    text = ("# Memories\n\n## Fixes\n\n### mem-99999999999-beef\n> from the far future\n"
            "<!-- tags: x | created: 2026-01-01 -->\n")
    result = import_text(run_cli, tmp_path, "memories.md", text)
    assert result.returncode == 2 and "mem-99999999999-beef carries the time" in result.stderr
    assert count(db_path) == 0


def test_confidence_out_of_range_is_refused_by_add_and_import(run_cli, tmp_path, db_path):
    assert run_cli("add", "x", "--type", "fix", "--confidence", "nan").returncode == 2
    assert run_cli("add", "x", "--type", "fix", "--confidence", "1.5").returncode == 2
    document = {"memories": [{"type": "fix", "content": "x", "confidence": 7}]}
    assert import_text(run_cli, tmp_path, "c.json", json.dumps(document)).returncode == 2
    assert count(db_path) == 0


# -- filters -------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("--min-confidence", "nan"), ("--min-confidence", "5"), ("--min-confidence", "-0.1"),
    ("--after", "nan"), ("--after", "1e300"), ("--before", "inf"), ("--after", "9999-12-31"),
    ("--limit", "-1"),
])
def test_nonsense_filters_are_refused(run_cli, args):
    for command in (("list",), ("search", "retry"), ("export",)):
        if command == ("export",) and args[0] in ("--after", "--before"):
            continue
        result = run_cli(*command, *args)
        assert result.returncode == 2, (command, args, result.stderr)
        assert args[0] in result.stderr or "time" in result.stderr


# -- project names -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["", "   ", "tab\there", "new\nline", "x" * 201, "bidi\u202eevil"])
def test_bad_project_names_are_refused_everywhere(run_cli, tmp_path, db_path, name):
    by_flag = run_cli("--project", name, "add", "x", "--type", "fix")
    assert by_flag.returncode == 2 and "--project" in by_flag.stderr
    if name:
        by_env = run_cli("add", "x", "--type", "fix", env={"MEMDECK_PROJECT": name})
        assert by_env.returncode == 2 and "MEMDECK_PROJECT" in by_env.stderr
    if name:  # a blank project in a file means "not said": the store's own project
        document = {"memories": [{"id": "mem-1-aaaa", "type": "fix", "content": "x", "project": name}]}
        by_import = import_text(run_cli, tmp_path, "p.json", json.dumps(document))
        assert by_import.returncode == 2 and "project" in by_import.stderr
    assert count(db_path) == 0


def test_a_name_of_200_characters_is_accepted(run_cli):
    assert run_cli("--project", "p" * 200, "add", "x", "--type", "fix").returncode == 0


def test_a_project_named_after_an_odd_directory_is_made_safe_not_refused(run_cli, tmp_path):
    odd = tmp_path / os.fsdecode(b"repo\tname-\xff")
    (odd / ".git").mkdir(parents=True)
    env = {"MEMDECK_PROJECT": ""}
    result = run_cli("add", "Works from an odd directory", "--type", "fix", "--json", cwd=odd, env=env)
    assert result.returncode == 0, result.stderr
    project = json.loads(result.stdout)["project"]
    assert project == "reponame-\ufffd" and name_problem(project) is None  # the tab goes, the byte is U+FFFD


# -- a store that already holds values out of range ----------------------------------------------

@pytest.fixture
def poisoned(db_path, clock):
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        good = store.add("Retry backoff must cap at sixty seconds", type="fix").memory
        bad = store.add("Written by an older memdeck with broken dates", type="pitfall").memory
    with sqlite3.connect(db_path) as conn:  # what an older version or another tool could write
        conn.execute("UPDATE memory SET created_at = 1e300, updated_at = 253402300799, last_used_at = ?, "
                     "confidence = 74.0 WHERE id = ?", (T0 + 10 * 365 * 86400, bad.id))
        conn.execute("UPDATE event SET at = -1e300 WHERE memory_id = ?", (bad.id,))
    return good, bad


def test_a_poisoned_store_still_lists_searches_shows_and_exports(run_cli, tmp_path, poisoned):
    good, bad = poisoned
    listed = json.loads(run_cli("list", "--json", check=True).stdout)
    assert {m["id"] for m in listed} == {good.id, bad.id}
    shown = next(m for m in listed if m["id"] == bad.id)
    assert shown["confidence"] == 1.0 and shown["created_at"] == "2100-01-01T00:00:00Z"
    assert json.loads(run_cli("search", "broken dates", "--json", check=True).stdout)[0]["id"] == bad.id
    assert "Written by an older memdeck" in run_cli("show", bad.id, check=True).stdout
    assert json.loads(run_cli("show", bad.id, "--json", check=True).stdout)["events"][0]["at"] == "1970-01-01T00:00:00Z"
    for fmt in ("json", "ralph", "nova", "yaml"):
        exported = run_cli("export", "--format", fmt, check=True).stdout
        path = tmp_path / f"out.{fmt}"
        path.write_text(exported, encoding="utf-8")
        again = run_cli("import", str(path), "--format", fmt, env={"MEMDECK_DB": str(tmp_path / f"again-{fmt}.db")})
        assert again.returncode == 0, (fmt, again.stderr)


@pilot_test
async def test_a_poisoned_store_opens_in_the_workbench(db_path, clock, poisoned):
    app = MemdeckApp(db_path, project="demo", clock=clock, config=Config.defaults(), live=False, still=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memories = app.screen.query_one(MemoryList)
        assert memories.cursor_memory is not None
        await pilot.press("j", "t")
        await settle(pilot)
        assert app.screen.__class__.__name__ == "TimelineScreen"


def test_doctor_reports_values_out_of_range_and_fix_clamps_them(run_cli, db_path, poisoned):
    _, bad = poisoned
    report = json.loads(run_cli("doctor", "--json").stdout)
    values = next(f for f in report["findings"] if f["check"] == "values")
    assert not values["ok"] and values["fixable"] and values["count"] == 2
    fixed = run_cli("doctor", "--fix", "--json")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "clamped the values of 1 memories and 1 events into range" in json.loads(fixed.stdout)["repairs"]
    with sqlite3.connect(db_path) as conn:
        created, used, confidence, version = conn.execute(
            "SELECT created_at, last_used_at, confidence, version FROM memory WHERE id = ?", (bad.id,)).fetchone()
    assert confidence == 1.0 and 0 < created <= used and version == 2
    assert json.loads(run_cli("doctor", "--json").stdout)["ok"]
