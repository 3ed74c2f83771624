"""Nova26's session-memory.json, YAML, the managed block of CLAUDE.md / AGENTS.md, and telling
formats apart."""

from __future__ import annotations

import json

import pytest

from store.engine.errors import InvalidInput
from store.interop import agents_md, nova, yaml_format
from store.interop.detect import detect_format, json_kind
from store.interop.importer import import_document
from store.interop.memdeck_json import export_document
from store.browse.search import MemoryFilter, list_memories

pytestmark = pytest.mark.both_backends

NOVA_FILE = {
    "version": "1.0.0",
    "projectName": "nova26",
    "entries": [
        {"id": "mem-1737372000123-k3x9", "category": "pattern", "key": "auth_pattern",
         "value": "All mutations use requireAuth() first", "agent": "MARS", "confidence": 0.95,
         "createdAt": "2025-01-20T10:00:00.123Z", "updatedAt": "2025-01-21T08:30:00.000Z",
         "accessCount": 3, "lastAccessedAt": "2025-01-22T09:00:00.500Z"},
        {"id": "mem-1737372000456-ab12", "category": "user_preference", "key": "components",
         "value": "user prefers functional components", "confidence": 1,
         "createdAt": "2025-01-20T10:00:00.456Z", "updatedAt": "2025-01-20T10:00:00.456Z", "accessCount": 0},
        {"id": "mem-1737372000789-zz99", "category": "error_solution", "key": "VENUS: Build dashboard",
         "value": "Failed with: TypeError", "agent": "VENUS", "confidence": 0.7,
         "createdAt": "2025-01-20T10:00:00.789Z", "updatedAt": "2025-01-20T10:00:00.789Z", "accessCount": 0},
    ],
    "lastUpdated": "2025-01-22T09:00:00.500Z",
}


