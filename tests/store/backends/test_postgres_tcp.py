"""The TCP URL form, `--db postgresql://user@host:port/db`, against a real server listening on
127.0.0.1 (the other PostgreSQL tests use its Unix socket), through the real `memdeck` command;
and a URL's password is never printed: not in the URL an error names, nor in the driver's words."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from postgres_server import free_port

from tests.cli_support import run_in_process
from store.backends.postgres import redacted

SECRET = "s3cret-Zq"


def memdeck(cwd, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MEMDECK_DB"}
    return run_in_process([*args], cwd=cwd, env=env)


def test_the_cli_works_on_a_server_by_tcp_url(postgres_tcp_server, tmp_path):
    import psycopg

    with psycopg.connect(postgres_tcp_server.tcp_url("postgres"), autocommit=True) as admin:
        admin.execute("CREATE DATABASE team_tcp")
    url = postgres_tcp_server.tcp_url("team_tcp")
    assert url == f"postgresql://postgres@127.0.0.1:{postgres_tcp_server.port}/team_tcp"

    added = memdeck(tmp_path, "--db", url, "add", "Retry the websocket with backoff", "--type", "pattern")
    assert added.returncode == 0, added.stderr
    found = memdeck(tmp_path, "--db", url, "search", "websockets", "--json")
    assert found.returncode == 0, found.stderr
    assert [m["title"] for m in json.loads(found.stdout)] == ["Retry the websocket with backoff"]
    assert list(tmp_path.iterdir()) == []  # a URL is never made a file

    # The store is in that database, and the URL reaches it over TCP (a socket has no address).
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT host(inet_server_addr())").fetchone() == ("127.0.0.1",)
        assert conn.execute("SELECT title FROM memory").fetchall() == [("Retry the websocket with backoff",)]

    # With a password (the server trusts 127.0.0.1, so it is not checked): nothing prints it.
    with_password = f"postgresql://postgres:{SECRET}@127.0.0.1:{postgres_tcp_server.port}/team_tcp"
    for args in (("add", "Cap the backoff at 30 s", "--type", "fix"), ("list",), ("doctor",)):
        result = memdeck(tmp_path, "--db", with_password, *args)
        assert result.returncode == 0, result.stderr
        assert SECRET not in result.stdout + result.stderr
    doctor = memdeck(tmp_path, "--db", with_password, "doctor")
    assert f"postgres:***@127.0.0.1:{postgres_tcp_server.port}/team_tcp" in doctor.stdout + doctor.stderr


@pytest.mark.parametrize("url", [
    "postgresql://me:{secret}@127.0.0.1:{port}/team",  # nothing listens on the port
    "postgresql://me@127.0.0.1:{port}/team?sslmode=disable&password={secret}",
    "postgresql://me:{secret}@host.invalid:5432/team",  # no such host
    "postgresql://me:p@{secret}@127.0.0.1:{port}/team",  # an `@` not percent-encoded
    "postgresql://me:p/{secret}@127.0.0.1:{port}/team",  # a `/` not percent-encoded
], ids=["userinfo", "parameter", "unknown-host", "unencoded-at", "unencoded-slash"])
def test_a_password_in_a_tcp_url_is_shown_as_stars_when_the_server_cannot_be_reached(tmp_path, url):
    pytest.importorskip("psycopg")
    url = url.format(secret=SECRET, port=free_port())
    result = memdeck(tmp_path, "--db", url, "list")
    assert result.returncode != 0
    assert "cannot connect to the PostgreSQL server" in result.stderr
    assert "***" in result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_redacted_hides_every_form_of_password():
    assert redacted("postgresql://me:secret@db.example:5432/team") == "postgresql://me:***@db.example:5432/team"
    assert redacted("postgresql://me:p@ss/w@db:5432/team?x=1") == "postgresql://me:***@db:5432/team?x=1"
    assert redacted("postgres://me@db/team?password=secret&sslmode=require") == \
        "postgres://me@db/team?password=***&sslmode=require"
    # Without a password, a URL is printed as given.
    for plain in ("postgresql://me@db.example:5432/team", "postgresql://me@/team?host=/run/pg&port=5",
                  "postgresql://db.example/team"):
        assert redacted(plain) == plain
