"""`memdeck mcp`: every tool through the SDK's in-process client on a real store, the project
each call lands in, errors as answers, feedback's effect on confidence and history, the MCP
session in the session log, and the real server as a subprocess speaking JSON-RPC on stdio."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the memdeck[mcp] extra")

import mcp.types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from store import Config, Store  # noqa: E402
from store.browse.search import MemoryFilter, search  # noqa: E402
from store.engine.session_log import summaries  # noqa: E402
from store.engine.vocabulary import Vocabulary  # noqa: E402
from tests.cli_support import memdeck_command  # noqa: E402
from tui.mcp_server.agent_session import AgentSession  # noqa: E402
from tui.mcp_server.server import build_server  # noqa: E402
from tui.testing import SIZE, demo_app, settle  # noqa: E402
from tui.widgets.activity_log import ActivityLog  # noqa: E402

pytestmark = pytest.mark.both_backends

TYPES = Vocabulary.from_config(Config.defaults()).types


@pytest.fixture
def agent(store):
    session = AgentSession(lambda: store)
    yield session
    session.close()


def serve(agent, script, *, pinned=False, **client_options):
    """Run `script(client)` against a server over `agent`; its return value is returned."""
    server = build_server(agent, types=TYPES, pinned=pinned)

    async def main():
        async with Client(server, **client_options) as client:
            return await script(client)

    return anyio.run(main)


def answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[-1].text)


def error_text(result) -> str:
    assert result.is_error
    return result.content[0].text


def call(agent, tool, **arguments):
    async def script(client):
        return await client.call_tool(tool, arguments)

    return serve(agent, script)


# -- the tools -----------------------------------------------------------------------------------

def test_tools_list_names_the_contract_and_stays_under_4_kb(agent):
    async def script(client):
        return await client.list_tools()

    listed = serve(agent, script)
    size = len(json.dumps(listed.model_dump(by_alias=True, mode="json", exclude_none=True)))
    assert size <= 4096
    schemas = {t.name: t.input_schema for t in listed.tools}
    assert set(schemas) == {"search", "context", "remember", "get", "feedback"}
    assert set(schemas["search"]["properties"]) == {"query", "type", "hat", "limit", "project"}
    assert set(schemas["context"]["properties"]) == {"task", "hat", "paths", "budget", "project"}
    assert set(schemas["remember"]["properties"]) == {"content", "type", "title", "tags", "paths", "hat",
                                                      "scope", "project"}
    assert set(schemas["get"]["properties"]) == {"id", "project"}
    assert set(schemas["feedback"]["properties"]) == {"id", "verdict", "note", "replacement", "project"}
    assert schemas["feedback"]["properties"]["verdict"]["enum"] == ["helpful", "wrong", "outdated", "not_relevant"]
    assert schemas["remember"]["required"] == ["content", "type"]
    assert all(t.output_schema is None for t in listed.tools)


def test_remember_stores_a_memory_and_a_repeat_reinforces_it(agent, store):
    async def script(client):
        first = answer(await client.call_tool("remember", {
            "content": "Retry backoff must cap at 60 s", "type": "fix", "tags": ["retry"],
            "paths": ["net/retry.py"], "hat": "creator", "scope": "net"}))
        again = answer(await client.call_tool("remember", {
            "content": "retry backoff must cap at 60 s", "type": "error_solution", "scope": "net"}))
        return first, again

    first, again = serve(agent, script)
    assert first["action"] == "created" and again["action"] == "reinforced"
    assert again["id"] == first["id"] and again["confidence"] > first["confidence"]
    memory = store.get(first["id"])
    assert (memory.source, memory.status, memory.type, memory.hat) == ("explicit", "active", "fix", "creator")
    assert memory.tags == ("retry",) and memory.file_refs == ("net/retry.py",)
    assert memory.session_id == agent.session_id
    assert [e.kind for e in store.events(memory.id)] == ["created", "reinforced"]


def test_search_answers_active_matches_best_first_with_a_snippet(agent, store):
    long = store.add("Webhook retries must be idempotent: dedupe on the delivery id. " * 5,
                     type="pitfall", title="Webhook retries must be idempotent").memory
    short = store.add("Retries of the payment webhook are logged", type="context").memory
    store.add("Webhook retries are disabled here", type="context", project="elsewhere")
    hidden = store.add("Webhook retry notes, rejected", type="context").memory
    store.trash.delete([hidden.id])
    parked = store.add("Webhook retries were once manual", type="context", status="inactive").memory

    found = answer(call(agent, "search", query="webhook retries", limit=5))
    assert found["project"] == "demo"
    ranked = search(store, "webhook retries", MemoryFilter(statuses=("active",)), limit=5)
    assert [m["id"] for m in found["memories"]] == [h.memory.id for h in ranked]
    assert set(m["id"] for m in found["memories"]) == {long.id, short.id}  # not trashed, inactive, elsewhere
    assert parked.id not in [m["id"] for m in found["memories"]]
    by_id = {m["id"]: m for m in found["memories"]}
    assert set(by_id[long.id]) == {"id", "type", "title", "confidence", "snippet", "layer"}
    assert len(by_id[long.id]["snippet"]) == 160 and by_id[long.id]["snippet"].endswith("…")
    assert by_id[short.id]["snippet"] == short.content
    only_fixes = answer(call(agent, "search", query="webhook retries", type="fix"))
    assert only_fixes["memories"] == []


def test_context_is_primes_block_and_records_use(agent, store):
    """The block prime makes; the memory about the task is used, and the filler after it (the
    room left, `injection.gate.fill`) is in the block and the activity but not used."""
    wanted = store.add("Retry backoff must cap at 60 s in the webhook sender", type="fix").memory
    filler = store.add("The UI uses Textual themes", type="convention").memory
    # Filler whenever the task is on topic (by default only when the gate is sure: issue 25).
    store.config = store.config.with_overrides({"injection.gate.fill_strength": 1.0})

    async def script(client):
        return await client.call_tool("context", {"task": "webhook retry backoff", "hat": "creator"})

    result = serve(agent, script)
    block, data = result.content[0].text, answer(result)
    assert block.index("Retry backoff must cap at 60 s") < block.index("Textual")
    assert data["ids"] == [wanted.id, filler.id] and 0 < data["tokens"] <= data["budget"] == 2000
    used = store.get(wanted.id)
    # A use, not evidence: an injection counts and dates the use, and leaves confidence as it
    # was (issue 40: confidence rises when a memory is wanted, not when it is shown).
    assert used.use_count == 1 and used.confidence == wanted.confidence and used.last_used_at is not None
    assert [e.kind for e in store.events(wanted.id)][-1] == "used"
    unused = store.get(filler.id)
    assert unused.use_count == 0 and unused.confidence == filler.confidence and unused.last_used_at is None
    assert "used" not in [e.kind for e in store.events(filler.id)]
    injected = [a for a in store.sessions.activities(agent.session_id) if a.kind == "injected"]
    assert injected and injected[0].detail["ids"] == [wanted.id, filler.id]
    assert injected[0].detail["filler"] == [filler.id]


def test_get_answers_the_whole_memory_with_its_history(agent, store):
    memory = store.add("Never run migrations on a read replica", type="constraint").memory
    store.record_usage([memory.id])
    got = answer(call(agent, "get", id=memory.id))
    assert got["content"] == memory.content and got["type"] == "constraint"
    assert [e["kind"] for e in got["history"]] == ["created", "used"]


def test_a_memory_is_a_resource_and_prime_is_a_prompt(agent, store):
    memory = store.add("Retry backoff must cap at 60 s", type="fix", title="Backoff cap").memory

    async def script(client):
        resource = await client.read_resource(f"memdeck://memory/{memory.id}")
        templates = await client.list_resource_templates()
        prompt = await client.get_prompt("prime", {"task": "retry backoff", "hat": "creator"})
        return resource, templates, prompt

    resource, templates, prompt = serve(agent, script)
    text = resource.contents[0].text
    assert text.startswith("# Backoff cap\n") and "Retry backoff must cap at 60 s" in text and "created" in text
    assert [t.uri_template for t in templates.resource_templates] == ["memdeck://memory/{id}"]
    assert "Retry backoff must cap at 60 s" in prompt.messages[0].content.text


# -- feedback ----------------------------------------------------------------------------------------

def test_helpful_feedback_is_a_use_with_the_note_in_history(agent, store):
    memory = store.add("Pin the Postgres image tag", type="convention").memory
    data = answer(call(agent, "feedback", id=memory.id, verdict="helpful", note="saved a rebuild"))
    after = store.get(memory.id)
    assert data["confidence_before"] == memory.confidence and data["confidence"] == after.confidence
    assert after.confidence == pytest.approx(memory.confidence + 0.02) and after.use_count == 1
    event = store.events(memory.id)[-1]
    assert (event.kind, event.session_id) == ("used", agent.session_id)
    assert event.detail == {"verdict": "helpful", "note": "saved a rebuild"}


def test_wrong_feedback_lowers_confidence_and_takes_a_memory_out_of_use(agent, store):
    memory = store.add("The cache TTL is 5 minutes", type="context", actor="mcp").memory  # 0.6, an agent's
    first = answer(call(agent, "feedback", id=memory.id, verdict="wrong", note="it is 10 minutes now"))
    assert (first["confidence"], first["status"]) == (pytest.approx(0.4), "active")
    second = answer(call(agent, "feedback", id=memory.id, verdict="wrong"))
    assert (second["confidence"], second["status"]) == (pytest.approx(0.2), "inactive")
    events = [e for e in store.events(memory.id) if e.kind == "contradicted"]
    assert [(e.confidence_before, e.confidence_after) for e in events] == [(0.6, pytest.approx(0.4)),
                                                                            (pytest.approx(0.4), pytest.approx(0.2))]
    assert events[0].detail == {"verdict": "wrong", "note": "it is 10 minutes now"}
    assert events[1].detail["status"] == "inactive"


def test_a_protected_memory_keeps_its_confidence_when_judged_wrong(agent, store):
    memory = store.add("Deploys need two approvals", type="constraint", actor="mcp").memory
    store.edit(memory.id, protected=True, actor="mcp")
    data = answer(call(agent, "feedback", id=memory.id, verdict="wrong", note="one was enough"))
    assert data["confidence"] == memory.confidence and data["held_because"] == "it is protected: a person decides"
    judged = store.events(memory.id)[-1]
    assert (judged.kind, judged.detail["held"]) == ("judged", data["held"])
    assert store.get(data["held"]).status == "pending"


def test_outdated_feedback_with_a_replacement_supersedes_the_memory_once_a_person_accepts_it(agent, store):
    from store.engine.curation import Curator

    old = store.add("Deploy with fabric", type="decision", scope="deploy", tags=["ops"], actor="mcp").memory
    data = answer(call(agent, "feedback", id=old.id, verdict="outdated", note="moved to CI",
                       replacement="Deploy from CI with the release workflow"))
    new = store.get(data["held"])  # in the inbox: an agent's replacement text is reviewed first
    assert (new.status, new.content, store.get(old.id).status) == ("pending", "Deploy from CI with the release workflow", "active")
    Curator(store, actor="ui").set_status([new.id], "active")
    new = store.get(new.id)
    after = store.get(old.id)
    assert (after.status, after.confidence, after.meta["superseded_by"]) == ("inactive", 0.3, new.id)
    assert (new.type, new.scope, new.tags, new.status) == ("decision", "deploy", ("ops",), "active")
    superseded = store.events(old.id)[-1]
    assert superseded.kind == "superseded" and superseded.detail["note"] == "moved to CI"


def test_outdated_feedback_without_a_replacement_is_a_contradiction(agent, store):
    memory = store.add("Staging runs on Heroku", type="context", actor="mcp").memory
    data = answer(call(agent, "feedback", id=memory.id, verdict="outdated"))
    assert data["confidence"] == pytest.approx(0.4)
    assert store.events(memory.id)[-1].detail == {"verdict": "outdated"}


# -- errors are answers ------------------------------------------------------------------------------

def test_bad_calls_are_tool_errors_and_the_server_goes_on(agent, store):
    memory = store.add("Pin the Postgres image tag", type="convention").memory

    async def script(client):
        errors = [
            await client.call_tool("get", {"id": "mem-0000000000-dead"}),
            await client.call_tool("feedback", {"id": "nope", "verdict": "helpful"}),
            await client.call_tool("remember", {"content": "Something", "type": "nonsense"}),
            await client.call_tool("remember", {"content": "   ", "type": "fix"}),
            await client.call_tool("feedback", {"id": memory.id, "verdict": "meh"}),
            await client.call_tool("feedback", {"id": memory.id, "verdict": "wrong", "replacement": "x"}),
            await client.call_tool("search", {"query": "postgres", "limit": 0}),
            await client.call_tool("search", {"query": "  "}),
            await client.call_tool("search", {"query": "postgres", "limit": "many"}),
            await client.call_tool("context", {"task": "x", "budget": -5}),
            await client.call_tool("get", {"id": memory.id, "project": "elsewhere"}),
        ]
        still = await client.call_tool("search", {"query": "postgres"})
        return errors, still

    errors, still = serve(agent, script)
    texts = [error_text(e) for e in errors]
    assert "no memory with id 'mem-0000000000-dead'" in texts[0]
    assert "no memory with id 'nope'" in texts[1]
    assert "unknown type 'nonsense'" in texts[2] and "pitfall" in texts[2]
    assert "needs some content" in texts[3]
    assert "verdict" in texts[4]
    assert "replacement goes with the verdict outdated" in texts[5]
    assert "limit must be from 1 to 100" in texts[6]
    assert "query must have some words" in texts[7]
    assert "limit" in texts[8]
    assert "budget must be a positive number" in texts[9]
    assert "belongs to project 'demo', not 'elsewhere'" in texts[10]
    assert [m["id"] for m in answer(still)["memories"]] == [memory.id]
    assert store.get(memory.id).confidence == memory.confidence  # no failed call changed it
    logged = [a.summary for a in store.sessions.activities(agent.session_id) if a.kind == "tool_error"]
    assert any("unknown type 'nonsense'" in s for s in logged)


def test_a_damaged_store_is_an_answer_to_every_call(tmp_path):
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84 + b"garbage" * 100)
    agent = AgentSession(lambda: Store.open(damaged, project="demo"))

    async def script(client):
        first = await client.call_tool("search", {"query": "anything"})
        listed = await client.list_tools()
        second = await client.call_tool("remember", {"content": "x", "type": "fix"})
        return first, listed, second

    first, listed, second = serve(agent, script)
    assert "damaged" in error_text(first) and "left untouched" in error_text(first)
    assert len(listed.tools) == 5
    assert "damaged" in error_text(second)
    assert damaged.read_bytes().endswith(b"garbage")


@pytest.mark.sqlite_only  # about the store file itself
def test_a_busy_store_is_an_answer_naming_the_lock(agent, store, db_path):
    blocker = sqlite3.connect(db_path, timeout=0)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        agent._open_store = lambda: _with_short_busy_timeout(store)
        text = error_text(call(agent, "remember", content="Pin the Postgres image tag", type="convention"))
    finally:
        blocker.rollback()
        blocker.close()
    assert "the store is busy" in text and "nothing was changed" in text


def _with_short_busy_timeout(store):
    # Tool calls run in worker threads with their own connections; a short wait keeps the test quick.
    store.db.execute_sql("PRAGMA busy_timeout = 50")
    return store


# -- the project -----------------------------------------------------------------------------------

def test_without_a_project_calls_use_the_servers_and_with_one_that_one(agent, store):
    here = answer(call(agent, "remember", content="Use uv for installs", type="convention"))
    there = answer(call(agent, "remember", content="Use poetry for installs", type="convention",
                        project="billing"))
    assert (here["project"], there["project"]) == ("demo", "billing")
    assert store.get(there["id"]).project == "billing"
    found = answer(call(agent, "search", query="installs", project="billing"))
    assert [m["id"] for m in found["memories"]] == [there["id"]]


def _git_repo(path: Path) -> Path:
    (path / ".git").mkdir(parents=True)
    (path / "src").mkdir()
    return path


def _roots(*folders: Path):
    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{f}") for f in folders])

    return list_roots


def test_the_clients_root_names_the_project(agent, store, tmp_path):
    repo = _git_repo(tmp_path / "payments-api")

    async def script(client):
        return answer(await client.call_tool("remember", {"content": "Amounts are integer cents",
                                                          "type": "convention"}))

    # Roots need a back-channel: the initialize handshake, as Claude Code speaks it.
    stored = serve(agent, script, mode="legacy", list_roots_callback=_roots(repo / "src"))
    assert stored["project"] == "payments-api"
    assert store.sessions.get(agent.session_id).project == "payments-api"


def test_a_pinned_project_wins_over_the_clients_root(agent, tmp_path):
    repo = _git_repo(tmp_path / "payments-api")

    async def script(client):
        return answer(await client.call_tool("remember", {"content": "Amounts are integer cents",
                                                          "type": "convention"}))

    stored = serve(agent, script, pinned=True, mode="legacy", list_roots_callback=_roots(repo))
    assert stored["project"] == "demo"


# -- the session ---------------------------------------------------------------------------------------

def test_an_mcp_connection_is_a_session_whose_log_shows_each_call(agent, store):
    known = store.add("Retry backoff must cap at 60 s", type="fix").memory

    async def script(client):
        await client.call_tool("search", {"query": "retry"})
        await client.call_tool("context", {"task": "retry backoff"})
        await client.call_tool("remember", {"content": "Jitter the backoff", "type": "fix"})
        await client.call_tool("get", {"id": known.id})
        await client.call_tool("feedback", {"id": known.id, "verdict": "helpful"})
        await client.call_tool("get", {"id": "missing"})

    serve(agent, script, client_info=types.Implementation(name="claude-code", version="2.0"))
    agent.close()
    log = store.sessions.activities(agent.session_id)
    assert [a.kind for a in log] == ["lookup", "injected", "memory_created", "lookup", "feedback", "tool_error"]
    assert log[4].memory_id == known.id and log[4].summary.startswith("helpful")
    (listed,) = summaries(store)
    assert listed.session.id == agent.session_id and listed.session.agent == "claude-code"
    assert listed.created == 1 and listed.errors == 1 and not listed.live


# -- the real server ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_memdeck_mcp_speaks_json_rpc_on_stdio_and_exits_when_stdin_closes(db_path, tmp_path):
    repo = _git_repo(tmp_path / "payments-api")
    env = {k: v for k, v in os.environ.items() if k != "MEMDECK_PROJECT"} | {"MEMDECK_DB": str(db_path)}
    server = subprocess.Popen([*memdeck_command(), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=repo / "src")

    def send(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    def receive():
        line = server.stdout.readline()
        assert line, server.stderr.read()
        return json.loads(line)

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "claude-code", "version": "2.0"}}})
        initialized = receive()
        assert initialized["result"]["serverInfo"]["name"] == "memdeck"
        assert initialized["result"]["serverInfo"]["version"] == importlib.metadata.version("memdeck") != ""
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = receive()
        assert [t["name"] for t in listed["result"]["tools"]] == ["search", "context", "remember", "get", "feedback"]
        assert len(json.dumps(listed)) <= 4096
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "remember", "arguments": {"content": "Use uv for installs", "type": "convention"}}})
        stored = receive()["result"]
        assert stored["isError"] is False
        memory_id, project = (json.loads(stored["content"][0]["text"])[k] for k in ("id", "project"))
        assert project == "payments-api"  # the git root of the server's working directory
        send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
              "params": {"name": "get", "arguments": {"id": "missing"}}})
        failed = receive()["result"]
        assert failed["isError"] is True and "no memory with id 'missing'" in failed["content"][0]["text"]
    finally:
        server.stdin.close()
    assert server.wait(timeout=30) == 0
    assert server.stdout.read() == ""  # nothing but protocol on stdout, and nothing after the end
    with Store.open(db_path, project="demo") as store:
        memory = store.get(memory_id)
        session = store.sessions.get(memory.session_id)
    assert session.agent == "claude-code" and session.ended_at is not None


@pytest.mark.slow
def test_memdeck_mcp_ends_its_session_and_exits_on_sigterm(db_path, tmp_path):
    env = {**os.environ, "MEMDECK_DB": str(db_path)}
    server = subprocess.Popen([*memdeck_command(), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "claude-code", "version": "2.0"}}},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "search", "arguments": {"query": "anything"}}}):
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            assert json.loads(server.stdout.readline())["id"] == message["id"]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0  # stdin still open: the signal alone ends it
    finally:
        if server.poll() is None:
            server.kill()
    with Store.open(db_path, project="demo") as store:
        (session,) = store.sessions.recent()
    assert session.ended_at is not None


@pytest.mark.slow
def test_memdeck_mcp_without_the_sdk_says_which_extra_to_install(run_cli_process, tmp_path):
    blocker = tmp_path / "no-mcp"
    blocker.mkdir()
    (blocker / "mcp.py").write_text("raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n")
    result = run_cli_process("mcp", env={"PYTHONPATH": str(blocker)})
    assert result.returncode == 1
    assert "pip install 'memdeck[mcp]'" in result.stderr


def test_resource_and_prompt_errors_are_protocol_errors_with_the_message(agent, tmp_path):
    async def script(client):
        with pytest.raises(MCPError, match="no memory with id 'missing'"):
            await client.read_resource("memdeck://memory/missing")
        return True

    assert serve(agent, script)
    foreign = tmp_path / "foreign.db"
    foreign.write_bytes(b"not a store " * 20)

    async def prime(client):
        with pytest.raises(MCPError, match="not a memdeck store"):
            await client.get_prompt("prime", {"task": "anything"})
        return True

    assert serve(AgentSession(lambda: Store.open(foreign, project="demo")), prime)


def test_the_workbench_session_log_shows_the_agents_calls(db_path, clock):
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        known = store.add("Retry backoff must cap at 60 s", type="fix", actor="mcp").memory
        agent = AgentSession(lambda: store)

        async def script(client):
            await client.call_tool("search", {"query": "retry backoff"})
            await client.call_tool("feedback", {"id": known.id, "verdict": "wrong", "note": "it is 30 s"})

        serve(agent, script)
        agent.close()

    async def flow():
        app = demo_app(db_path, project="demo", build=False, clock=clock)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.open_sessions(agent.session_id)
            await settle(pilot)
            log = app.screen.query_one(ActivityLog)
            for _ in range(100):
                if len(log.activities) == 2:
                    break
                await pilot.pause(0.05)
            return [log.render_line(y).text for y in range(2)]

    lines = asyncio.run(flow())
    assert "⌕ lookup" in lines[0] and "searched 'retry backoff': 1 found" in lines[0]
    assert "± feedback" in lines[1] and f"wrong {known.id}: 0.60 → 0.40" in lines[1]
