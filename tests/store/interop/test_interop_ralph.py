"""Reading and writing Ralph's `.agent/memories.md` (seed 002) on the real files in fixtures."""

from __future__ import annotations

import pytest

from store.interop.ralph import RalphMemory, parse_ralph, render_ralph
from tests.data_support import DATA, FIXTURES, needs_shared

RALPH = FIXTURES / "ralph"

# Every fixture file with the number of memories it holds (SOURCES.tsv) and whether Ralph's own
# writer could have produced it byte for byte.
EXPECTED = {
    "AdelinoGP__pinch_n_print_cli__.ralph__agent__memories.md": (65, True),
    "ArturKlasa__forge__.ralph__agent__memories.md": (19, True),
    "arthrod__GLiNER__.ralph__agent__memories.md": (42, True),
    "Gleeye__gleeye__.agent__memories.md": (0, False),
    "HealthSamurai__health-samurai-io-bun__.agent__memories.md": (1, True),
    "SiSiFx__SpermRace-PROD__.agent__memories.md": (1, True),
    "Wjiajie__wuxiaX__.agent__memories.md": (1, True),
    "badlogic__pi-mono__.agent__memories.md": (5, True),
    "deedeedev__YtReader__.agent__memories.md": (2, True),
    "louloulin__translateflow__.ralph__agent__memories.md": (39, False),
    "mikeyobrien__ralph-orchestrator__.agent__memories.md": (15, True),
    "mikeyobrien__tonic__.ralph__agent__memories.md": (69, True),
    "po4yka__runatal-ios__.ralph__agent__memories.md": (20, True),
    "raphaelmans__cravingsph__.ralph__agent__memories.md": (28, False),  # repeats an id
    "silentroach__ok-compare__.ralph__agent__memories.md": (37, False),  # blank lines inside blocks
    "tomsiwik__llm__.ralph__agent__memories.md": (10, True),
    "udecode__plate__.ralph__agent__memories.md": (5, True),
    "whitmo__re.kriate__.ralph__agent__memories.md": (21, True),
}
CONFORMING = [name for name, (_, conforming) in EXPECTED.items() if conforming]
# The project's own file, written as Ralph writes it: the same checks without ../shared.
OWN = DATA / "ralph" / "memories.md"


def read(name: str) -> str:
    return (RALPH / name).read_text(encoding="utf-8")


@needs_shared
def test_every_fixture_file_is_listed():
    assert sorted(p.name for p in RALPH.iterdir()) == sorted(EXPECTED)


@needs_shared
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_memory_count(name):
    parsed = parse_ralph(read(name), name)
    assert len(parsed.memories) == EXPECTED[name][0]
    assert len({m.id for m in parsed.memories}) == len(parsed.memories)
    if EXPECTED[name][1]:
        assert parsed.problems == []


@needs_shared
@pytest.mark.parametrize("name", CONFORMING)
def test_conforming_file_renders_back_byte_for_byte(name):
    text = read(name)
    assert render_ralph(parse_ralph(text).memories) == text


@needs_shared
def test_fields_of_a_memory_are_read_as_written():
    parsed = parse_ralph(read("deedeedev__YtReader__.agent__memories.md"), "yt.md")
    first, second = parsed.memories
    assert first == RalphMemory(
        id="mem-1770396770-99fb", type="pattern", section="Patterns",
        content="Project uses manual DI with AppContainer. Room DB is set up in data/local. "
                "Tests are in androidTest for DB.",
        tags=(), created="2026-02-06", line=5,
    )
    assert (second.type, second.section, second.tags, second.line) == (
        "fix", "Fixes", ("newpipe", "library-quirk"), 13)
    assert second.id_timestamp == 1770397043
    assert parsed.source == "yt.md"


@needs_shared
def test_multi_line_memory_keeps_its_blank_lines():
    memory, = parse_ralph(read("SiSiFx__SpermRace-PROD__.agent__memories.md")).memories
    lines = memory.content.split("\n")
    assert lines[0] == "Bio-Cyberpunk Design System"
    assert lines[1] == "" and lines[2] == "## Core Color Palette"
    assert lines.count("") == 3
    assert lines[-1] == "- Chromatic aberration on critical elements"


