"""`memdeck mcp` answers `initialize` before the SDK is loaded (tui/mcp_server/early.py): the
early answer is the SDK's own, for every protocol version a client may ask; the SDK's duplicate
never reaches the client; anything but a well-formed `initialize` first is the SDK's to answer;
`serverInfo.version` is the package's version."""

from __future__ import annotations

import json
import os
import subprocess
from importlib.metadata import version

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the memdeck[mcp] extra")

from mcp.server.stdio import stdio_server  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: E402

from store import Config  # noqa: E402
from store.engine.vocabulary import Vocabulary  # noqa: E402
from tests.cli_support import memdeck_command  # noqa: E402
from tui.mcp_server.agent_session import AgentSession  # noqa: E402
from tui.mcp_server.early import HANDSHAKE_VERSIONS, initialize_result  # noqa: E402
from tui.mcp_server.server import build_server  # noqa: E402

TYPES = Vocabulary.from_config(Config.defaults()).types


def _sdk_answer(request: dict) -> dict:
    """What the SDK's own server writes for `request`, read from its stdio transport."""
    server = build_server(AgentSession(lambda: None, environ={}), types=TYPES)
    lowlevel = server._lowlevel_server
    written: list[str] = []

    class Input:
        sent = False

        def __aiter__(self):
            return self

        async def __anext__(self):
            if not self.sent:
                self.sent = True
                return json.dumps(request) + "\n"
            while not written:  # the answer first, then the end of input
                await anyio.sleep(0.01)
            raise StopAsyncIteration

    class Output:
        async def write(self, text):
            written.append(text)

        async def flush(self):
            return None

    async def main():
        async with stdio_server(stdin=Input(), stdout=Output()) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    anyio.run(main)
    return json.loads(written[0])


def _initialize(protocol: str, request_id=1) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": protocol, "capabilities": {},
                       "clientInfo": {"name": "claude-code", "version": "2.1.197"}}}


def test_the_handshake_versions_are_the_sdks():
    assert HANDSHAKE_VERSIONS == tuple(HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.parametrize("protocol", ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01"])
def test_the_early_answer_is_the_sdks_own(protocol):
    request = _initialize(protocol)
    assert _sdk_answer(request) == {"jsonrpc": "2.0", "id": 1, "result": initialize_result(request["params"])}


def test_params_the_sdk_would_refuse_get_no_early_answer():
    assert initialize_result({"protocolVersion": "2025-06-18", "capabilities": {}}) is None
    assert initialize_result({"protocolVersion": 20250618, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}) is None
    assert initialize_result(None) is None


class _Stdio:
    def __init__(self, db_path, cwd):
        env = {k: v for k, v in os.environ.items() if k not in ("MEMDECK_PROJECT", "CLAUDE_CODE_SESSION_ID")}
        self.process = subprocess.Popen([*memdeck_command(), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env={**env, "MEMDECK_DB": str(db_path)},
                                        cwd=cwd)

    def send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def receive(self):
        line = self.process.stdout.readline()
        assert line, self.process.stderr.read()
        return json.loads(line)

    def close(self):
        self.process.stdin.close()
        code = self.process.wait(timeout=60)
        rest = self.process.stdout.read()
        self.process.stdout.close()
        self.process.stderr.close()
        return code, rest


@pytest.mark.slow
def test_one_answer_per_request_and_the_package_version(db_path, tmp_path):
    server = _Stdio(db_path, tmp_path)
    try:
        server.send(_initialize("2025-06-18", request_id="init-1"))
        first = server.receive()
        assert first["id"] == "init-1" and first["result"]["serverInfo"] == {"name": "memdeck", "version": version("memdeck")}
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = server.receive()  # not the SDK's second answer to init-1
        assert listed["id"] == 2 and len(listed["result"]["tools"]) == 5
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "search", "arguments": {"query": "anything"}}})
        assert server.receive()["id"] == 3
    finally:
        code, rest = server.close()
    assert code == 0 and rest == ""


@pytest.mark.slow
def test_a_malformed_initialize_is_the_sdks_to_answer(db_path, tmp_path):
    server = _Stdio(db_path, tmp_path)
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}})
        refused = server.receive()
        assert refused["id"] == 1 and "error" in refused
        server.send(_initialize("2025-06-18", request_id=2))
        assert server.receive()["id"] == 2
    finally:
        code, rest = server.close()
    assert code == 0 and rest == ""
