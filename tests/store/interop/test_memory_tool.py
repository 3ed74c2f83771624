"""The Claude API's memory tool over the store, driven the way the Anthropic SDK drives it: the
SDK's own tool runner (`client.beta.messages.tool_runner`) talks to a scripted model over a mock
HTTP transport (no network), and hands each memory command to `MemdeckMemoryTool`, a
`BetaAbstractMemoryTool`. The tool results the SDK sends back are what the model would read."""

from __future__ import annotations

import json

import pytest

anthropic = pytest.importorskip("anthropic", reason="the memory tool needs the extra: pip install 'memdeck[anthropic]'")
httpx = pytest.importorskip("httpx2", reason="the Anthropic SDK's HTTP client (anthropic 2.x) is needed for its mock transport")

from anthropic.lib.tools import BetaAbstractMemoryTool  # noqa: E402

from store import Config, Store  # noqa: E402
from store.browse.search import MemoryFilter, list_memories  # noqa: E402
from store.interop.memory_tool import MemdeckMemoryTool  # noqa: E402

PITFALL = "/memories/demo/pitfall/retry-backoff.md"

# What the scripted model asks for, turn by turn: one memory command each.
SCRIPT = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": PITFALL, "file_text": "Retry backoff doubles from 1 s.\nIt has no cap.\n"},
    {"command": "create", "path": PITFALL, "file_text": "again"},
    {"command": "view", "path": "/memories/demo"},
    {"command": "str_replace", "path": PITFALL, "old_str": "It has no cap.", "new_str": "It must cap at 60 s."},
    {"command": "str_replace", "path": PITFALL, "old_str": "s", "new_str": "x"},
    {"command": "str_replace", "path": PITFALL, "old_str": "nowhere", "new_str": "x"},
    {"command": "insert", "path": PITFALL, "insert_line": 0, "insert_text": "# Payments retry\n"},
    {"command": "insert", "path": PITFALL, "insert_line": 99, "insert_text": "x"},
    {"command": "view", "path": PITFALL},
    {"command": "create", "path": "/memories/demo/fix/ledger.md", "file_text": "Ledger writes go through the service"},
    {"command": "rename", "old_path": PITFALL, "new_path": "/memories/demo/fix/ledger.md"},
    {"command": "rename", "old_path": PITFALL, "new_path": "/memories/demo/fix/retry-backoff.md"},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "view", "path": "/memories/../etc"},
    {"command": "create", "path": "/memories/demo/nonsense/x.md", "file_text": "x"},
    {"command": "delete", "path": "/memories/demo/fix/ledger.md"},
    {"command": "delete", "path": "/memories/demo/fix/ledger.md"},
    {"command": "delete", "path": "/memories"},
    {"command": "view", "path": "/memories/demo/fix/retry-backoff.md", "view_range": [2, -1]},
]