@needs_shared
def test_backslashes_and_literal_escapes_stay_as_written():
    parsed = parse_ralph(read("po4yka__runatal-ios__.ralph__agent__memories.md"))
    assert any("@Environment(\\.colorScheme)" in m.content for m in parsed.memories)
    plate = parse_ralph(read("udecode__plate__.ralph__agent__memories.md"))
    assert any("\\" in m.content for m in plate.memories)


@needs_shared
def test_malformed_file_keeps_its_memories_and_reports_the_stray_first_line():
    parsed = parse_ralph(read("louloulin__translateflow__.ralph__agent__memories.md"))
    assert [p.line for p in parsed.problems] == [1]
    assert "outside any memory" in parsed.problems[0].message
    sections = {m.section for m in parsed.memories}
    assert sections == {"Patterns", "Fixes", "Decisions"}
    assert all(m.type == {"Patterns": "pattern", "Fixes": "fix", "Decisions": "decision"}[m.section]
               for m in parsed.memories)


@needs_shared
def test_free_form_notes_give_no_memories_and_say_where_the_text_is():
    parsed = parse_ralph(read("Gleeye__gleeye__.agent__memories.md"))
    assert parsed.memories == []
    assert parsed.problems[0].line == 3
    assert len(parsed.problems) == 7


@needs_shared
def test_crlf_and_missing_final_newline_read_the_same():
    text = read("badlogic__pi-mono__.agent__memories.md")
    plain = parse_ralph(text).memories
    assert parse_ralph(text.replace("\n", "\r\n")).memories == plain
    assert parse_ralph(text.rstrip("\n")).memories == plain


def test_unreadable_blocks_are_reported_with_their_line_and_never_glued_on():
    text = (
        "# Memories\n\n## Fixes\n\n"
        "### mem-1737390000-aaaa\n> first fix\n<!-- tags: a | created: 2025-01-21 -->\n"
        "stray words after a memory\n\n"
        "### mem-oops\n> content of a block with a broken id\n<!-- tags: b | created: 2025-01-21 -->\n\n"
        "### mem-1737390001-bbbb\n<!-- tags: c | created: 2025-01-21 -->\n\n"
        "### mem-1737390002-cccc\n> no metadata here\n\n"
        "### mem-1737390000-aaaa\n> the same id again\n"
    )
    parsed = parse_ralph(text)
    assert [(m.id, m.content) for m in parsed.memories] == [
        ("mem-1737390000-aaaa", "first fix"),
        ("mem-1737390002-cccc", "no metadata here"),
        ("mem-1737390000-aaaa#2", "the same id again"),
    ]
    assert [p.line for p in parsed.problems] == [8, 10, 14, 17, 20, 20]
    assert "mem-oops" in parsed.problems[1].message
    assert "no '> ' content" in parsed.problems[2].message
    assert parsed.memories[1].created == "" and parsed.memories[1].tags == ()
    assert "first at line 5" in parsed.problems[4].message
    assert "imported as mem-1737390000-aaaa#2" in parsed.problems[4].message


@needs_shared
def test_a_repeated_id_keeps_both_memories_and_the_second_reads_back_under_its_new_name(store):
    text = read("raphaelmans__cravingsph__.ralph__agent__memories.md")
    parsed = parse_ralph(text)
    first = next(m for m in parsed.memories if m.id == "mem-1773069036-8345")
    second = next(m for m in parsed.memories if m.id == "mem-1773069036-8345#2")
    assert (first.section, second.section) == ("Patterns", "Fixes")
    assert first.content != second.content
    assert [p.line for p in parsed.problems] == [second.line]
    import_text(store, text)
    assert store.get("mem-1773069036-8345#2").type == "fix"
    again = import_text(store, from_memories(all_memories(store)))
    assert (len(again.added), len(again.updated)) == (0, 0)


def test_bare_blank_line_between_quoted_lines_stays_in_the_memory():
    text = "## Patterns\n### mem-1737372000-a1b2\n> one\n\n> two\n<!-- tags: x | created: 2025-01-20 -->\n"
    memory, = parse_ralph(text).memories
    assert memory.content == "one\n\ntwo"
    assert memory.type == "pattern"


def test_a_memory_before_any_section_is_a_pattern_as_in_ralph():
    memory, = parse_ralph("### mem-1737372000-a1b2\n> alone\n").memories
    assert (memory.section, memory.type) == ("Patterns", "pattern")


