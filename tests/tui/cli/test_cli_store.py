"""The `memdeck` command line contract of the store (issue 2), through the real command in a
subprocess: every command, its `--json` fields, exit codes, help, and project selection."""

from __future__ import annotations

import json

import pytest

from postgres_server import raw_connect
from store.engine.ids import is_memory_id
from store import Config, Store
from tests.data_support import worked_on

# The CLI's subprocesses on PostgreSQL are covered by test_postgres, sessions, hooks and MCP tests;
# running every one here on both back-ends would double this module's time.

CONTRACT_FIELDS = {"id", "project", "type", "title", "content", "confidence", "status", "tags", "hat",
                   "scope", "created_at", "updated_at", "use_count"}
EVENT_FIELDS = {"kind", "at", "confidence_before", "confidence_after"}
COMMANDS = ["init", "add", "list", "search", "show", "edit", "delete", "restore", "trash", "purge",
            "decay", "cleanup", "stats", "projects", "config"]


@pytest.fixture
def memdeck(run_cli):
    """`memdeck(...)` runs a command that must succeed and returns its stdout."""
    return lambda *args, **kw: run_cli(*args, check=True, **kw).stdout


def add(memdeck, text, *options, **run_options):
    return json.loads(memdeck("add", text, *options, "--json", **run_options))


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_command_has_help(run_cli, command):
    result = run_cli(*([command] if command else []), "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: memdeck")
    if command is None:
        for name in COMMANDS:
            assert name in result.stdout
    assert result.stderr == ""


def test_add_prints_the_new_id_and_an_exact_re_add_prints_the_same_id(run_cli):
    first = run_cli("add", "Jellyfin takes 60s to start", "--type", "timing", "--scope", "jellyfin", check=True)
    memory_id = first.stdout.strip()
    assert is_memory_id(memory_id) and "created" in first.stderr
    again = run_cli("add", "Jellyfin takes 60s to start", "--type", "timing", "--scope", "jellyfin", check=True)
    assert again.stdout.strip() == memory_id and "reinforced" in again.stderr
    other_scope = run_cli("add", "Jellyfin takes 60s to start", "--type", "timing", check=True)
    assert other_scope.stdout.strip() != memory_id


def test_add_takes_every_contract_option(memdeck):
    memory = add(memdeck, "Reconnect websockets with backoff", "--type", "pattern", "--title", "WS backoff",
                 "--tags", "net,ws", "--hat", "creator", "--scope", "gateway", "--files", "src/ws/*.py,lib/*.py",
                 "--confidence", "0.75")
    assert CONTRACT_FIELDS <= set(memory)
    assert memory["action"] == "created" and memory["title"] == "WS backoff"
    assert (memory["tags"], memory["file_refs"]) == (["net", "ws"], ["src/ws/*.py", "lib/*.py"])
    assert (memory["hat"], memory["scope"], memory["confidence"]) == ("creator", "gateway", 0.75)
    assert memory["project"] == "demo" and memory["status"] == "active" and memory["use_count"] == 0


def test_add_reads_the_content_from_stdin(memdeck):
    memory = add(memdeck, "-", "--type", "fix", input="Clear the cache after\nrenaming a module\n")
    assert memory["content"] == "Clear the cache after\nrenaming a module"
    assert memory["title"] == "Clear the cache after"


def test_add_supersedes(memdeck):
    old = add(memdeck, "Deploys go out on Fridays", "--type", "decision")
    new = add(memdeck, "Deploys go out on Tuesdays", "--type", "decision", "--supersedes", old["id"])
    shown = json.loads(memdeck("show", old["id"], "--json"))
    assert shown["confidence"] == 0.3 and shown["events"][-1]["kind"] == "superseded"
    assert new["supersedes"] == old["id"]
    assert f"superseded by: {new['id']}" in memdeck("show", old["id"])


