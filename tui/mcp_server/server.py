"""The MCP server of `memdeck mcp`, on the official SDK's `MCPServer`: five tools, a resource per
memory (`memdeck://memory/{id}`) and a `prime` prompt, over `AgentSession`.

Store work runs in a worker thread, one call at a time, so a slow or busy store never stops the
server from reading its input (and noticing that stdin closed). memdeck's errors become tool
errors: the agent reads the message, the server goes on.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations to build their
# schemas, and postponed ones could not see the closure's `types`.
import functools
import warnings
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Protocol
from urllib.parse import unquote, urlparse

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR
from pydantic import Field

from store.api import clean_field, MemdeckError, VERDICTS, folder_project
from tui.mcp_server.agent_session import AgentSession, shortened
from tui.mcp_server.about import INSTRUCTIONS, package_version
from tui.mcp_server.schemas import compact_schema, result_text



class Wire(Protocol):
    """The protocol's input and output as the SDK reads and writes them (`tui.mcp_server.early.Wire`
    is it: early imports this module on a thread, so it is named by what it does)."""

    def streams(self) -> tuple[Any, Any]: ...

Verdict = Literal[VERDICTS]  # type: ignore[valid-type]
AGENT_CHARS = 64


def build_server(session: AgentSession, *, types: tuple[str, ...], pinned: bool = False) -> MCPServer:
    """The server for `session`. `types` are the memory types `remember` offers; `pinned`: the
    user chose the project (`--project`, `MEMDECK_PROJECT`), so the client's roots are not asked."""
    limiter = anyio.CapacityLimiter(1)
    client = _Client(session, pinned=pinned)

    async def in_thread(ctx: Context | None, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if ctx is not None:
            await client.meet(ctx)
        try:
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=limiter)
        except MemdeckError as exc:
            # A message may quote an argument back: never a whole megabyte of it.
            raise ToolError(shortened(str(exc), 1_000)) from None

    async def search(
        query: str,
        type: Annotated[str | None, Field(description="e.g. fix, pitfall, decision")] = None,
        hat: str | None = None,
        limit: int = 10,
        project: str | None = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> str:
        return result_text(await in_thread(ctx, session.search, query, type, hat, limit, project))

    async def context(
        task: str,
        hat: Annotated[str | None, Field(description="your role: explorer, planner, creator, critic, editor")] = None,
        paths: Annotated[list[str] | None, Field(description="files in play")] = None,
        budget: Annotated[int | None, Field(description="tokens (default: the project's setting)")] = None,
        project: str | None = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> list[str]:
        answer = await in_thread(ctx, session.context, task, hat, paths, budget, project)
        block = answer.pop("block") or "(no memory is relevant enough to inject for this task)"
        return [block, result_text(answer)]

    async def remember(
        content: str,
        type: Annotated[str, Field(description=", ".join(types))],
        title: str | None = None,
        tags: list[str] | None = None,
        paths: Annotated[list[str] | None, Field(description="files it is about")] = None,
        hat: str | None = None,
        scope: Annotated[str | None, Field(description="service or component")] = None,
        project: str | None = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> str:
        return result_text(await in_thread(ctx, session.remember, content, type, title, tags, paths,
                                           hat, scope, project))

    async def get(id: str, project: str | None = None, ctx: Context = None) -> str:  # type: ignore[assignment]
        return result_text(await in_thread(ctx, session.get, id, project))

    async def feedback(
        id: str,
        verdict: Verdict,
        note: Annotated[str | None, Field(description="why; kept in its history")] = None,
        replacement: Annotated[str | None, Field(description="outdated: the text that replaces it")] = None,
        project: str | None = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> str:
        return result_text(await in_thread(ctx, session.feedback, id, verdict, note, replacement, project))

    descriptions = {
        search: "Search this project's memories by text. Returns id, type, title, confidence and a "
                "snippet of each, best first.",
        context: "The memories worth knowing for a task, as a prompt block within a token budget "
                 "(what memdeck injects at session start), and their ids. Call it when the task "
                 "changes. Counts as a use of each memory.",
        remember: "Store a learning for future sessions: something non-obvious found, decided or "
                  "fixed. Repeating a known memory reinforces it. Returns the id and created or "
                  "reinforced.",
        get: "One memory in full, with its history of confidence changes.",
        feedback: "Judge a memory you were given: helpful (confidence rises a little), wrong "
                  "(confidence drops; low enough, it is no longer injected), "
                  "outdated (give the replacement text: it supersedes the memory) or "
                  "not_relevant (right, but not for this task: left out of similar tasks' context).",
    }
    tools = []
    for fn, description in descriptions.items():
        tool = Tool.from_function(fn, description=description, structured_output=False)
        tool.parameters = compact_schema(tool.parameters)
        tools.append(tool)
    server = MCPServer("memdeck", instructions=INSTRUCTIONS, tools=tools, log_level="WARNING",
                       version=package_version())  # `initialize` answers serverInfo.version

    @server.resource("memdeck://memory/{id}", name="memory", mime_type="text/markdown",
                     description="A memory and its history")
    async def memory(id: str) -> str:
        try:
            return await anyio.to_thread.run_sync(session.memory_text, id, limiter=limiter)
        except MemdeckError as exc:
            raise ResourceError(str(exc)) from None

    @server.prompt(name="prime", description="The project's memories for a hat and a task, as memdeck "
                                             "would inject them")
    async def prime(task: str = "", hat: str | None = None, ctx: Context = None) -> str:  # type: ignore[assignment]
        await client.meet(ctx)
        try:
            return await anyio.to_thread.run_sync(session.prime_block, hat, task, limiter=limiter)
        except MemdeckError as exc:
            # A prompt has no error result: a protocol error carries the message.
            raise MCPError(code=INTERNAL_ERROR, message=str(exc)) from None

    return server


def serve_stdio(server: MCPServer, wire: "Wire") -> None:
    """Run `server` on the wire (`tui.mcp_server.early`) until its input ends, as
    `MCPServer.run("stdio")` does, with one difference: a line that is not JSON gets JSON-RPC's
    parse error (-32700), and JSON that is not a JSON-RPC message its invalid request (-32600),
    with a null id and without the line quoted back. The SDK only logs such a line; a client
    waiting on an answer would wait for ever."""
    from mcp.server.stdio import stdio_server
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

    async def main() -> None:
        stdin, stdout = wire.streams()
        lowlevel = server._lowlevel_server
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            forward, messages = create_context_streams[SessionMessage | Exception](0)

            async def answer_malformed() -> None:
                async with forward:
                    async for item in read_stream:
                        if not isinstance(item, Exception):
                            await forward.send(item)
                            continue
                        kinds = {e.get("type") for e in getattr(item, "errors", lambda: [])()}
                        error = (ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
                                 if "json_invalid" in kinds else
                                 ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 message"))
                        await write_stream.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error)))

            async with anyio.create_task_group() as group:
                group.start_soon(answer_malformed)
                await lowlevel.run(messages, write_stream, lowlevel.create_initialization_options())
                group.cancel_scope.cancel()

    anyio.run(main)


def client_gone(exc: BaseException) -> bool:
    """Whether `exc` (an exception group, as anyio raises) says only that the client closed its
    end: a broken pipe on stdout, a stream closed under the server."""
    if isinstance(exc, BaseExceptionGroup):
        return all(client_gone(inner) for inner in exc.exceptions)
    return isinstance(exc, (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError,
                            anyio.ClosedResourceError))


class _Client:
    """What the server learns of its client at the first call: its name (the session's agent)
    and its MCP root, whose project is the default one unless the user pinned a project."""

    def __init__(self, session: AgentSession, *, pinned: bool) -> None:
        self.session = session
        self.pinned = pinned
        self.met = False

    async def meet(self, ctx: Context) -> None:
        if self.met:
            return
        self.met = True
        params = ctx.session.client_params
        name = clean_field(params.client_info.name) if params is not None and params.client_info is not None else None
        if name:
            # The client names itself: one clean line, as wide as the session's agent column.
            self.session.agent = name[:AGENT_CHARS]
        if not self.pinned:
            await self._ask_roots(ctx)

    async def _ask_roots(self, ctx: Context) -> None:
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None or not ctx.session.can_send_request:
            return
        try:
            with warnings.catch_warnings():
                # Roots are deprecated from protocol 2026-07-28; clients that speak an older one
                # still send them, and they name the project.
                warnings.simplefilter("ignore")
                with anyio.fail_after(5):
                    result = await ctx.session.list_roots()
        except Exception:  # a client that cannot answer leaves the server's own directory in charge
            return
        for root in result.roots:
            url = urlparse(str(root.uri))
            if url.scheme == "file":
                self.session.default_project = folder_project(Path(unquote(url.path)).resolve())[0]
                return
