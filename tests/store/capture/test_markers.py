"""Memory markers: both grammars, the shapes real agents write, and nothing dropped silently."""

from __future__ import annotations

from store.capture.markers import scan
from tests.data_support import DATA, FIXTURES, needs_shared

MARKERS = FIXTURES / "markers"
SPRINT_10 = MARKERS / "LeenVandelied__MyTimeline__docs__memory__sprints__sprint-10__issue-52-done.md"
SPRINT_79 = MARKERS / "LeenVandelied__MyTimeline__docs__memory__sprints__sprint-79__issue-463-done.md"
# The project's own notes in the same shapes: markers in backticks in list items, and a block.
NOTES = DATA / "markers" / "sprint-notes.md"


def test_own_notes_markers_in_list_items_and_a_multi_line_block():
    found = scan(NOTES.read_text(encoding="utf-8"))
    assert [(m.word, m.line) for m in found.markers] == [("business-rule", 9), ("decision", 10), ("pitfall", 12)]
    rule, decision, pitfall = found.markers
    assert rule.text == "Invoice numbers are unique per account and never reused."
    assert decision.text == "Retries happen in the worker, not in the request."
    assert pitfall.text.splitlines() == ["Context: the refund job read archived rows.",
                                         "Cause: the native query skips the soft-delete filter.",
                                         "Fix: filter on archived_at in the query itself."]
    assert not found.rejected and not found.quoted


@needs_shared
def test_sprint_10_markers_in_backticks_inside_list_items_are_found_with_their_full_line():
    found = scan(SPRINT_10.read_text(encoding="utf-8"))
    assert [(m.word, m.scope, m.line) for m in found.markers] == [
        ("business-rule", None, 33), ("decision", None, 34), ("pitfall", None, 35)]
    rule, decision, pitfall = found.markers
    assert rule.text.startswith("Ownership catégorie : `owner_id` FK users ;")
    assert rule.text.endswith("non modifiable). Supersede AP-CAT-09.")
    assert decision.text == "ADR-002 ownership catégorie."
    assert pitfall.text.startswith("Réassignation catégorie : `ProductEntity @SQLRestriction(\"archived=false\")`")
    assert pitfall.text.endswith("Réassignation AVANT delete, même `@Transactional`.")
    assert not found.rejected and not found.quoted


@needs_shared
def test_sprint_79_markers_take_their_whole_multi_line_block():
    text = SPRINT_79.read_text(encoding="utf-8")
    found = scan(text)
    assert [(m.word, m.line) for m in found.markers] == [
        ("pitfall", 149), ("decision", 157), ("pattern", 166), ("pitfall", 174)]
    first, decision, pattern, last = found.markers
    assert first.text.splitlines()[0] == "Context: E2E #463 — purge post-test des catégories semées sur le compte partagé."
    assert first.text.splitlines()[-1] == "sur la requête, pas sur l'annotation."
    assert len(first.text.splitlines()) == 7
    assert decision.text.splitlines()[1].startswith("Decision: nettoyage post-test")
    assert decision.text.endswith("baseline -> 0 + 2 avec le correctif.")
    assert "Anti-pattern: `afterEach` recopié" in pattern.text
    assert last.text.endswith("qui couvre\nl'intra-fichier que la permutation n'atteint pas.")
    # every block line of the source is in some memory: nothing between marker and blank line is lost
    lines = text.splitlines()
    for marker in found.markers:
        block = []
        for line in lines[marker.line:]:
            if not line.strip():
                break
            block.append(line)
        assert marker.text.splitlines()[1:] == block


def test_dex_and_bracket_grammars_with_scope_bold_and_mid_line():
    found = scan("I learned: MEMORY:pattern:Tests use testify/assert\n"
                 "- **[MEMORY:timing:jellyfin]** Takes 60s to start\n"
                 "So [MEMORY:dependency:caddy] must start after WireGuard\n")
    assert [(m.grammar, m.word, m.scope, m.text) for m in found.markers] == [
        ("dex", "pattern", None, "Tests use testify/assert"),
        ("bracket", "timing", "jellyfin", "Takes 60s to start"),
        ("bracket", "dependency", "caddy", "must start after WireGuard"),
    ]


def test_a_list_item_marker_ends_at_the_next_item_but_keeps_its_indented_lines():
    found = scan("- [MEMORY:fix] Restart the worker\n  after the migration\n- unrelated item\n")
    assert found.markers[0].text == "Restart the worker\nafter the migration"


def test_empty_and_unreadable_markers_are_rejected_with_their_line():
    found = scan("ok\n[MEMORY:pitfall]\n\n[MEMORY:] text\n[MEMORY:pitfall oops\nMEMORY:fix\n[MEMORY:two words] x\n")
    assert [(r.line, r.reason) for r in found.rejected] == [
        (2, "no text after the marker"),
        (4, "no type in the marker"),
        (5, "marker without its closing ]"),
        (6, "no ':' and text after the type"),
        (7, "unreadable marker [MEMORY:two words]"),
    ]
    assert not found.markers


def test_markers_in_code_fences_are_quoted_examples_and_prose_mentions_are_not_markers():
    found = scan("The MEMORY: prefix is described below.\n```\nMEMORY:pattern:an example\n```\n")
    assert not found.markers and not found.rejected
    assert found.quoted == [3]


def test_line_numbers_can_be_offset_to_the_whole_file():
    assert scan("x\n[MEMORY:fix] y", first_line=10).markers[0].line == 11