def test_list_filters_and_prints_json_with_the_contract_fields(memdeck):
    a = add(memdeck, "Reconnect websockets with backoff", "--type", "pattern", "--hat", "creator",
            "--tags", "net", "--confidence", "0.9")
    b = add(memdeck, "The staging DB needs the VPN", "--type", "constraint", "--hat", "planner")
    c = add(memdeck, "Never log tokens", "--type", "gotcha", "--tags", "security,net", "--status", "pending")
    listed = json.loads(memdeck("list", "--json"))
    assert {m["id"] for m in listed} == {a["id"], b["id"], c["id"]}
    assert all(CONTRACT_FIELDS <= set(m) for m in listed)

    def ids(*options):
        return {m["id"] for m in json.loads(memdeck("list", *options, "--json"))}

    assert ids("--type", "pattern") == {a["id"]}
    assert ids("--type", "pitfall") == {c["id"]}
    assert ids("--hat", "planner") == {b["id"]}
    assert ids("--status", "pending") == {c["id"]}
    assert ids("--tag", "net") == {a["id"], c["id"]}
    assert ids("--tag", "net", "--tag", "security") == {c["id"]}
    assert ids("--min-confidence", "0.8") == {a["id"]}
    assert ids("--after", "2000-01-01") == ids()
    assert ids("--before", "2000-01-01") == set()
    assert ids("--source", "imported") == set()


def test_list_prints_a_table_and_says_when_nothing_matches(run_cli, memdeck):
    assert run_cli("list").stderr.startswith("no memories in project 'demo'")
    assert memdeck("list", "--json") == "[]\n"
    add(memdeck, "Reconnect websockets with backoff", "--type", "pattern")
    lines = memdeck("list").splitlines()
    assert lines[0].split() == ["id", "type", "conf", "status", "hat", "title"]
    assert "Reconnect websockets with backoff" in lines[1]


def test_list_limit_tells_how_many_were_left_out(run_cli, memdeck):
    for topic in ("websockets", "uploads", "billing"):
        add(memdeck, f"Retry {topic} three times", "--type", "pattern", "--scope", topic)
    result = run_cli("list", "--limit", "2", check=True)
    assert len(result.stdout.splitlines()) == 3 and "2 of 3 shown" in result.stderr


def test_json_output_cut_by_the_limit_says_so_on_stderr(run_cli, store):
    for topic in ("websockets", "uploads", "billing"):
        store.add(f"Retry {topic} three times", type="pattern", scope=topic)
    store.close()
    listed = run_cli("list", "--json", "--limit", "2", check=True)
    assert len(json.loads(listed.stdout)) == 2 and "2 of 3 shown" in listed.stderr
    found = run_cli("search", "retry", "--json", "--limit", "2", check=True)
    assert len(json.loads(found.stdout)) == 2 and "more matched" in found.stderr
    whole = run_cli("search", "retry", "--json", "--limit", "3", check=True)
    assert len(json.loads(whole.stdout)) == 3 and whole.stderr == ""


def test_search_returns_as_many_as_its_help_says(run_cli, store):
    store.add_many([dict(content=f"Retry job {n} with backoff", type="pattern", scope=f"job{n}")
                    for n in range(25)])
    store.close()
    assert "default 20;" in run_cli("search", "--help", check=True).stdout
    found = run_cli("search", "retry", "--json", check=True)
    assert len(json.loads(found.stdout)) == 20 and "best 20 matches shown" in found.stderr


def test_search_finds_text_safely_with_filters_and_dates(run_cli, memdeck):
    hit = add(memdeck, "O'Brien's covid-19 dashboard breaks on empty filters", "--type", "pitfall",
              "--hat", "critic")
    add(memdeck, "Reconnect websockets with backoff", "--type", "pattern", "--title", "Websocket reconnect")
    for query in ('"', "NEAR(", "a) OR (b"):  # the rest of the hostile list: test_store_search.py
        result = run_cli("search", query, "--json")
        assert result.returncode == 0, (query, result.stderr)
        assert all(CONTRACT_FIELDS <= set(m) for m in json.loads(result.stdout))
    found = json.loads(memdeck("search", "covid-19", "--json"))
    assert [m["id"] for m in found] == [hit["id"]] and found[0]["match"] == "text"
    assert json.loads(memdeck("search", "covid", "--type", "pattern", "--json")) == []
    assert json.loads(memdeck("search", "covid", "--hat", "critic", "--after", "1d", "--json"))[0]["id"] == hit["id"]
    assert json.loads(memdeck("search", "covid", "--before", "2000-01-01", "--json")) == []
    fuzzy = json.loads(memdeck("search", "websoket", "--json"))
    assert fuzzy[0]["match"] == "fuzzy" and fuzzy[0]["title"] == "Websocket reconnect"
    assert json.loads(memdeck("search", "websoket", "--no-fuzzy", "--json")) == []
    assert "nothing matches" in run_cli("search", "zebra").stderr


