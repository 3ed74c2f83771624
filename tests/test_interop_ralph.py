"""Reading and writing Ralph's `.agent/memories.md` (seed 002) on the real files in fixtures."""

from __future__ import annotations

import pytest

from store.interop.ralph import RalphMemory, parse_ralph, render_ralph
from tests.conftest import FIXTURES

RALPH = FIXTURES / "ralph"

# Every fixture file with the number of memories it holds (SOURCES.tsv) and whether Ralph's own
# writer could have produced it byte for byte.
EXPECTED = {
    "Gleeye__gleeye__.agent__memories.md": (0, False),
    "HealthSamurai__health-samurai-io-bun__.agent__memories.md": (1, True),
    "SiSiFx__SpermRace-PROD__.agent__memories.md": (1, True),
    "Wjiajie__wuxiaX__.agent__memories.md": (1, True),
    "badlogic__pi-mono__.agent__memories.md": (5, True),
    "deedeedev__YtReader__.agent__memories.md": (2, True),
    "louloulin__translateflow__.ralph__agent__memories.md": (39, False),
    "mikeyobrien__ralph-orchestrator__.agent__memories.md": (15, True),
    "po4yka__runatal-ios__.ralph__agent__memories.md": (20, True),
    "tomsiwik__llm__.ralph__agent__memories.md": (10, True),
    "udecode__plate__.ralph__agent__memories.md": (5, True),
}
CONFORMING = [name for name, (_, conforming) in EXPECTED.items() if conforming]


def read(name: str) -> str:
    return (RALPH / name).read_text(encoding="utf-8")


def test_every_fixture_file_is_listed():
    assert sorted(p.name for p in RALPH.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_memory_count(name):
    parsed = parse_ralph(read(name), name)
    assert len(parsed.memories) == EXPECTED[name][0]
    assert len({m.id for m in parsed.memories}) == len(parsed.memories)
    if EXPECTED[name][1]:
        assert parsed.problems == []


@pytest.mark.parametrize("name", CONFORMING)
def test_conforming_file_renders_back_byte_for_byte(name):
    text = read(name)
    assert render_ralph(parse_ralph(text).memories) == text


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


def test_multi_line_memory_keeps_its_blank_lines():
    memory, = parse_ralph(read("SiSiFx__SpermRace-PROD__.agent__memories.md")).memories
    lines = memory.content.split("\n")
    assert lines[0] == "Bio-Cyberpunk Design System"
    assert lines[1] == "" and lines[2] == "## Core Color Palette"
    assert lines.count("") == 3
    assert lines[-1] == "- Chromatic aberration on critical elements"


def test_backslashes_and_literal_escapes_stay_as_written():
    parsed = parse_ralph(read("po4yka__runatal-ios__.ralph__agent__memories.md"))
    assert any("@Environment(\\.colorScheme)" in m.content for m in parsed.memories)
    plate = parse_ralph(read("udecode__plate__.ralph__agent__memories.md"))
    assert any("\\" in m.content for m in plate.memories)


def test_malformed_file_keeps_its_memories_and_reports_the_stray_first_line():
    parsed = parse_ralph(read("louloulin__translateflow__.ralph__agent__memories.md"))
    assert [p.line for p in parsed.problems] == [1]
    assert "outside any memory" in parsed.problems[0].message
    sections = {m.section for m in parsed.memories}
    assert sections == {"Patterns", "Fixes", "Decisions"}
    assert all(m.type == {"Patterns": "pattern", "Fixes": "fix", "Decisions": "decision"}[m.section]
               for m in parsed.memories)


def test_free_form_notes_give_no_memories_and_say_where_the_text_is():
    parsed = parse_ralph(read("Gleeye__gleeye__.agent__memories.md"))
    assert parsed.memories == []
    assert parsed.problems[0].line == 3
    assert len(parsed.problems) == 7


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
    ]
    assert [p.line for p in parsed.problems] == [8, 10, 14, 17, 20]
    assert "mem-oops" in parsed.problems[1].message
    assert "no '> ' content" in parsed.problems[2].message
    assert parsed.memories[1].created == "" and parsed.memories[1].tags == ()
    assert "first at line 5" in parsed.problems[4].message


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
