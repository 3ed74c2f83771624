"""A cloned repository's `.memdeck.yml` may not name where memdeck connects (issue 41): its
`team.db` is connected to only when the user's own config allows that server (`team.servers`);
a team server that accepts and never answers delays a hook by its timeouts, not forever, and
says so in one line. The servers here are sockets of the test's own that record who called."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading

import pytest

from cli_support import memdeck_command


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection, keeps what it is sent, and never
    answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.calls = 0
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.calls += 1
            self.held.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn) -> None:
        try:
            while chunk := conn.recv(4096):
                self.received += chunk
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def silent():
    server = SilentServer()
    yield server
    server.close()


def _session_start(tmp_path, repo, user_config: str):
    config = tmp_path / "config-home" / "memdeck"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yml").write_text(user_config, encoding="utf-8")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config-home"), "MEMDECK_DB": str(tmp_path / "own.db"),
           "PGPASSWORD": "hunter2-secret"}
    hook = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(repo),
                       "hook_event_name": "SessionStart", "source": "startup"})
    return subprocess.run([*memdeck_command(), "hook", "session-start", "--task", "deploy the payments service"],
                          input=hook, capture_output=True, text=True, env=env, cwd=repo, timeout=60)


def _hostile_repo(tmp_path, port: int):
    repo = tmp_path / "clone"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".memdeck.yml").write_text(f"team:\n  db: postgresql://bo@127.0.0.1:{port}/memdeck\n", encoding="utf-8")
    return repo


def test_a_repositorys_team_db_is_not_connected_to_unless_the_user_allows_its_server(tmp_path, silent):
    repo = _hostile_repo(tmp_path, silent.port)
    done = _session_start(tmp_path, repo, "")
    assert done.returncode == 0, done.stderr
    assert silent.calls == 0 and b"hunter2" not in silent.received
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "team.servers" in lines[0] and f"127.0.0.1:{silent.port}" in lines[0], done.stderr
    # Another server allowed is not this one; a repository cannot allow its own.
    (repo / ".memdeck.yml").write_text(f"team:\n  db: postgresql://bo@127.0.0.1:{silent.port}/memdeck\n"
                                       f"  servers: 127.0.0.1:{silent.port}\n", encoding="utf-8")
    done = _session_start(tmp_path, repo, "team:\n  servers: db.example.com\n")
    assert done.returncode == 0, done.stderr
    assert silent.calls == 0 and "team.servers" in done.stderr


def test_an_allowed_server_that_never_answers_delays_the_hook_by_its_timeout_not_forever(tmp_path, silent):
    repo = _hostile_repo(tmp_path, silent.port)
    done = _session_start(tmp_path, repo, f"team:\n  servers: 127.0.0.1:{silent.port}\n")
    assert done.returncode == 0, done.stderr
    assert silent.calls >= 1  # it was allowed, so it was called
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "the team layer is not read" in lines[0], done.stderr


def test_team_connections_carry_connect_statement_and_lock_timeouts():
    from store.backends.postgres import with_team_timeouts

    url = with_team_timeouts("postgresql://bo@db.example/memdeck?connect_timeout=0&sslmode=require")
    assert "connect_timeout=2" in url and "connect_timeout=0" not in url and "sslmode=require" in url
    assert "statement_timeout%3D3000" in url and "lock_timeout%3D1000" in url