def test_show_prints_a_memory_with_its_history(memdeck):
    memory = add(memdeck, "Jellyfin takes 60s to start", "--type", "timing", "--tags", "media")
    add(memdeck, "Jellyfin takes 60s to start", "--type", "timing")
    shown = json.loads(memdeck("show", memory["id"], "--json"))
    assert CONTRACT_FIELDS <= set(shown)
    assert [e["kind"] for e in shown["events"]] == ["created", "reinforced"]
    assert all(EVENT_FIELDS <= set(e) for e in shown["events"])
    assert (shown["events"][1]["confidence_before"], shown["events"][1]["confidence_after"]) == (0.6, 0.7)
    text = memdeck("show", memory["id"])
    assert "Jellyfin takes 60s to start" in text and "history" in text and "reinforced" in text


def test_show_gives_one_confidence_for_an_event_that_left_it_as_it_was(memdeck):
    memory = add(memdeck, "Jellyfin takes 60s to start", "--type", "timing")
    memdeck("edit", memory["id"], "--tags", "media")
    memdeck("edit", memory["id"], "--confidence", "0.9")
    history = memdeck("show", memory["id"]).split("history", 1)[1].splitlines()
    tags_edit, confidence_edit = [line for line in history if " edited " in line]
    assert "0.60" in tags_edit and "→" not in tags_edit
    assert "0.60 → 0.90" in confidence_edit


def test_show_makes_control_characters_visible(memdeck):
    memory = add(memdeck, "Red \x1b[31malert\x1b[0m text", "--type", "context")
    text = memdeck("show", memory["id"])
    assert "\x1b" not in text and "\\x1b[31malert" in text


def test_edit_changes_fields_and_records_them(run_cli, memdeck):
    memory = add(memdeck, "Use ruff for linting", "--type", "convention", "--tags", "lint,py")
    edited = json.loads(memdeck("edit", memory["id"], "--title", "Lint with ruff", "--type", "style",
                                "--add-tags", "ci", "--remove-tags", "py", "--confidence", "0.9",
                                "--protect", "--json"))
    assert (edited["title"], edited["type"], edited["tags"]) == ("Lint with ruff", "convention", ["lint", "ci"])
    assert edited["confidence"] == 0.9 and edited["protected"] is True
    memdeck("edit", memory["id"], "--status", "inactive")
    kinds = [e["kind"] for e in json.loads(memdeck("show", memory["id"], "--json"))["events"]]
    assert kinds == ["created", "edited", "status_changed"]
    nothing = run_cli("edit", memory["id"])
    assert nothing.returncode == 2 and "nothing to change" in nothing.stderr


def test_delete_restore_trash_and_purge(run_cli, memdeck):
    a = add(memdeck, "Use ruff for linting", "--type", "convention")
    b = add(memdeck, "Use flake8 for linting", "--type", "pitfall")
    assert "would move to trash" in memdeck("delete", a["id"], b["id"], "--dry-run")
    assert len(json.loads(memdeck("list", "--json"))) == 2
    deleted = run_cli("delete", a["id"], b["id"], check=True)
    assert f"memdeck restore {a['id']} {b['id']}" in deleted.stderr
    assert {m["id"] for m in json.loads(memdeck("trash", "--json"))} == {a["id"], b["id"]}
    assert json.loads(memdeck("list", "--json")) == []
    memdeck("restore", a["id"])
    assert [m["id"] for m in json.loads(memdeck("list", "--json"))] == [a["id"]]
    assert "would purge" in memdeck("purge", "--dry-run")
    assert json.loads(memdeck("show", b["id"], "--json"))["status"] == "deleted"
    assert b["id"] in memdeck("purge")
    assert run_cli("show", b["id"]).returncode == 4
    assert json.loads(memdeck("show", a["id"], "--json"))["status"] == "active"


