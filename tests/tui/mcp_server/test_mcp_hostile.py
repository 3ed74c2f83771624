"""`memdeck mcp` facing a client that misbehaves: lines that are not JSON-RPC get JSON-RPC's own
errors, a client that closes the server's stdout ends it quietly, and an argument of a megabyte
is neither echoed back nor kept in the session log."""

from __future__ import annotations

import json
import os
import select
import subprocess

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the memdeck[mcp] extra")

from store import Store  # noqa: E402
from tests.cli_support import memdeck_command  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]  # an MCP server process for each hostile input

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "claude-code", "version": "2.0"}}}


class Server:
    def __init__(self, db_path, cwd):
        env = {**os.environ, "MEMDECK_DB": str(db_path)}
        self.process = subprocess.Popen([*memdeck_command(), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, cwd=cwd)

    def send_line(self, line: bytes) -> None:
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_line(json.dumps(message).encode())

    def receive(self) -> dict:
        # A server that never answers fails the test instead of hanging it.
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        assert ready, "no answer from the server"
        line = self.process.stdout.readline()
        assert line, self.process.stderr.read().decode()
        return json.loads(line)

    def start(self) -> "Server":
        self.send(INITIALIZE)
        assert self.receive()["id"] == 1
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def end(self) -> tuple[int, str]:
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            code = self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        return code, self.process.stderr.read().decode()


@pytest.fixture
def server(db_path, tmp_path):
    started = Server(db_path, tmp_path).start()
    yield started
    if started.process.poll() is None:
        started.process.kill()


@pytest.mark.parametrize(("line", "code"), [
    (b"{not json", -32700), (b"\xff\xfe garbage", -32700), (b'{"jsonrpc": "2.0", "id": 7', -32700),
    (b"[1, 2, 3]", -32600), (b'{"jsonrpc": "1.0", "id": 7, "method": "x"}', -32600), (b'"just text"', -32600),
])
def test_a_malformed_line_gets_json_rpcs_error_and_the_server_goes_on(server, line, code):
    server.send_line(line)
    reply = server.receive()
    assert reply["jsonrpc"] == "2.0" and reply["id"] is None and reply["error"]["code"] == code
    server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert server.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    code, stderr = server.end()
    assert code == 0 and "Traceback" not in stderr


def test_a_client_that_closes_the_servers_stdout_ends_it_without_a_traceback(server):
    server.process.stdout.close()
    server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    server.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    code, stderr = server.end()
    assert code == 0, stderr
    assert "Traceback" not in stderr and "ExceptionGroup" not in stderr and "BrokenPipe" not in stderr


def test_a_huge_id_is_neither_echoed_nor_logged(server, db_path):
    huge = "m" * 1_000_000
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "get", "arguments": {"id": huge}}})
    reply = server.receive()["result"]
    assert reply["isError"] is True and len(json.dumps(reply)) < 1_000
    assert "not a memory id" in reply["content"][0]["text"]
    server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "search", "arguments": {"query": "websocket " * 100_000}}})
    reply = server.receive()["result"]
    assert reply["isError"] is True and len(json.dumps(reply)) < 1_000
    server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                 "params": {"name": "remember", "arguments": {"content": "x", "type": "t" * 1_000_000}}})
    reply = server.receive()["result"]
    assert reply["isError"] is True and len(json.dumps(reply)) < 2_000
    assert server.end()[0] == 0
    with Store.open(db_path, project="demo") as store:
        (session,) = store.sessions.recent()
        logged = store.sessions.activities(session.id)
    assert logged and all(len(a.summary) <= 300 and len(json.dumps(a.detail)) < 1_000 for a in logged)


def test_remember_with_a_nul_is_a_tool_error_on_both_backends(server, db_path):
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "remember", "arguments": {"content": "Use\u0000 uv", "type": "convention"}}})
    reply = server.receive()["result"]
    assert reply["isError"] is True and "NUL character" in reply["content"][0]["text"]
    server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "remember", "arguments": {"content": "Use uv", "type": "convention",
                                                              "tags": ["t" * 1_000_000]}}})
    reply = server.receive()["result"]
    assert reply["isError"] is True and "over the limit" in reply["content"][0]["text"]
    assert server.end()[0] == 0
    with Store.open(db_path, project="demo") as store:
        assert store.db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0] == 0


def test_a_client_name_with_a_nul_or_a_megabyte_is_a_clean_agent_name(db_path, tmp_path):
    server = Server(db_path, tmp_path)
    server.send({**INITIALIZE, "params": {**INITIALIZE["params"],
                                          "clientInfo": {"name": "evil\u0000\u001b[2J" + "x" * 100_000, "version": "1"}}})
    assert server.receive()["id"] == 1
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "search", "arguments": {"query": "anything"}}})
    assert server.receive()["result"]["isError"] is False
    assert server.end()[0] == 0
    with Store.open(db_path, project="demo") as store:
        (session,) = store.sessions.recent()
    assert session.agent == ("evil" + "x" * 100_000)[:64]  # the escape sequence goes whole
