"""A PostgreSQL store's URL is a secret when it holds a password: memdeck never writes it into
Claude Code's settings (which are committed) nor a hook's arguments, and never prints it, in any
of the forms a password can take; every message goes through one redaction."""

from __future__ import annotations

import json
import os
from pathlib import Path

import peewee
import pytest

from store.backends.postgres import password_of, redacted
from store.engine.redaction import hide_passwords, holds_password
from store.engine.diagnosis import describe
from tests.cli_support import run_in_process

SECRET = "Zq7-s3cret"

FORMS = [
    (f"postgresql://me:{SECRET}@db.example:5432/team", "postgresql://me:***@db.example:5432/team"),
    (f"postgresql://me:p#{SECRET}@db/team", "postgresql://me:***@db/team"),
    (f"postgresql://me:p@/{SECRET}@db/team?x=1", "postgresql://me:***@db/team?x=1"),
    (f"POSTGRES://me@db/team?password={SECRET}&sslmode=require", "POSTGRES://me@db/team?password=***&sslmode=require"),
    (f"postgres://me@db/team?%70assword={SECRET}", "postgres://me@db/team?%70assword=***"),
    (f"postgres://me@db/team?sslpassword={SECRET}", "postgres://me@db/team?sslpassword=***"),
    (f"host=db user=me password={SECRET} dbname=team", "host=db user=me password=*** dbname=team"),
    (f"host=db password = '{SECRET} x' dbname=team", "host=db password = *** dbname=team"),
    (f"memdeck: postgresql://me:{SECRET}@db/team: owned by another role",
     "memdeck: postgresql://me:***@db/team: owned by another role"),
]


@pytest.mark.parametrize(("given", "shown"), FORMS)
def test_every_form_of_password_is_hidden(given, shown):
    assert hide_passwords(given) == shown == redacted(given)
    assert holds_password(given)


@pytest.mark.parametrize("plain", [
    "postgresql://me@db.example:5432/team", "postgresql://me@/team?host=/run/pg&port=5433",
    "/home/me/.local/share/memdeck/memdeck.db", "the password field is required",
])
def test_text_without_a_password_is_left_as_it_is(plain):
    assert hide_passwords(plain) == plain and not holds_password(plain)


def test_the_password_of_a_url_is_found_in_each_form():
    assert password_of(f"postgresql://me:p#{SECRET}@db/team") == f"p#{SECRET}"
    assert password_of(f"postgres://me@db/team?%70assword={SECRET}") == SECRET


def test_an_error_on_a_postgresql_store_keeps_the_url_whole_and_hides_its_password():
    url = f"postgresql://me:{SECRET}@db.example/team"
    trouble = describe(peewee.OperationalError("server closed the connection unexpectedly"), url)
    assert str(trouble).startswith("postgresql://me:***@db.example/team: ")
    assert SECRET not in str(trouble)


# -- the installers --------------------------------------------------------------------------------

@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "payments-api"
    (root / ".git").mkdir(parents=True)
    return root


def install(project, tmp_path, *args, db_env=None):
    env = {k: v for k, v in os.environ.items() if k != "MEMDECK_DB"}
    env.update(HOME=str(tmp_path / "home"), CLAUDE_CONFIG_DIR="")
    if db_env:
        env["MEMDECK_DB"] = db_env
    return run_in_process([*args], cwd=project, env=env)


@pytest.mark.parametrize("url", [given for given, _ in FORMS[:6]])
@pytest.mark.parametrize("command", [("mcp", "install"), ("hook", "install")])
def test_installers_refuse_a_url_with_a_password_and_write_nothing(project, tmp_path, url, command):
    for done in (install(project, tmp_path, "--db", url, *command),
                 install(project, tmp_path, *command, db_env=url),
                 install(project, tmp_path, "--db", url, *command, "--dry-run")):
        assert done.returncode == 2, done.stderr
        assert "PGPASSWORD" in done.stderr and ".pgpass" in done.stderr
        assert SECRET not in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert not (project / ".mcp.json").exists() and not (project / ".claude").exists()


def test_installers_write_a_url_without_a_password(project, tmp_path):
    url = "postgresql://me@db.example:5432/team"
    done = install(project, tmp_path, "--db", url, "mcp", "install")
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memdeck"]
    assert entry["args"] == ["--db", url, "mcp"]


# -- on a real server ------------------------------------------------------------------------------

def with_password(url: str, password: str) -> str:
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{password}@", 1)


def test_no_command_prints_the_password_of_the_store_it_opened(postgres_server, tmp_path):
    """The test server trusts its socket, so the password is never checked: only printed, or not."""
    url = with_password(postgres_server.empty_database(), SECRET)
    env = {k: v for k, v in os.environ.items() if k != "MEMDECK_DB"}
    for args in (("init",), ("add", "Retry with backoff", "--type", "fix"), ("list",), ("doctor",),
                 ("show", "mem-nothere")):
        done = run_in_process(["--db", url, *args], cwd=tmp_path, env=env)
        assert SECRET not in done.stdout + done.stderr, (args, done.stderr)
    assert "postgres:***@" in run_in_process(["--db", url, "init"], cwd=tmp_path, env=env).stderr


@pytest.mark.parametrize("password", [f"p#{SECRET}", f"p@{SECRET}", f"{SECRET}/x?y"])
def test_a_password_the_driver_cannot_parse_is_not_printed(postgres_server, tmp_path, password):
    url = with_password(postgres_server.empty_database(), password)
    env = {k: v for k, v in os.environ.items() if k != "MEMDECK_DB"}
    done = run_in_process(["--db", url, "list"], cwd=tmp_path, env=env)
    assert SECRET not in done.stdout + done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# -- the postgres:// form ---------------------------------------------------------------------------

@pytest.mark.parametrize("scheme", ["postgres://", "POSTGRESQL://", "Postgres://"])
def test_every_documented_url_form_reaches_the_server_it_names(postgres_server, tmp_path, scheme):
    """Peewee takes only `postgresql://` for a URL: any other form lost its host, port and user."""
    url = postgres_server.empty_database().replace("postgresql://", scheme, 1)
    env = {k: v for k, v in os.environ.items() if k != "MEMDECK_DB"}
    for args in (("add", "Retry the websocket with backoff", "--type", "fix"), ("list", "--json"), ("doctor",)):
        done = run_in_process(["--db", url, *args], cwd=tmp_path, env=env)
        assert done.returncode == 0, (args, done.stderr)
    assert list(tmp_path.iterdir()) == []