def backdate(db_path, memory_id, days):
    """Make a memory look `days` old, as if added then: the CLI runs on the real clock."""
    conn = raw_connect(db_path)
    conn.execute("UPDATE memory SET created_at = created_at - ?, updated_at = updated_at - ?, "
                 "status_changed_at = status_changed_at - ? WHERE id = ?", (days * 86400,) * 3 + (memory_id,))
    conn.commit()
    conn.close()


def test_decay_applies_the_policy_and_dry_run_changes_nothing(run_cli, memdeck, db_path):
    old = add(memdeck, "Jellyfin takes 60s to start", "--type", "timing", "--confidence", "0.7")
    fresh = add(memdeck, "Plex needs port 32400", "--type", "dependency", "--confidence", "0.7")
    backdate(db_path, old["id"], 60)
    project = json.loads(memdeck("show", old["id"], "--json"))["project"]
    with Store.open(db_path, project=project, config=Config.defaults()) as store:
        worked_on(store, store.now() - 59 * 86400, 60)  # decay counts the days the project was worked on
    planned = json.loads(memdeck("decay", "--dry-run", "--json"))
    assert [c["id"] for c in planned] == [old["id"]]
    assert planned[0]["confidence_after"] == pytest.approx(0.2714, abs=1e-3)
    assert planned[0]["status_after"] == "inactive"
    assert json.loads(memdeck("show", old["id"], "--json"))["confidence"] == 0.7
    result = run_cli("decay", check=True)
    assert "decayed 1 memories (policy grace-weekly, sessions clock)" in result.stderr
    shown = json.loads(memdeck("show", old["id"], "--json"))
    assert shown["status"] == "inactive" and shown["events"][-1]["kind"] == "decayed"
    assert json.loads(memdeck("show", fresh["id"], "--json"))["confidence"] == 0.7


def test_cleanup_purges_only_dead_memories_and_dry_run_writes_nothing(run_cli, memdeck, db_path):
    dead = add(memdeck, "An old note nobody used", "--type", "context", "--confidence", "0.1", "--status", "inactive")
    alive = add(memdeck, "A low note still active", "--type", "context", "--confidence", "0.1")
    for memory in (dead, alive):
        backdate(db_path, memory["id"], 45)
    before = raw_connect(db_path).execute("SELECT COUNT(*) FROM event").fetchone()[0]
    assert [m["id"] for m in json.loads(memdeck("cleanup", "--dry-run", "--json"))] == [dead["id"]]
    assert raw_connect(db_path).execute("SELECT COUNT(*) FROM event").fetchone()[0] == before
    assert dead["id"] in memdeck("cleanup")
    assert run_cli("show", dead["id"]).returncode == 4
    assert run_cli("show", alive["id"]).returncode == 0


def test_stats_and_projects(memdeck):
    add(memdeck, "Use ruff for linting", "--type", "convention", "--hat", "editor")
    add(memdeck, "Plex needs port 32400", "--type", "dependency")
    add(memdeck, "Cart totals round half up", "--type", "decision", env={"MEMDECK_PROJECT": "shop"})
    stats = json.loads(memdeck("stats", "--json"))
    assert stats["project"] == "demo" and stats["total"] == 2
    assert stats["by_type"] == {"convention": 1, "dependency": 1} and stats["events"] == 2
    assert "project demo: 2 memories" in memdeck("stats")
    projects = json.loads(memdeck("projects", "--json"))
    assert [(p["name"], p["memories"], p["current"]) for p in projects] == [("demo", 2, True), ("shop", 1, False)]
    assert "shop" in memdeck("projects")


def test_init_creates_the_store_at_db(run_cli, tmp_path):
    target = tmp_path / "store.db"
    result = run_cli("--db", str(target), "init", check=True)
    assert target.exists() and str(target) in result.stderr