class ScriptedModel:
    """The Messages API, as a mock transport: each request answers with the script's next tool
    call, and records the tool result the SDK sent for the one before."""

    def __init__(self) -> None:
        self.turn = 0
        self.results: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        last = body["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list):
            self.results += [block for block in last["content"] if block.get("type") == "tool_result"]
        if self.turn < len(SCRIPT):
            content = [{"type": "tool_use", "id": f"toolu_{self.turn:02d}", "name": "memory", "input": SCRIPT[self.turn]}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "Done."}], "end_turn"
        self.turn += 1
        return httpx.Response(200, json={
            "id": f"msg_{self.turn:02d}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10}})


def text(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)


def test_a_scripted_conversation_through_the_sdks_tool_runner(db_path):
    model = ScriptedModel()
    client = anthropic.Anthropic(api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(model)),
                                 max_retries=0)
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        store.add("Payments go through the ledger service", type="constraint", confidence=0.9)
        tool = MemdeckMemoryTool(store)
        assert isinstance(tool, BetaAbstractMemoryTool) and tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
        runner = client.beta.messages.tool_runner(model="claude-sonnet-4-6", max_tokens=1024, tools=[tool],
                                                  messages=[{"role": "user", "content": "Remember the retry fix"}])
        final = runner.until_done()
        assert final.content[0].text == "Done."
        results = [(r.get("is_error", False), text(r)) for r in model.results]
        assert len(results) == len(SCRIPT)
        view_root, created, again, view_project, replaced, many, none, inserted, out_of_range, view_file, \
            created_fix, onto, renamed, outside, escape, bad_type, deleted, deleted_again, delete_root, view_range = results

        assert not view_root[0] and view_root[1].startswith(
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:")
        assert "/memories/demo/\n" in view_root[1] + "\n" and "/memories/demo/constraint/" in view_root[1]
        assert created == (False, f"File created successfully at: {PITFALL}")
        assert again == (True, f"File {PITFALL} already exists")
        assert f"\t{PITFALL}" in view_project[1] and "/memories/demo/constraint/payments-go-through" in view_project[1]
        assert not replaced[0] and "It must cap at 60 s." in replaced[1] and "has been edited" in replaced[1]
        assert many[0] and "Multiple occurrences of old_str `s` in lines: 1, 1, 2, 2. Please ensure it is unique" in many[1]
        assert none == (True, f"No replacement was performed, old_str `nowhere` did not appear verbatim in {PITFALL}.")
        assert inserted == (False, f"The file {PITFALL} has been edited.")
        assert out_of_range == (True, "Invalid `insert_line` parameter: 99. It should be within the range [0, 3].")
        assert view_file[1] == (f"Here's the content of {PITFALL} with line numbers:\n"
                                "     1\t# Payments retry\n     2\tRetry backoff doubles from 1 s.\n"
                                "     3\tIt must cap at 60 s.")
        assert not created_fix[0]
        assert onto == (True, "The destination /memories/demo/fix/ledger.md already exists")
        assert renamed == (False, f"Successfully renamed {PITFALL} to /memories/demo/fix/retry-backoff.md")
        assert outside == (True, "Path must start with /memories, got: /etc/passwd")
        assert escape == (True, "Path /memories/../etc would escape /memories directory")
        assert bad_type[0] and "unknown type 'nonsense'" in bad_type[1]
        assert deleted == (False, "Successfully deleted /memories/demo/fix/ledger.md")
        assert deleted_again == (True, "The path /memories/demo/fix/ledger.md does not exist")
        assert delete_root == (True, "Cannot delete the /memories directory itself")
        assert view_range[1].endswith(":\n     2\tRetry backoff doubles from 1 s.\n     3\tIt must cap at 60 s.")

        # Every write was a memdeck write: pending in the inbox, with its history, the deleted one in the trash.
        (memory,) = [m for m in list_memories(store, MemoryFilter(statuses=("pending",)), limit=None)]
        assert memory.type == "fix" and memory.source == "automatic" and "memory-tool" in memory.tags and memory.content.startswith("# Payments retry")
        assert [e.kind for e in store.events(memory.id)].count("edited") >= 2 or len(store.events(memory.id)) >= 3
        trashed = list_memories(store, MemoryFilter(statuses=("deleted",)), limit=None)
        assert [m.content for m in trashed] == ["Ledger writes go through the service"]


def test_a_secret_the_model_writes_is_redacted(db_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        tool = MemdeckMemoryTool(store)
        tool.call({"command": "create", "path": "/memories/demo/context/keys.md",
                   "file_text": "The staging key is AKIAIOSFODNN7EXAMPLE for the S3 bucket"})
        shown = tool.call({"command": "view", "path": "/memories/demo/context/keys.md"})
        assert "AKIAIOSFODNN7EXAMPLE" not in shown and "S3 bucket" in shown


def test_the_stores_limits_hold_for_the_model_too(db_path):
    from anthropic.lib.tools import ToolError

    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        tool = MemdeckMemoryTool(store)
        with pytest.raises(ToolError):
            tool.call({"command": "create", "path": "/memories/demo/context/huge.md", "file_text": "x" * 300_000})
        assert list_memories(store, MemoryFilter(statuses=()), limit=None) == []