def nova_text(data) -> str:
    """As Nova writes it: `JSON.stringify(store, null, 2)`."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def test_nova_file_imports_with_categories_agents_and_access_counts(store):
    summary = import_document(store, nova.loads(nova_text(NOVA_FILE), "session-memory.json"))
    assert len(summary.added) == 3
    auth = store.get("mem-1737372000123-k3x9")
    assert (auth.type, auth.title, auth.content, auth.confidence, auth.use_count) == (
        "pattern", "auth_pattern", "All mutations use requireAuth() first", 0.95, 3)
    assert auth.meta == {"agent": "MARS"}
    assert nova.nova_time(auth.last_used_at) == "2025-01-22T09:00:00.500Z"
    assert store.get("mem-1737372000456-ab12").type == "preference"
    assert store.get("mem-1737372000789-zz99").type == "fix"


def test_nova_file_through_the_store_comes_back_the_same(store):
    import_document(store, nova.loads(nova_text(NOVA_FILE), "session-memory.json"))
    written = json.loads(nova.dumps(list_memories(store, limit=None), "nova26", store.now()))
    written.pop("lastUpdated")
    expected = dict(NOVA_FILE)
    expected.pop("lastUpdated")
    assert written == expected
    assert nova.dumps(list_memories(store, limit=None), "nova26", 0).startswith('{\n  "version": "1.0.0",')


def test_nova_categories_memdeck_lacks_are_kept(store):
    data = {"entries": [{"id": "mem-1-abcd", "category": "business_rule", "key": "k", "value": "v v v",
                         "confidence": 0.5, "createdAt": "2025-01-20T10:00:00.000Z",
                         "updatedAt": "2025-01-20T10:00:00.000Z", "accessCount": 0}]}
    import_document(store, nova.read_document(data, "x.json"))
    memory = store.get("mem-1-abcd")
    assert memory.type == "context" and "business_rule" in memory.tags
    assert json.loads(nova.dumps([memory], "p", 0))["entries"][0]["category"] == "business_rule"


def test_nova_wrong_shapes_are_refused():
    with pytest.raises(InvalidInput, match="no \"entries\" list"):
        nova.read_document({"version": "1.0.0"}, "x")
    with pytest.raises(InvalidInput, match="unsupported Nova26 memory version '2.0.0'"):
        nova.read_document({"version": "2.0.0", "entries": []}, "x")
    with pytest.raises(InvalidInput, match=r"entries\[0\]\.value: expected text"):
        nova.read_document({"entries": [{"category": "pattern", "key": "k"}]}, "x")
    with pytest.raises(InvalidInput, match=r"entries\[0\]\.accessCount"):
        nova.read_document({"entries": [{"category": "pattern", "key": "k", "value": "v", "accessCount": -1}]}, "x")


def test_yaml_round_trip_keeps_every_memory_field(store, clock):
    store.add("Line one\n\n  indented line three\n", type="pattern", tags="a,b", hat="critic", scope="api",
              file_refs="src/*.py", confidence=0.42)
    store.add("2026-03-01", type="timing", title="yes")  # text YAML would read as a date or a boolean
    document = export_document(store, MemoryFilter(), with_history=False)
    text = yaml_format.dumps(document)
    assert "content: |" in text and "events" not in text
    again = yaml_format.loads(text, "memories.yaml")
    contents = {m.fields["content"] for m in again.memories}
    assert contents == {"Line one\n\n  indented line three", "2026-03-01"}
    assert {m.fields["title"] for m in again.memories} == {"Line one", "yes"}
    before = list_memories(store, limit=None)
    summary = import_document(store, again)
    assert {why for _, why in summary.skipped} == {"already in the store, unchanged"}
    assert list_memories(store, limit=None) == before


def test_yaml_alias_bombs_are_refused():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nmemories: [*b]\n"
    with pytest.raises(InvalidInput, match=r"a \(line 1\): anchors \(&name\) are not accepted"):
        yaml_format.loads(bomb, "bomb.yaml")
    with pytest.raises(InvalidInput, match=r"memories\[0\] \(line 1\): aliases \(\*name\) are not accepted"):
        yaml_format.loads("memories: [*b]\n", "alias.yaml")


def test_yaml_syntax_errors_say_where():
    with pytest.raises(InvalidInput, match="not valid YAML at line 3"):
        yaml_format.loads("memories:\n  - type: [unclosed\n", "bad.yaml")


def test_managed_block_is_appended_and_then_replaced_leaving_the_rest_alone(store):
    store.add("Run make lint before every commit", type="convention", confidence=0.9)
    original = "# Project\r\n\r\nHand-written rules.\r\nNo trailing newline"
    block = lambda newline: agents_md.render_block(list_memories(store), "Project Memory", store.vocabulary.types, newline)
    first = agents_md.replace_block(original, block)
    assert first.startswith(original + "\r\n\r\n" + agents_md.BEGIN)
    assert "- Run make lint before every commit\r\n" in first and first.endswith(agents_md.END + "\r\n")
    edited = first.replace("Hand-written rules.", "Hand-written rules, edited.") + "Tail text\r\n"
    store.add("Never push to main", type="constraint", confidence=0.95)
    second = agents_md.replace_block(edited, block)
    assert second.startswith("# Project\r\n\r\nHand-written rules, edited.\r\n")
    assert second.endswith(agents_md.END + "\r\nTail text\r\n")
    assert second.count(agents_md.BEGIN) == 1 and "Never push to main" in second


def test_broken_markers_are_refused():
    with pytest.raises(InvalidInput, match="expected one of each"):
        agents_md.replace_block(f"{agents_md.BEGIN}\nno end\n", lambda nl: "")
    with pytest.raises(InvalidInput, match="expected one of each"):
        agents_md.replace_block(f"{agents_md.END}\n{agents_md.BEGIN}\n", lambda nl: "")


@pytest.mark.parametrize("name, text, expected", [
    ("export.json", "{}", "json"),
    ("-", '  {"memories": []}', "json"),
    (".agent/memories.md", "anything", "ralph"),
    ("notes.txt", "# Memories\n\n## Patterns\n", "ralph"),
    ("-", "## Fixes\n\n### mem-1737390000-g7h8\n> x\n", "ralph"),
    ("memories.yml", "memories: []\n", "yaml"),
    ("-", "format: memdeck\nmemories:\n", "yaml"),
])
def test_format_is_told_from_name_and_content(name, text, expected):
    assert detect_format(text, name) == expected


def test_unknown_format_asks_for_one():
    with pytest.raises(InvalidInput, match="cannot tell the format"):
        detect_format("just some words", "notes.txt")


def test_json_kind_tells_nova_from_memdeck():
    assert json_kind(NOVA_FILE) == "nova"
    assert json_kind({"version": 1, "memories": []}) == "json"


def test_reimporting_its_own_nova_export_changes_nothing(store, clock):
    clock.advance(seconds=0.123456)  # finer than Nova's milliseconds
    store.add("Retries use exponential backoff", type="behavior")
    store.add("Never log tokens", type="constraint", confidence=0.95)
    text = nova.dumps(list_memories(store, limit=None), "demo", store.now())
    summary = import_document(store, nova.loads(text, "session-memory.json"))
    assert {why for _, why in summary.skipped} == {"already in the store, unchanged"}
    assert {m.type for m in list_memories(store, limit=None)} == {"behavior", "constraint"}
