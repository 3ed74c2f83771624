"""`memdeck mcp`'s first answer before the MCP SDK is loaded.

Importing the SDK takes most of a second, and a client waits for the `initialize` answer before
anything else. So the server starts importing the SDK on a thread at once, and meanwhile the
main thread reads the first line of stdin: a well-formed `initialize` request is answered right
away, from what the SDK would answer (the same protocol version negotiation, capabilities,
server info and instructions; `tests/tui/mcp_server/test_mcp_start.py` compares the two). The SDK then gets the
whole input from its first line on, as if nothing had happened, and its own answer to that
request is dropped from the output. Anything else first (another request, a malformed one)
is left for the SDK to answer.

Like the SDK's own stdio transport, the wire is moved off fds 0 and 1 while serving (fd 0 reads
/dev/null, fd 1 writes to stderr), so a child process (git, for anchors) or a stray print never
reads or writes protocol bytes.
"""

from __future__ import annotations

import json
import os
import select
import threading
from typing import Any, Callable

from tui.mcp_server.about import INSTRUCTIONS, package_version  # noqa: F401 (the early answer's)

# What memdeck's server says to every client; the SDK server is built with the same.
# The SDK's `mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS` (importing that module imports the
# whole of `mcp_types`): a requested version among them is answered as is, any other with the last.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The capabilities the SDK's server announces for memdeck's tools, resource template and prompt.
CAPABILITIES = {"prompts": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False},
                "tools": {"listChanged": False}}


def initialize_result(params: Any) -> dict | None:
    """The SDK's answer to an `initialize` with these params; None when they are not valid (the
    SDK then answers, with its error)."""
    if not isinstance(params, dict):
        return None
    info, requested = params.get("clientInfo"), params.get("protocolVersion")
    if (not isinstance(requested, str) or not isinstance(params.get("capabilities"), dict)
            or not isinstance(info, dict) or not isinstance(info.get("name"), str)
            or not isinstance(info.get("version"), str)):
        return None
    return {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS,
            "protocolVersion": requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
            "serverInfo": {"name": "memdeck", "version": package_version()}}


class Wire:
    """The protocol's input and output, off fds 0 and 1."""

    def __init__(self) -> None:
        self.input = os.dup(0)
        self.output = os.dup(1)
        quiet = os.open(os.devnull, os.O_RDONLY)
        os.dup2(quiet, 0)
        os.close(quiet)
        os.dup2(2, 1)
        self.head = b""  # what was read before the SDK took over, for it to read again
        self.answered: Any = None  # the id of the `initialize` answered early

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.output, view):]

    def answer_first(self, loading: Callable[[], bool]) -> None:
        """Read the first line; answer it if it is a well-formed `initialize`. Stops early when
        stdin ends, or when `loading()` says the SDK failed to load (its error is reported)."""
        while b"\n" not in self.head:
            ready, _, _ = select.select([self.input], [], [], 0.05)
            if not ready:
                if not loading():
                    return
                continue
            chunk = os.read(self.input, 65536)
            if not chunk:
                return
            self.head += chunk
        line = self.head.split(b"\n", 1)[0]
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
            return
        result = initialize_result(message.get("params"))
        if result is None or not isinstance(message["id"], (int, str)) or isinstance(message["id"], bool):
            return
        self.answered = message["id"]
        self.write((json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result},
                               ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))

    def streams(self):
        """The SDK's stdin and stdout: the input again from its first line, and the output
        without the SDK's own answer to the `initialize` answered early."""
        return _Input(self), _Output(self)


class _Input:
    """Lines of the wire's input for the SDK's reader (`async for line in stdin`)."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.buffer = wire.head
        self.ended = False

    def __aiter__(self) -> "_Input":
        return self

    async def __anext__(self) -> str:
        import anyio

        while b"\n" not in self.buffer and not self.ended:
            chunk = await anyio.to_thread.run_sync(os.read, self.wire.input, 65536, abandon_on_cancel=True)
            if chunk:
                self.buffer += chunk
            else:
                self.ended = True
        if not self.buffer:
            raise StopAsyncIteration
        line, newline, self.buffer = self.buffer.partition(b"\n")
        return (line + newline).decode("utf-8", errors="replace")


class _Output:
    """The wire's output for the SDK's writer (`await stdout.write(json)`, `await stdout.flush()`)."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.dropping = wire.answered is not None

    async def write(self, text: str) -> None:
        if self.dropping and text.startswith("{"):
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("id") == self.wire.answered and (
                    "result" in message or "error" in message) and "method" not in message:
                self.dropping = False  # answered already, the same answer
                return
        self.wire.write(text.encode("utf-8"))

    async def flush(self) -> None:
        return None


class Loader(threading.Thread):
    """Imports the SDK's server module on a thread, so the import runs while the first line is
    read and answered."""

    def __init__(self) -> None:
        super().__init__(name="memdeck-mcp-import", daemon=True)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            import tui.mcp_server.server  # noqa: F401
        except BaseException as exc:  # reported by the main thread
            self.error = exc

    def loading(self) -> bool:
        """False once the import failed (True while it runs, or after it succeeded)."""
        return self.error is None
