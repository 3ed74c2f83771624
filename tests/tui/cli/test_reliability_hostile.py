"""Hostile input, property-based: the marker parser, every importer, the search query builder,
the config loader and the hook JSON reader, fed arbitrary text and bytes, either succeed or fail
with a `MemdeckError` (memdeck's own type, with its message): never another exception, never a
partial write. Then the classics, each on its real path: invalid UTF-8, NUL bytes, 10 MB lines,
deeply nested JSON, YAML alias bombs, FTS syntax, path traversal in names, and Rich markup and
terminal escapes in memory text.

Example counts are fixed (`max_examples`, `deadline=None`) so a run's length does not vary.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings, strategies as st

from store import Config, MemdeckError, Store
from store.engine.config import SETTINGS
from store.engine.errors import InvalidInput
from store.retrieval.injection import InjectionContext, prime
from store.engine.redaction import unify_line_breaks
from store.interop.document import ImportDocument
from store.interop.importer import ImportSummary, import_document
from store.interop.transfer import import_file, read_document
from store.engine.lifecycle import run_decay
from store.engine.limits import MAX_CONTENT_CHARS
from store.capture.markers import scan
from store.browse.search import MemoryFilter, fts_query, search
from tui.cli.hook_input import HookInputError, read_payload
from tui.text import plain

# The suite runs the same inputs every time; `benchmarks/soak.py` sets a larger scale, and then
# draws new ones on every run.
SCALE = int(os.environ.get("MEMDECK_HOSTILE_SCALE", "1"))
FIXED = dict(deadline=None, derandomize=SCALE == 1,
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# Pieces that mean something to one parser or another, so random text reaches deep paths.
SPECIAL = ["MEMORY:", "[MEMORY:", "]", ":", "`", "**", "- ", "1. ", "# ", "## ", "### mem-1737390000-aaaa",
           "```", "~~~", "\n", "\n\n", "\r\n", "\t", " ", "\x00", "\x1b[31m", "\ufeff", "\ud800", "é", "𝄞",
           '"', "'", "\\", "{", "}", "[", "]", ",", "> ", "<!-- tags: a | created: 2024-01-01 -->",
           "*", "NEAR(", "-", "AND", "OR", "NOT", "^", "(", ")", "../", "%s", "[bold]", "[/]", "\\ud800", "\\udfff"]
HOSTILE_TEXT = st.one_of(
    st.text(max_size=200),
    st.lists(st.one_of(st.sampled_from(SPECIAL), st.text(max_size=8)), max_size=30).map("".join),
)
# Text read from a file or typed in the workbench is decoded strictly, so it never holds half a
# character itself (a `\\ud800` escape inside it can still name one).
FILE_TEXT = HOSTILE_TEXT.map(lambda text: text.encode("utf-8", "replace").decode("utf-8"))
WORDS = st.sampled_from(["fix", "pitfall", "pattern", "gotcha", "", " ", "x" * 300, "../../etc", "\x00"])


def table_counts(db_path: Path) -> tuple:
    """Everything a failed write could have touched, in a few numbers."""
    conn = sqlite3.connect(db_path)
    try:
        return tuple(conn.execute(f"SELECT COUNT(*), TOTAL(rowid) FROM {t}").fetchone()
                     for t in ("project", "memory", "event", "session", "activity")) + (
            conn.execute("SELECT TOTAL(confidence), TOTAL(use_count), MAX(updated_at) FROM memory").fetchone(),)
    finally:
        conn.close()


# -- the marker parser ---------------------------------------------------------------------

@settings(max_examples=400 * SCALE, **FIXED)
@given(text=HOSTILE_TEXT)
def test_the_marker_parser_reads_any_text(text):
    result = scan(text)
    lines = text.count("\n") + 1
    for marker in result.markers:
        assert marker.text and marker.text == marker.text.strip() and 1 <= marker.line <= lines
    for rejected in result.rejected:
        assert rejected.reason and 1 <= rejected.line <= lines


# -- every importer ------------------------------------------------------------------------

JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                         st.floats(allow_nan=True, allow_infinity=True), HOSTILE_TEXT)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)
MEMORY_KEYS = ["id", "type", "content", "title", "project", "confidence", "tags", "file_refs", "source",
               "status", "protected", "use_count", "meta", "scope", "hat", "session_id", "task", "supersedes",
               "created_at", "updated_at", "last_used_at", "verified_at", "decayed_at", "status_changed_at",
               "events", "created_by_hat", "created_by_task_id"]
PLAUSIBLE = {
    "id": st.sampled_from(["mem-1737390000-aaaa", "mem-1737390000-aaaa", "../../x", "", "mem-1-1"]),
    "type": WORDS, "content": HOSTILE_TEXT,
    "confidence": st.one_of(st.floats(), st.integers(), st.text(max_size=4)),
    "tags": st.one_of(st.lists(HOSTILE_TEXT, max_size=3), HOSTILE_TEXT),
    "created_at": st.one_of(st.floats(), st.integers(min_value=-2**70, max_value=2**70),
                            st.sampled_from(["2024-01-01", "2024-13-45T99:00", "yesterday", "0", "1e400"])),
    "use_count": st.integers(min_value=-2**70, max_value=2**70),
    "status": st.sampled_from(["active", "pending", "inactive", "deleted", "gone", ""]),
    "source": st.sampled_from(["explicit", "automatic", "imported", "operator", "robot"]),
}
MEMORY = st.fixed_dictionaries(
    {"type": WORDS, "content": HOSTILE_TEXT},
    optional={key: PLAUSIBLE.get(key, JSON_VALUES) for key in MEMORY_KEYS if key not in ("type", "content")})
NOVA_ENTRY = st.fixed_dictionaries(
    {"key": HOSTILE_TEXT, "value": HOSTILE_TEXT, "category": st.sampled_from(["pattern", "bug", "odd", ""])},
    optional={"id": PLAUSIBLE["id"], "confidence": PLAUSIBLE["confidence"], "accessCount": JSON_VALUES,
              "createdAt": PLAUSIBLE["created_at"], "agent": JSON_VALUES})
# Memories every importer must take: the "whole" branch of the tests below, met often.
VALID_MEMORY = st.fixed_dictionaries(
    {"type": st.sampled_from(["fix", "pitfall", "pattern", "convention", "timing"]),
     "content": st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=80).filter(str.strip)},
    optional={"id": st.from_regex(r"mem-17373900[0-9]{2}-[0-9a-f]{4}", fullmatch=True),
              "tags": st.lists(st.sampled_from(["net", "db", "ui", "deploy"]), max_size=2),
              "confidence": st.floats(min_value=0.1, max_value=1.0), "title": st.text(max_size=30)})
DOCUMENTS = st.one_of(
    st.builds(lambda ms: {"version": 1, "memories": ms}, st.lists(VALID_MEMORY, min_size=1, max_size=4)),
    st.builds(lambda ms, v: {"version": v, "memories": ms}, st.lists(MEMORY, max_size=4),
              st.sampled_from([1, 1, 2, "1", None])),
    st.builds(lambda es: {"version": "1.0", "entries": es}, st.lists(NOVA_ENTRY, max_size=4)),
    JSON_VALUES,
)
RALPH = st.lists(st.sampled_from(
    ["# Memories", "## Patterns", "## Fixes", "## Odd", "### mem-1737390000-aaaa", "### mem-1737390000-bbbb",
     "### mem-x", "> a quoted line", "> ", ">", "<!-- tags: a, b | created: 2024-01-01 -->",
     "<!-- tags: | created: never -->", "free text", "", "```", "\x00", "\\ud800"]), max_size=25).map("\n".join)

# A Ralph file every importer must take: well-formed sections of well-formed memories.
RALPH_MEMORY = st.builds(
    lambda n, text, tags: f"### mem-17373900{n:02d}-{n:04x}\n> {text}\n<!-- tags: {', '.join(tags)} | created: 2024-01-01 -->\n",
    st.integers(0, 99), st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60)
    .map(lambda t: " ".join(t.split())).filter(bool),
    st.lists(st.sampled_from(["net", "db", "ui"]), min_size=1, max_size=2))
VALID_RALPH = st.builds(
    lambda sections: "# Memories\n\n" + "\n".join(f"## {name}\n\n" + "\n".join(ms) for name, ms in sections),
    st.lists(st.tuples(st.sampled_from(["Patterns", "Fixes", "Decisions", "Context"]),
                       st.lists(RALPH_MEMORY, min_size=1, max_size=3)), min_size=1, max_size=2))


def as_text(document, fmt: str) -> str:
    if fmt == "yaml":
        return yaml.safe_dump(document, allow_unicode=True)
    return json.dumps(document, ensure_ascii=fmt == "json-ascii")


@contextmanager
def unchanged_unless_it_succeeds(db_path: Path):
    before = table_counts(db_path)
    try:
        yield
    except MemdeckError as exc:
        assert str(exc)  # a message for the user
        assert table_counts(db_path) == before  # and nothing half-written


class Imported:
    """What an import inside `whole_or_not_at_all` read and did, set by the test."""

    document: ImportDocument | None = None
    summary: ImportSummary | None = None


@contextmanager
def whole_or_not_at_all(store: Store, db_path: Path):
    """Around an import: one that fails says why and leaves every table as it was; one that
    succeeds put every memory it read into the store."""
    before = table_counts(db_path)
    ids_before = memory_ids(db_path)
    imported = Imported()
    try:
        yield imported
    except MemdeckError as exc:
        assert str(exc)  # a message for the user
        assert table_counts(db_path) == before  # and nothing half-written
        event("refused")
        return
    assert imported.summary is not None, "the test did not say what it imported"
    summary = imported.summary
    event("imported " + ("nothing" if not summary.added + summary.updated + summary.skipped else "memories"))
    assert_imported_whole(store, db_path, ids_before, imported)


def memory_ids(db_path: Path) -> set[str]:
    conn = sqlite3.connect(db_path)
    try:
        return {row[0] for row in conn.execute("SELECT id FROM memory")}
    finally:
        conn.close()


def assert_imported_whole(store: Store, db_path: Path, ids_before: set[str], imported: Imported) -> None:
    summary = imported.summary
    added = [memory_id for memory_id, _ in summary.added]
    ids_after = memory_ids(db_path)
    # Every memory the summary says it added is in the store, new, once; no other memory is new.
    assert len(set(added)) == len(added)
    assert ids_after - ids_before == set(added)
    assert {memory_id for memory_id, _ in summary.updated} <= ids_after
    if imported.document is None:
        return
    memories = imported.document.memories
    # Each memory of the file was added, updated or skipped (with the reason): none went missing.
    assert len(summary.added) + len(summary.updated) + len(summary.skipped) == len(memories)
    # A memory with its own id is in the store under it; a new one holds the file's text.
    stored = store.found([m.fields["id"] for m in memories if m.fields.get("id")])
    for incoming in memories:
        if memory_id := incoming.fields.get("id"):
            assert memory_id in stored, incoming.where
    first = {}
    for incoming in memories:
        first.setdefault(incoming.fields.get("id"), incoming)
    for memory_id in added:
        if memory_id in first:
            assert stored[memory_id].content == unify_line_breaks(first[memory_id].fields["content"])


@settings(max_examples=150 * SCALE, **FIXED)
@given(document=DOCUMENTS, fmt=st.sampled_from(["json", "json-ascii", "yaml"]))
def test_every_importer_takes_any_document_whole_or_not_at_all(store, db_path, document, fmt):
    with whole_or_not_at_all(store, db_path) as imported:
        imported.document = read_document(store, as_text(document, fmt), f"hostile.{fmt[:4]}", "auto")
        imported.summary = import_document(store, imported.document)


@settings(max_examples=300 * SCALE, **FIXED)
@given(text=st.one_of(FILE_TEXT, RALPH, VALID_RALPH), fmt=st.sampled_from(["auto", "json", "nova", "yaml", "ralph"]))
def test_every_importer_takes_any_text_whole_or_not_at_all(store, db_path, text, fmt):
    with whole_or_not_at_all(store, db_path) as imported:
        imported.document = read_document(store, text, "hostile.md", fmt)
        imported.summary = import_document(store, imported.document)


@settings(max_examples=100 * SCALE, **FIXED)
@given(data=st.binary(max_size=300), fmt=st.sampled_from(["auto", "json", "yaml", "ralph"]))
def test_any_bytes_in_an_import_file_import_or_fail_clearly(store, db_path, tmp_path, data, fmt):
    path = tmp_path / "hostile.bin"
    path.write_bytes(data)
    with whole_or_not_at_all(store, db_path) as imported:
        imported.summary = import_file(store, str(path), format=fmt)


# -- the search query builder --------------------------------------------------------------

@settings(max_examples=300 * SCALE, **FIXED)
@given(text=HOSTILE_TEXT, mode=st.sampled_from(["all", "any"]), prefix=st.booleans())
def test_every_query_the_builder_makes_is_valid_fts5(text, mode, prefix):
    query = fts_query(text, mode=mode, prefix_last=prefix)
    if query is None:
        return
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO t VALUES ('some text')")
    conn.execute("SELECT COUNT(*) FROM t WHERE t MATCH ?", (query,)).fetchone()  # no syntax error


@settings(max_examples=150 * SCALE, **FIXED)
@given(text=FILE_TEXT, tag=FILE_TEXT, hat=FILE_TEXT, scope=FILE_TEXT)
def test_search_with_any_filter_words_answers_or_fails_clearly(store, text, tag, hat, scope):
    store.add("Retry the upload with backoff [bold]three[/] times", type="fix", tags=["net"], hat="creator")
    try:
        search(store, text, MemoryFilter(tags=(tag,), hats=(hat,), scopes=(scope,), types=(tag,)))
    except MemdeckError as exc:
        assert str(exc)


# -- the config loader ---------------------------------------------------------------------

KNOWN_KEYS = sorted(SETTINGS)


def nested(flat: dict) -> dict:
    tree: dict = {}
    for key, value in flat.items():
        *parents, last = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return tree


CONFIG_VALUES = st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=3),
                          st.dictionaries(HOSTILE_TEXT, JSON_SCALARS, max_size=3),
                          st.dictionaries(st.sampled_from(["explicit", "creator", "gotcha", "x"]),
                                          st.one_of(JSON_SCALARS, st.lists(HOSTILE_TEXT, max_size=2)), max_size=3))


@settings(max_examples=250 * SCALE, **FIXED)
@given(settings_=st.dictionaries(st.sampled_from(KNOWN_KEYS), CONFIG_VALUES, min_size=1, max_size=3))
def test_any_settings_load_and_work_or_fail_clearly(tmp_path, settings_):
    """A config whose values type-check but make no sense (a budget of -5, an alias to a number)
    is refused at load or by the command that uses it, with a message; the store is untouched."""
    config_file = tmp_path / "config.yml"
    config_file.write_text(yaml.safe_dump(nested(settings_), allow_unicode=True))
    db_path = tmp_path / f"hostile-config-{abs(hash(str(settings_)))}.db"
    try:
        config = Config.load(None, user_path=config_file)
        with Store.open(db_path, project="demo", config=config) as store:
            with unchanged_unless_it_succeeds(db_path):
                store.add("Retry the upload with backoff", type="fix", tags="net")
            with unchanged_unless_it_succeeds(db_path):
                run_decay(store)
            with unchanged_unless_it_succeeds(db_path):
                prime(store, InjectionContext(task="upload retry", hat="creator"), record=True)
            with unchanged_unless_it_succeeds(db_path):
                search(store, "upload")
    except MemdeckError as exc:
        assert str(exc)


@settings(max_examples=150 * SCALE, **FIXED)
@given(data=st.one_of(st.binary(max_size=200), HOSTILE_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_any_bytes_in_a_config_file_load_or_fail_clearly(tmp_path, data):
    config_file = tmp_path / "config.yml"
    config_file.write_bytes(data)
    try:
        Config.load(None, user_path=config_file)
    except MemdeckError as exc:
        assert str(exc)


# -- the hook JSON reader ------------------------------------------------------------------

def pipe_with(data: bytes) -> int:
    """The read end of a pipe holding `data`, its write end closed: stdin as a hook gets it."""
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    return read_end


HOOK_PAYLOADS = st.one_of(
    st.binary(max_size=300),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({}, optional={"session_id": JSON_VALUES, "cwd": JSON_VALUES,
                                        "transcript_path": JSON_VALUES, "hook_event_name": JSON_VALUES})
    .map(lambda v: json.dumps(v).encode()),
)


@settings(max_examples=300 * SCALE, **FIXED)
@given(data=HOOK_PAYLOADS)
def test_the_hook_reader_takes_any_bytes(data):
    fd = pipe_with(data)
    try:
        payload = read_payload(fd)
    except HookInputError as exc:
        assert str(exc).startswith("the hook input")
        return
    finally:
        os.close(fd)
    assert isinstance(payload, dict)
    json.dumps(payload, ensure_ascii=False).encode("utf-8")  # whole characters only: storable


CLASSIC_HOOK_INPUTS = {
    "invalid utf-8": b'{"session_id": "\xff\xfe", "cwd": "/tmp"}',
    "nul bytes": b"\x00\x00{\x00}",
    "deeply nested": b"[" * 100_000,
    "half a character": b'{"session_id": "s-\\ud800", "transcript_path": "\\udfff"}',
    "not an object": b'["session_id"]',
    "wrong types": b'{"session_id": 5, "cwd": ["/"], "transcript_path": {"a": 1}}',
    "traversal": b'{"session_id": "../../../etc/passwd", "transcript_path": "../../../../etc/shadow"}',
}


@pytest.mark.slow
@pytest.mark.parametrize("hook", ["session-start", "stop"])
def test_the_real_hooks_never_crash_or_block_on_classic_bad_input(run_cli_process, db_path, hook):
    for name, data in CLASSIC_HOOK_INPUTS.items():
        result = run_cli_process("hook", hook, input=data)
        err = result.stderr.decode("utf-8", "replace")
        assert result.returncode in (0, 1), (name, err)  # never 2: Claude Code reads 2 as "block"
        assert "Traceback" not in err, (name, err)
    if hook == "stop":
        assert not db_path.exists()  # none of it is a transcript: the store was not even opened
        return
    conn = sqlite3.connect(db_path)
    try:
        sessions = [row[0] for row in conn.execute("SELECT id FROM session")]
    finally:
        conn.close()
    assert all("\ufffd" in s or "\ud800" not in s for s in sessions)


# -- the classics on their real paths ------------------------------------------------------

def test_a_ten_megabyte_memory_is_refused_and_the_longest_allowed_is_stored_searched_and_skipped_by_prime(store):
    with pytest.raises(InvalidInput, match="over the limit of 200000"):
        store.add(("retry " * 1_750_000)[:10 * 1024 * 1024], type="fix", reinforce=False)  # one 10 MB line
    line = ("retry " * 40_000)[:MAX_CONTENT_CHARS]
    big = store.add(line, type="fix", reinforce=False).memory
    small = store.add("Retry uploads with backoff", type="fix").memory
    assert len(store.get(big.id).content) == len(line)
    assert {h.memory.id for h in search(store, "retry")} == {big.id, small.id}
    result = prime(store, InjectionContext(task="retry uploads", budget=500))
    assert result.tokens <= 500 and [r.memory.id for r in result.included] == [small.id]


def test_a_transcript_line_nested_too_deeply_is_reported_and_the_rest_ingested(run_cli, db_path, tmp_path):
    transcript = tmp_path / "deep.jsonl"
    marker = {"type": "assistant", "sessionId": "deep", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "MEMORY:fix:the line after the deep one still counts"}]}}
    transcript.write_bytes(b'{"type": "user", "sessionId": "deep"}\n' + b"[" * 100_000 + b"\n"
                           + json.dumps(marker).encode() + b"\n")
    result = run_cli("ingest", str(transcript), "--json")
    assert result.returncode == 1 and "Traceback" not in result.stderr  # 1: some lines unreadable
    report = json.loads(result.stdout)
    assert [u["line"] for u in report["unreadable"]] == [2] and len(report["created"]) == 1


def test_half_characters_in_every_json_input_are_stored_as_replacement_characters(run_cli, db_path, tmp_path):
    document = tmp_path / "half.json"
    document.write_text('{"memories": [{"type": "fix", "content": "imported \\ud800 half", "tags": ["\\udfff"]}]}')
    notes = tmp_path / "half.yml"
    notes.write_text('memories:\n  - type: pitfall\n    content: "from yaml \\ud800 half"\n')
    transcript = tmp_path / "half.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "sessionId": "half-\ud800", "message": {
        "role": "assistant", "content": [{"type": "text", "text": "MEMORY:fix:ingested \ud800 half"}]}}) + "\n")
    for args in (["import", str(document)], ["ingest", str(transcript)]):
        result = run_cli(*args)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    # libyaml refuses the escape outright; PyYAML's own loader reads it, and it is made whole
    from_yaml = run_cli("import", str(notes))
    assert from_yaml.returncode in (0, 2) and "Traceback" not in from_yaml.stderr
    conn = sqlite3.connect(db_path)
    try:
        contents = sorted(row[0] for row in conn.execute("SELECT content FROM memory"))
        sessions = [row[0] for row in conn.execute("SELECT id FROM session")]
    finally:
        conn.close()
    yaml_memory = ["from yaml \ufffd half"] if from_yaml.returncode == 0 else []
    assert contents == sorted([*yaml_memory, "imported \ufffd half", "ingested \ufffd half"])
    assert sessions == ["half-\ufffd"]


def test_undecodable_bytes_in_an_argument_are_a_clear_error_and_change_nothing(run_cli, db_path):
    run_cli("add", "Retry uploads with backoff", "--type", "fix", check=True)
    before = table_counts(db_path)
    script = [sys.executable, "-c", "import sys; from tui.cli.main import main; sys.exit(main())"]
    result = subprocess.run([*script, "add", b"bad \xff byte", "--type", "fix"], capture_output=True,
                            env={**os.environ, "MEMDECK_DB": str(db_path)})
    assert result.returncode == 2 and b"not valid text" in result.stderr and b"Traceback" not in result.stderr
    assert table_counts(db_path) == before


YAML_BOMB = ("a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n"
             "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
             "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n")


@pytest.mark.parametrize("text", [
    YAML_BOMB + "types:\n  extra: *e\n",
    YAML_BOMB + "hats:\n  extra: *e\n",
    "types:\n  extra: " + "[" * 2000 + "]" * 2000 + "\n",
], ids=["bomb in types", "bomb in hats", "deep nesting"])
@pytest.mark.slow
def test_a_config_with_a_bomb_or_deep_nesting_is_refused_quickly(tmp_path, text):
    config_file = tmp_path / "config.yml"
    config_file.write_text(text)
    with pytest.raises(MemdeckError):
        Config.load(None, user_path=config_file)


def test_half_a_character_in_a_config_is_made_whole(tmp_path):
    config_file = tmp_path / "config.yml"
    config_file.write_text('injection:\n  heading: "Memory \\ud800"\n')
    assert Config.load(None, user_path=config_file).injection.heading == "Memory \ufffd"


FTS_SYNTAX = ['"', '""', "*", "NEAR(", "NEAR(a b", "-", "-x", ":", "title:", "a:b", "AND", "OR NOT",
              "(", ")", "^", "{title}:x", "'", "\\", "%", "_", "a OR", "col:*"]


def test_fts_syntax_typed_at_the_command_line_is_searched_as_text(run_cli, db_path):
    run_cli("add", "The title: field needs a colon - and a dash", "--type", "fix", check=True)
    # The command line's own code, one process for all the queries (each alone costs 0.3 s).
    script = ("import json, sys; from tui.cli.main import main\n"
              "print(json.dumps([main(['search', '--', q]) for q in json.loads(sys.argv[1])]))")
    result = subprocess.run([sys.executable, "-c", script, json.dumps(FTS_SYNTAX)], capture_output=True, text=True,
                            env={**os.environ, "MEMDECK_DB": str(db_path)})
    assert "Traceback" not in result.stderr, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == [0] * len(FTS_SYNTAX)


def test_path_traversal_in_names_stays_data_and_no_file_is_written_outside(run_cli, tmp_path, db_path):
    """Names inside files (ids, sessions, projects, file refs) never become paths memdeck writes."""
    outside = tmp_path / "outside"
    outside.mkdir()
    work = outside / "a" / "b"
    work.mkdir(parents=True)
    document = work / "traversal.json"
    document.write_text(json.dumps({"version": 1, "memories": [
        {"type": "fix", "content": "Names are data", "project": "../../../outside-project",
         "session_id": "../../escape", "file_refs": ["../../../../etc/passwd", "/etc/shadow"],
         "scope": "../..", "hat": "..", "tags": ["../x"]}],
        "sessions": [{"id": "../../session", "project": "../..", "started_at": 1.0,
                      "source_path": "../../../etc/passwd", "activities": []}]}))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if db_path.name not in p.name)
    for args in (["import", str(document)], ["ingest", str(document), "--session", "../../../x", "--format", "text"],
                 ["export", "--all-projects", "--format", "ralph"], ["--project", "../../../outside-project", "list"]):
        result = run_cli(*args, cwd=work)
        assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stderr)
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if db_path.name not in p.name)
    assert after == before
    listed = json.loads(run_cli("list", "--all-projects", "--json", check=True).stdout)
    assert "../../../../etc/passwd" in [ref for m in listed for ref in m["file_refs"]]


MARKUP = ["[bold red]alarm[/]", "[link=file:///etc/passwd]click[/link]", "[/]", "[", "\x1b[2J\x1b[H", "\x1b]0;title\x07",
          "\x9b31m", "\r", "\x08\x08", "[@click=app.quit]x[/]", ":warning:", "\x00"]


@settings(max_examples=200 * SCALE, **FIXED)
@given(text=st.lists(st.one_of(st.sampled_from(MARKUP), st.text(max_size=5)), max_size=10).map("".join))
def test_markup_and_escapes_in_memory_text_are_shown_as_text_in_the_workbench(text):
    shown = plain(text)
    assert shown.spans == []  # no style came from the text
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in shown.plain)
    assert shown.plain.count("[") == text.count("[")  # markup kept as the characters it is


def test_markup_and_escapes_in_memory_text_are_printed_as_text_by_the_command_line(run_cli):
    hostile = "Restart [bold red]nginx[/] \x1b[2J\x1b]0;pwned\x07 then \x9b31m check :warning:"
    memory_id = run_cli("add", hostile, "--type", "fix", "--title", "[link=x]t\x1b[1m[/link]", check=True).stdout.strip()
    # `export` to a file format is left out on purpose: it carries the text byte for byte.
    for args in (["list"], ["show", memory_id], ["search", "nginx"], ["prime", "--task", "restart nginx"],
                 ["export", "--format", "agents-md"]):
        out = run_cli(*args, check=True).stdout
        assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out, args
    assert "[bold red]nginx[/]" in run_cli("show", memory_id, check=True).stdout