def test_a_db_in_a_folder_that_does_not_exist_is_refused_not_created(run_cli, tmp_path):
    target = tmp_path / "typo" / "store.db"
    for env in ({}, {"MEMDECK_DB": str(target)}):
        result = run_cli(*(() if env else ("--db", str(target))), "list", env=env)
        assert result.returncode == 3
        assert result.stderr == (f"memdeck: {target}: the folder {target.parent} does not exist; no store was "
                                 "created. Check the path, or create the folder first\n")
    assert not target.parent.exists()


def test_the_default_store_and_its_folder_are_created_on_first_run(run_cli, tmp_path):
    env = {"MEMDECK_DB": "", "XDG_DATA_HOME": str(tmp_path / "fresh-home")}
    run_cli("init", env=env, check=True)
    assert (tmp_path / "fresh-home" / "memdeck" / "memdeck.db").is_file()


def test_db_option_wins_over_memdeck_db(run_cli, memdeck, tmp_path, db_path):
    other = tmp_path / "other.db"
    memdeck("--db", str(other), "add", "Only in the other store", "--type", "context")
    assert json.loads(memdeck("list", "--json")) == []
    assert len(json.loads(memdeck("--db", str(other), "list", "--json"))) == 1


# -- which project -------------------------------------------------------------------------------

def test_the_default_project_is_the_git_root_and_can_be_overridden(memdeck, tmp_path):
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "cart").mkdir(parents=True)
    unset = {"MEMDECK_PROJECT": ""}
    from_git = add(memdeck, "Cart totals round half up", "--type", "decision", cwd=root / "src" / "cart", env=unset)
    assert from_git["project"] == "shop"
    by_env = add(memdeck, "Cart totals round half up", "--type", "decision", cwd=root, env={"MEMDECK_PROJECT": "billing"})
    assert by_env["project"] == "billing"
    by_option = json.loads(memdeck("--project", "ops", "add", "Cart totals round half up", "--type",
                                   "decision", "--json", cwd=root, env={"MEMDECK_PROJECT": "billing"}))
    assert by_option["project"] == "ops"
    projects = {p["name"]: p["root"] for p in json.loads(memdeck("projects", "--json", cwd=root, env=unset))}
    assert projects["shop"] == str(root)
    assert len(json.loads(memdeck("list", "--json", cwd=root / "src", env=unset))) == 1


# -- errors and exit codes -----------------------------------------------------------------------

@pytest.mark.parametrize("args, code, message", [
    (["add", "text", "--type", "nonsense"], 2, "unknown type 'nonsense'"),
    (["add", "text", "--type", "pattern", "--confidence", "2"], 2, "from 0 to 1"),
    (["add", "   ", "--type", "pattern"], 2, "needs some content"),
    (["add", "text"], 2, "--type"),
    (["list", "--type", "nonsense"], 2, "unknown type"),
    (["list", "--min-confidence", "lots"], 2, "'lots' is not a number"),
    (["search", "x", "--after", "last tuesday"], 2, "cannot read time"),
    (["show", "mem-1700000000-dead"], 4, "no memory with id"),
    (["edit", "mem-1700000000-dead", "--title", "x"], 4, "no memory with id"),
    (["delete", "mem-1700000000-dead"], 4, "no memory with id"),
    (["restore", "mem-1700000000-dead"], 4, "no memory with id"),
    (["purge", "mem-1700000000-dead"], 4, "no memory with id"),
    (["frobnicate"], 2, "invalid choice"),
])
def test_errors_are_one_line_on_stderr_with_documented_exit_codes(run_cli, args, code, message):
    result = run_cli(*args)
    assert result.returncode == code
    assert message in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.sqlite_only
def test_a_store_that_cannot_be_opened_exits_3(run_cli, db_path):
    db_path.write_bytes(b"not a database at all, just some text" * 10)
    result = run_cli("list")
    assert result.returncode == 3 and "not a memdeck store" in result.stderr


def test_refusing_a_restore_or_purge_outside_the_trash_exits_2(run_cli, memdeck):
    memory = add(memdeck, "Use ruff for linting", "--type", "convention")
    assert run_cli("restore", memory["id"]).returncode == 2
    assert run_cli("purge", memory["id"]).returncode == 2
    assert json.loads(memdeck("show", memory["id"], "--json"))["status"] == "active"
