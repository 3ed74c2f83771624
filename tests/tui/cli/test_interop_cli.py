"""`memdeck import` and `memdeck export` as a user runs them, including hostile files: every bad
file ends in a clear message and a non-zero exit, with the store exactly as it was."""

from __future__ import annotations

import json
import sqlite3

import pytest

from store.interop import agents_md
from tests.data_support import DATA, FIXTURES, needs_shared

# The project's own Ralph file (5 memories: 3 patterns, 2 fixes, one tagged retry), written as
# Ralph writes it, so these tests run without ../shared; the real pi-mono file is tried as well.
RALPH_FILE = DATA / "ralph" / "memories.md"
PI_MONO = FIXTURES / "ralph" / "badlogic__pi-mono__.agent__memories.md"
BOTH_RALPH_FILES = [pytest.param(RALPH_FILE, id="own"), pytest.param(PI_MONO, id="pi-mono", marks=needs_shared)]


def snapshot(db_path):
    if not db_path.exists():
        return None
    with sqlite3.connect(db_path) as db:
        return {table: db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                for table in ("project", "memory", "event", "session", "activity")}


@pytest.fixture
def seeded(run_cli, db_path):
    """A store holding the project's own Ralph file, and what it looked like."""
    run_cli("import", str(RALPH_FILE), check=True)
    return snapshot(db_path)


def nested(depth: int) -> str:
    return '{"memories": [{"type": "pattern", "content": "x", "meta": ' + '{"a": ' * depth + "1" + "}" * depth + "}]}"


HOSTILE = {
    "truncated.json": (b'{"version": 1, "memories": [{"type": "pattern", "content": "cut', "truncated.json: not valid JSON at line 1"),
    "version.json": (b'{"version": 99, "memories": []}', "unsupported export version 99"),
    "types.json": (b'{"memories": [{"type": "pattern", "content": ["a"]}]}', "memories[0].content: expected text, got a list"),
    "deep.json": (nested(200_000).encode(), "nested too deeply"),
    "deep-list.json": (b"[" * 100_000, "nested too deeply"),
    "bomb.yaml": (b"a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n"
                  b"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nmemories: [*c]\n",
                  "YAML a (line 1): anchors (&name) are not accepted"),
    "latin1.md": ("# Memories\n\n## Fixes\n\n### mem-1737390000-aaaa\n> caf\xe9\n".encode("latin-1"),
                  "latin1.md: not UTF-8 text (byte 51 cannot be read)"),
    "empty.json": (b"", "empty.json: not valid JSON at line 1 column 1"),
    "empty": (b"", "empty: cannot tell the format"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_fails_clearly_and_leaves_the_store_untouched(run_cli, db_path, tmp_path, seeded, name):
    data, message = HOSTILE[name]
    path = tmp_path / name
    path.write_bytes(data)
    result = run_cli("import", str(path))
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(db_path) == seeded


def test_a_50_mb_memory_is_refused(run_cli, db_path, tmp_path, seeded):
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"memories": [{"type": "pattern", "content": "x" * (50 << 20)}]}))
    result = run_cli("import", str(path))
    assert result.returncode == 2
    assert "memories[0] is 52428800 characters long, over the limit of 200000" in result.stderr
    assert snapshot(db_path) == seeded


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(run_cli, db_path, tmp_path, seeded):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (50 << 20) + b'{"memories": []}')
    config = tmp_path / "config.yml"
    config.write_text("interop:\n  max_import_mb: 10\n")
    result = run_cli("import", str(path), env={"MEMDECK_CONFIG": str(config)})
    assert result.returncode == 2
    assert "larger than the import limit of 10 MiB" in result.stderr
    assert snapshot(db_path) == seeded


@pytest.mark.parametrize("source", BOTH_RALPH_FILES)
@pytest.mark.parametrize("variant", ["crlf", "no-final-newline"])
def test_ralph_file_with_crlf_or_no_final_newline_imports_correctly(run_cli, tmp_path, variant, source):
    text = source.read_text(encoding="utf-8")
    text = text.replace("\n", "\r\n") if variant == "crlf" else text.rstrip("\n")
    path = tmp_path / "memories.md"
    path.write_bytes(text.encode("utf-8"))
    assert "5 added" in run_cli("import", str(path), check=True).stdout
    assert run_cli("export", "--format", "ralph", check=True).stdout == source.read_text(encoding="utf-8")


def test_import_from_stdin_with_a_format(run_cli):
    result = run_cli("import", "-", "--format", "ralph", input=RALPH_FILE.read_text(encoding="utf-8"), check=True)
    assert "imported - (ralph): 5 added" in result.stdout
    assert len(json.loads(run_cli("list", "--json", check=True).stdout)) == 5


def test_dry_run_says_what_would_happen_and_writes_nothing(run_cli, db_path, tmp_path, seeded):
    other = tmp_path / "other.md"
    other.write_text(RALPH_FILE.read_text(encoding="utf-8").replace("mem-17702", "mem-17703"), encoding="utf-8")
    result = run_cli("import", str(other), "--dry-run", check=True)
    assert "would import" in result.stdout and "5 added" in result.stdout
    assert "dry run: nothing was written" in result.stderr
    assert snapshot(db_path) == seeded