def test_rendering_writes_ralphs_template_and_block_layout():
    memory = RalphMemory(id="mem-1737390000-g7h8", type="fix", section="Fixes",
                         content="line one\n\nline three", tags=("docker", "db"), created="2025-01-21")
    assert render_ralph([memory]) == (
        "# Memories\n\n## Patterns\n\n## Decisions\n\n## Fixes\n\n"
        "### mem-1737390000-g7h8\n> line one\n> \n> line three\n"
        "<!-- tags: docker, db | created: 2025-01-21 -->\n\n## Context\n"
    )
    assert render_ralph([]) == "# Memories\n\n## Patterns\n\n## Decisions\n\n## Fixes\n\n## Context\n"


# -- through the store ------------------------------------------------------------------------

from store.interop.importer import import_document  # noqa: E402
from store.interop.ralph import from_memories, to_document  # noqa: E402
from store.browse.search import MemoryFilter, list_memories  # noqa: E402


def import_text(store, text, source="memories.md"):
    return import_document(store, to_document(text, source, vocabulary=store.vocabulary))


def all_memories(store):
    return list_memories(store, MemoryFilter(), limit=None)


@needs_shared
@pytest.mark.parametrize("name", CONFORMING)
def test_conforming_file_through_the_store_comes_back_byte_for_byte(store, clock, name):
    clock.advance(days=365)  # after every file's dates: a creation time after now is brought back to now
    text = read(name)
    summary = import_text(store, text, name)
    assert len(summary.added) == EXPECTED[name][0]
    assert from_memories(all_memories(store)) == text


@needs_shared
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_memory_imports_with_its_id_type_tags_date_and_full_text(store, clock, name):
    clock.advance(days=365)  # after every file's dates, as in use
    parsed = parse_ralph(read(name))
    import_text(store, read(name), name)
    for memory in parsed.memories:
        stored = store.get(memory.id)
        assert (stored.type, stored.tags, stored.content) == (memory.type, memory.tags, memory.content)
        assert stored.source == "imported"
        assert from_memories([stored]).count(f"created: {memory.created} -->") == 1
        assert [e.kind for e in store.events(memory.id)] == ["imported"]


def test_two_similar_ralph_memories_stay_two(store):
    text = ("# Memories\n\n## Patterns\n\n"
            "### mem-1737372000-a1b2\n> Always run cargo test before declaring tasks complete.\n"
            "<!-- tags: workflow | created: 2025-01-20 -->\n\n"
            "### mem-1737372100-c3d4\n> Always run cargo test before declaring a task complete.\n"
            "<!-- tags: workflow | created: 2025-01-20 -->\n")
    assert len(import_text(store, text).added) == 2
    assert {m.id for m in all_memories(store)} == {"mem-1737372000-a1b2", "mem-1737372100-c3d4"}


@needs_shared
def test_importing_the_same_file_again_duplicates_nothing(store):
    text = read("tomsiwik__llm__.ralph__agent__memories.md")
    import_text(store, text)
    events_before = sum(len(store.events(m.id)) for m in all_memories(store))
    again = import_text(store, text)
    assert (len(again.added), len(again.updated), len(again.skipped)) == (0, 0, 10)
    assert len(all_memories(store)) == 10
    assert sum(len(store.events(m.id)) for m in all_memories(store)) == events_before


@needs_shared
def test_an_edited_ralph_file_updates_the_memory_it_names(store):
    text = read("deedeedev__YtReader__.agent__memories.md")
    import_text(store, text)
    edited = text.replace("requires 5 args", "requires five args").replace("newpipe, library-quirk", "newpipe")
    summary = import_text(store, edited)
    assert summary.updated == [("mem-1770397043-6e79", "changed: content, tags")]
    memory = store.get("mem-1770397043-6e79")
    assert "five args" in memory.content and memory.tags == ("newpipe",)
    assert [e.kind for e in store.events(memory.id)] == ["imported", "imported"]
    assert store.events(memory.id)[-1].detail["changes"]["tags"] == [["newpipe", "library-quirk"], ["newpipe"]]


