"""`memdeck mcp` as a long-lived process: one real server subprocess, spoken to over stdio
JSON-RPC as Claude Code speaks to it, while other processes (`memdeck add`, `edit`, `delete`)
write to the same store; every answer must reflect the store at that moment, on both back-ends."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the memdeck[mcp] extra")

from store import Store  # noqa: E402
from tests.cli_support import memdeck_command  # noqa: E402

pytestmark = [pytest.mark.both_backends, pytest.mark.slow]

TASK = "Add partial refunds to the checkout service"


class Server:
    """A `memdeck mcp` subprocess and the JSON-RPC calls made to it."""

    def __init__(self, db_path, cwd, *args: str, env: dict | None = None) -> None:
        full_env = {k: v for k, v in os.environ.items() if k not in ("MEMDECK_PROJECT", "MEMDECK_SESSION", "CLAUDE_CODE_SESSION_ID")}
        full_env |= {"MEMDECK_DB": str(db_path), **(env or {})}
        self.process = subprocess.Popen([*memdeck_command(), *args, "mcp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=full_env, cwd=cwd)
        self.next_id = 0
        self.calls = 0

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})})
        line = self.process.stdout.readline()
        assert line, self.process.stderr.read()
        answer = json.loads(line)
        assert answer["id"] == self.next_id
        return answer

    def _send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def initialize(self) -> dict:
        answer = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "claude-code", "version": "2.1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer["result"]

    def tool(self, name: str, **arguments) -> list[str]:
        """The text blocks of a successful call."""
        self.calls += 1
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        texts = [c["text"] for c in result["content"]]
        assert result["isError"] is False, texts
        return texts

    def data(self, name: str, **arguments) -> dict:
        return json.loads(self.tool(name, **arguments)[-1])

    def error(self, name: str, **arguments) -> str:
        self.calls += 1
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        assert result["isError"] is True
        return result["content"][0]["text"]

    def close(self) -> int:
        self.process.stdin.close()
        code = self.process.wait(timeout=60)
        self.process.stdout.close()
        self.process.stderr.close()
        return code


@pytest.fixture
def server(db_path, tmp_path):
    started = Server(db_path, tmp_path, "--project", "shop")
    try:
        yield started
    finally:
        if started.process.poll() is None:
            started.process.kill()
            started.process.wait()


@pytest.fixture
def other(run_cli):
    """Another process writing to the store: the `memdeck` command, in project shop."""

    def run(*args: str) -> str:
        result = run_cli("--project", "shop", *args)
        assert result.returncode == 0, result.stderr
        return result.stdout

    return run


def test_what_the_agent_remembers_is_in_its_next_context(server):
    server.initialize()
    assert server.data("context", task=TASK, hat="creator")["ids"] == []
    remembered = server.data("remember", content="Checkout totals must be computed in integer cents; "
                                                 "float rounding broke refunds", type="pitfall",
                             tags=["money", "checkout"])
    assert remembered["action"] == "created" and remembered["project"] == "shop"
    block, answer = server.tool("context", task=TASK, hat="creator")
    assert json.loads(answer)["ids"] == [remembered["id"]] and "integer cents" in block
    assert server.close() == 0


@pytest.mark.slow
def test_a_twenty_call_session_sees_the_store_as_it_is_at_each_call(server, other, db_path):
    server.initialize()
    # 1-3: the agent remembers, and its next context and search have it.
    cents = server.data("remember", content="Checkout totals must be computed in integer cents; "
                                            "float rounding broke refunds", type="pitfall",
                        tags=["money", "checkout"])["id"]
    assert cents in server.data("context", task=TASK, hat="creator")["ids"]
    assert [m["id"] for m in server.data("search", query="integer cents")["memories"]] == [cents]
    # 4-5: another process adds a memory: the next context has it.
    approver = json.loads(other("add", "Refunds over 500 EUR need a second approver before the "
                                       "checkout service pays them out", "--type", "decision",
                                "--tags", "refunds,checkout", "--json"))["id"]
    assert {cents, approver} <= set(server.data("context", task=TASK, hat="creator")["ids"])
    # 6-7: another process edits the agent's memory: the next context and search show the new text.
    other("edit", cents, "--content", "Checkout totals must be computed in integer cents, never "
                                      "floats: float rounding broke partial refunds")
    block = server.tool("context", task=TASK, hat="creator")[0]
    assert "never floats" in block
    assert "never floats" in server.data("search", query="integer cents")["memories"][0]["snippet"]
    # 8-11: the agent remembers another, judges it wrong twice: it leaves the next context.
    flaky = server.data("remember", content="Partial refunds of the checkout service are sent "
                                            "through the legacy ledger queue", type="context",
                        tags=["refunds"])["id"]
    assert flaky in server.data("context", task=TASK, hat="creator")["ids"]
    server.data("feedback", id=flaky, verdict="wrong", note="the ledger queue is gone")
    judged = server.data("feedback", id=flaky, verdict="wrong", note="really gone")
    assert judged["status"] == "inactive"
    # 12: its context no longer has it.
    assert flaky not in server.data("context", task=TASK, hat="creator")["ids"]
    # 13-14: helpful on the approver memory: its confidence rises, as `get` says at once.
    before = server.data("get", id=approver)["confidence"]
    server.data("feedback", id=approver, verdict="helpful")
    assert server.data("get", id=approver)["confidence"] > before
    # 15-17: another process deletes it: search, context and get no longer find it.
    other("delete", approver)
    assert server.data("search", query="second approver")["memories"] == []
    assert approver not in server.data("context", task=TASK, hat="creator")["ids"]
    assert "in the trash" in server.error("get", id=approver)
    # 18-19: another process restores it: it is back.
    other("restore", approver)
    assert [m["id"] for m in server.data("search", query="second approver")["memories"]] == [approver]
    assert approver in server.data("context", task=TASK, hat="creator")["ids"]
    # 20-22: another process adds a memory the task only brushes; judged not relevant, it
    # leaves the same task's context, its confidence unchanged.
    banner = json.loads(other("add", "The refunds page of the checkout service has a banner translated through the marketing CMS",
                              "--type", "context", "--json"))["id"]
    assert banner in server.data("context", task=TASK, hat="creator")["ids"]
    judged = server.data("feedback", id=banner, verdict="not_relevant")
    assert judged["confidence"] == judged["confidence_before"] and judged["status"] == "active"
    assert banner not in server.data("context", task=TASK, hat="creator")["ids"]
    # 23-24: outdated with a replacement, on a memory a person wrote: held in the inbox for a
    # person; the memory stays in use meanwhile.
    held = server.data("feedback", id=approver, verdict="outdated",
                       replacement="Refunds over 1000 EUR need a second approver")
    assert held["status"] == "active" and "held" in held
    assert approver in server.data("context", task=TASK, hat="creator")["ids"]
    # The edited memory, in full, with the other process's edit in its history.
    got = server.data("get", id=cents)
    assert "never floats" in got["content"] and [e["kind"] for e in got["history"]][:2] == ["created", "used"]
    assert "edited" in [e["kind"] for e in got["history"]]
    assert server.calls >= 20
    assert server.close() == 0
    with Store.open(db_path, project="shop") as store:
        assert store.get(flaky).status == "inactive"
        assert store.get(approver).status == "active"
        assert "never floats" in store.get(cents).content
        assert store.get(held["held"]).status == "pending"
        assert store.get(banner).meta["not_relevant"][0]["task"] == TASK
