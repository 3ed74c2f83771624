"""One agent session, one memdeck session: the MCP server joins the session its agent's hooks
record (found by the agent's process, or named in its environment), so the session log holds
the hook's injection, the agent's calls and its memories in order; a `/clear` (a new session
from the hook) is followed."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the memdeck[mcp] extra")

from store import Store  # noqa: E402
from tests.tui.mcp_server.test_mcp_live import Server  # noqa: E402
from tui.cli.hook_wire import parent_of  # noqa: E402
from tui.mcp_server.agent_session import AgentSession  # noqa: E402

pytestmark = pytest.mark.both_backends


def test_the_session_named_in_the_environment_is_the_servers(store):
    store.add("Refunds are paid from the ledger service", type="context")
    agent = AgentSession(lambda: store, environ={"CLAUDE_CODE_SESSION_ID": "0f5e-agent"})
    try:
        agent.search("refunds")
        made = agent.remember("Refund ids are UUIDv7", type="convention")
    finally:
        agent.close()
    assert agent.session_id == "0f5e-agent"
    assert store.get(made["id"]).session_id == "0f5e-agent"
    assert [a.kind for a in store.sessions.activities("0f5e-agent")] == ["lookup", "memory_created"]
    assert store.sessions.get("0f5e-agent").ended_at is not None


def test_without_an_agent_session_the_server_makes_its_own(store):
    agent = AgentSession(lambda: store, environ={})
    try:
        agent.search("anything")
    finally:
        agent.close()
    assert agent.session_id.startswith("mcp-")


def test_parent_of_reads_the_process_tree():
    assert parent_of(os.getpid()) == os.getppid()
    assert parent_of(2 ** 30) is None


@pytest.mark.slow
def test_hooks_and_the_mcp_server_of_one_agent_are_one_session(db_path, tmp_path, run_cli_process):
    def hook(session_id: str) -> None:
        payload = json.dumps({"session_id": session_id, "hook_event_name": "SessionStart", "source": "startup",
                              "cwd": str(tmp_path)})
        result = run_cli_process("--project", "shop", "hook", "session-start", "--task", "refunds", input=payload)
        assert result.returncode == 0, result.stderr

    with Store.open(db_path, project="shop") as store:
        known = store.add("Refunds over 500 EUR need a second approver", type="decision", tags=["refunds"]).memory
    hook("7c1d-first")  # Claude Code starts its hooks and its MCP server as its own children
    server = Server(db_path, tmp_path, "--project", "shop")
    try:
        server.initialize()
        assert known.id in server.data("context", task="Add partial refunds", hat="creator")["ids"]
        made = server.data("remember", content="Partial refunds reuse the original payment intent",
                           type="pattern")["id"]
        server.data("feedback", id=known.id, verdict="helpful")
        hook("9e2a-after-clear")  # /clear: the agent's new session
        server.data("search", query="payment intent")
        assert server.close() == 0
    finally:
        if server.process.poll() is None:
            server.process.kill()
    with Store.open(db_path, project="shop") as store:
        first = store.sessions.activities("7c1d-first")
        assert [a.kind for a in first] == ["injected", "injected", "memory_created", "feedback"]
        assert store.get(made).session_id == "7c1d-first"
        (helpful,) = [e for e in store.events(known.id) if e.detail.get("verdict") == "helpful"]
        assert helpful.session_id == "7c1d-first"
        assert [a.kind for a in store.sessions.activities("9e2a-after-clear")] == ["injected", "lookup"]
        assert store.sessions.get("7c1d-first").agent == "claude-code"
        assert not [s for s in store.sessions.recent("shop") if s.id.startswith("mcp-")]


def test_a_hook_outside_the_agents_process_is_not_joined(db_path, tmp_path):
    with Store.open(db_path, project="shop") as store:
        store.sessions.ensure("someone-else", project="shop", meta={"via": "hook", "pids": [1]})
        agent = AgentSession(lambda: store, environ={})
        agent.default_project = "shop"
        try:
            agent.search("anything")
        finally:
            agent.close()
    assert agent.session_id.startswith("mcp-")