def test_unreadable_date_is_kept_as_written(store):
    text = ("# Memories\n\n## Patterns\n\n## Decisions\n\n## Fixes\n\n"
            "### mem-1737390000-aaaa\n> x fix\n<!-- tags: a | created: someday -->\n\n## Context\n")
    import_text(store, text)
    memory = store.get("mem-1737390000-aaaa")
    assert memory.created_at == 1737390000
    assert from_memories([memory]) == text


def test_memdeck_types_ralph_lacks_go_to_the_nearest_section(store):
    store.add("Never call session.Get() without a nil check", type="pitfall", memory_id="mem-1737390000-bbbb")
    store.add("Services live in internal/", type="architecture", memory_id="mem-1737390001-cccc")
    text = from_memories(all_memories(store))
    parsed = parse_ralph(text)
    assert {(m.id, m.section) for m in parsed.memories} == {
        ("mem-1737390000-bbbb", "Fixes"), ("mem-1737390001-cccc", "Decisions")}
    assert parsed.problems == []


@needs_shared
def test_cli_import_of_free_form_notes_fails_clearly_and_writes_nothing(run_cli):
    result = run_cli("import", str(RALPH / "Gleeye__gleeye__.agent__memories.md"))
    assert result.returncode == 2
    assert "no memories could be read" in result.stderr
    assert "line 3: text outside any memory block" in result.stderr
    assert "Traceback" not in result.stderr
    assert run_cli("list", "--json", check=True).stdout.strip() == "[]"


@needs_shared
def test_cli_import_of_malformed_file_reports_the_stray_line_and_imports_the_rest(run_cli):
    result = run_cli("import", str(RALPH / "louloulin__translateflow__.ralph__agent__memories.md"), check=True)
    assert "39 added" in result.stdout
    assert "line 1: text outside any memory block (line 1); not imported" in result.stderr


@needs_shared
def test_cli_ralph_round_trip_of_a_conforming_file(run_cli, tmp_path):
    source = RALPH / "SiSiFx__SpermRace-PROD__.agent__memories.md"
    run_cli("import", str(source), check=True)
    out = tmp_path / "memories.md"
    run_cli("export", "--format", "ralph", "--output", str(out), check=True)
    assert out.read_bytes() == source.read_bytes()


def test_reimporting_its_own_export_leaves_types_ralph_cannot_tell_apart(store):
    convention = store.add("Error messages are lower case", type="convention").memory
    pitfall = store.add("session.Get() returns nil, not an error", type="pitfall").memory
    summary = import_text(store, from_memories(all_memories(store)))
    assert {why for _, why in summary.skipped} == {"already in the store, unchanged"}
    assert (store.get(convention.id).type, store.get(pitfall.id).type) == ("convention", "pitfall")
    assert store.get(convention.id).source == "explicit"


def test_own_file_reads_renders_back_and_round_trips_through_the_store(store, clock):
    clock.advance(days=365)  # after the file's dates, as in use
    text = OWN.read_text(encoding="utf-8")
    parsed = parse_ralph(text)
    assert parsed.problems == []
    assert [(m.type, m.tags) for m in parsed.memories][-1] == ("fix", ("api", "truncation", "retry"))
    assert [m.section for m in parsed.memories] == ["Patterns"] * 3 + ["Fixes"] * 2
    assert render_ralph(parsed.memories) == text
    assert parse_ralph(text.replace("\n", "\r\n")).memories == parsed.memories
    assert len(import_text(store, text).added) == 5
    assert from_memories(all_memories(store)) == text
    again = import_text(store, text)
    assert (len(again.added), len(again.updated), len(again.skipped)) == (0, 0, 5)


def test_two_memories_of_the_same_second_come_back_in_the_files_order(store, clock):
    clock.advance(days=365)
    text = render_ralph([
        RalphMemory(id="mem-1771387149-0000", type="pattern", section="Patterns", content="The newer one, above",
                    tags=("a",), created="2026-02-18"),
        RalphMemory(id="mem-1771387149-ffff", type="pattern", section="Patterns", content="The older one, below",
                    tags=("b",), created="2026-02-18"),
        RalphMemory(id="mem-1771387149-aaaa", type="fix", section="Fixes", content="Alone in its section",
                    tags=(), created="2026-02-18"),
    ])
    assert len(import_text(store, text).added) == 3
    assert from_memories(all_memories(store)) == text
    again = import_text(store, text)
    assert (len(again.added), len(again.updated), len(again.skipped)) == (0, 0, 3)