def test_summary_as_json_names_what_was_skipped_and_why(run_cli, seeded):
    summary = json.loads(run_cli("import", str(RALPH_FILE), "--json", check=True).stdout)
    assert summary["added"] == [] and len(summary["skipped"]) == 5
    assert summary["skipped"][0]["why"] == "already in the store, unchanged"


def test_export_never_overwrites_without_force(run_cli, tmp_path, seeded):
    out = tmp_path / "memories.json"
    out.write_text("precious")
    result = run_cli("export", "--output", str(out))
    assert result.returncode == 2 and "exists; add --force" in result.stderr
    assert out.read_text() == "precious"
    run_cli("export", "--output", str(out), "--force", check=True)
    assert len(json.loads(out.read_text())["memories"]) == 5
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".memories.json")] == []


def test_export_into_a_missing_directory_fails_clearly(run_cli, tmp_path, seeded):
    result = run_cli("export", "--output", str(tmp_path / "no" / "such" / "dir.json"))
    assert result.returncode != 0 and "cannot write in" in result.stderr


def test_export_filters_like_list(run_cli, seeded):
    out = json.loads(run_cli("export", "--type", "fix", "--tag", "retry", check=True).stdout)
    assert [m["id"] for m in out["memories"]] == ["mem-1770244838-e5a8"]
    ralph = run_cli("export", "--format", "ralph", "--type", "fix", check=True).stdout
    assert ralph.count("### mem-") == 2
    limited = json.loads(run_cli("export", "--limit", "2", check=True).stdout)
    assert [m["id"] for m in limited["memories"]] == ["mem-1770244620-c3e6", "mem-1770244838-e5a8"]


def test_import_says_when_memories_go_to_the_project_the_file_names(run_cli, tmp_path):
    path = tmp_path / "dex.json"
    path.write_text(json.dumps({"version": 1, "project": "myproject",
                                "memories": [{"id": "mem-abc123", "type": "pattern", "content": "x y z"}]}))
    assert "added into project myproject (as the file says)" in run_cli("import", str(path), check=True).stdout
    assert len(json.loads(run_cli("--project", "myproject", "list", "--json", check=True).stdout)) == 1


def test_export_nova_and_yaml_to_stdout(run_cli, seeded):
    nova = json.loads(run_cli("export", "--format", "nova", check=True).stdout)
    assert nova["projectName"] == "demo" and len(nova["entries"]) == 5
    assert {e["category"] for e in nova["entries"]} == {"pattern", "error_solution"}
    yaml_text = run_cli("export", "--format", "yaml", check=True).stdout
    assert yaml_text.startswith("format: memdeck\nversion: 1\n") and yaml_text.count("- id: mem-") == 5


def test_yaml_export_imports_into_another_store_with_every_memory_field(run_cli, tmp_path, seeded):
    path = tmp_path / "memories.yaml"
    run_cli("export", "--format", "yaml", "--output", str(path), check=True)
    other = {"MEMDECK_DB": str(tmp_path / "other.db")}
    assert "5 added" in run_cli("import", str(path), env=other, check=True).stdout
    mine = json.loads(run_cli("list", "--json", "--sort", "created", check=True).stdout)
    theirs = json.loads(run_cli("list", "--json", "--sort", "created", env=other, check=True).stdout)
    assert theirs == mine


def test_agents_md_into_claude_md_replaces_only_its_block(run_cli, tmp_path, seeded):
    claude = tmp_path / "CLAUDE.md"
    original = b"# Rules\n\nUse tabs.\n\n<!-- memdeck:begin -->\nold block\n<!-- memdeck:end -->\n\n## After\ncaf\xc3\xa9\n"
    claude.write_bytes(original)
    run_cli("export", "--format", "agents-md", "--into", str(claude), check=True)
    written = claude.read_bytes()
    head, rest = original.split(b"<!-- memdeck:begin -->")
    tail = rest.split(b"<!-- memdeck:end -->")[1]
    assert written.startswith(head) and written.endswith(b"<!-- memdeck:end -->" + tail)
    assert b"old block" not in written and b"## Project Memory" in written
    assert written.count(b"\n- ") == 5
    run_cli("export", "--format", "agents-md", "--into", str(claude), check=True)
    assert claude.read_bytes() == written


def test_agents_md_into_a_new_file_and_to_stdout(run_cli, tmp_path, seeded):
    agents = tmp_path / "AGENTS.md"
    run_cli("export", "--format", "agents-md", "--into", str(agents), "--limit", "2", check=True)
    text = agents.read_text()
    assert text.startswith(agents_md.BEGIN) and text.endswith(agents_md.END + "\n")
    assert text.count("\n- ") == 2
    stdout = run_cli("export", "--format", "agents-md", check=True).stdout
    assert stdout.startswith(agents_md.BEGIN) and stdout.count("\n- ") == 5


def test_into_is_only_for_agents_md(run_cli, tmp_path):
    result = run_cli("export", "--format", "json", "--into", str(tmp_path / "CLAUDE.md"))
    assert result.returncode == 2 and "--into works with --format agents-md" in result.stderr


def test_a_new_export_file_gets_the_usual_file_mode(run_cli, tmp_path, seeded):
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    out = tmp_path / "memories.md"
    run_cli("export", "--format", "ralph", "--output", str(out), check=True)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
