"""The sameness decision's rules, one by one, on texts (store.engine.sameness), and its measure
on the project's labelled pairs (tests/data/pairs/ralph-pairs.yaml)."""

from __future__ import annotations


import pytest

from store.engine.errors import InvalidInput
from store.engine.sameness import Thresholds, compare, read
from store.evaluation.sameness import evaluate, load_pairs
from tests.data_support import DATA

PAIRS = DATA / "pairs" / "ralph-pairs.yaml"


@pytest.mark.parametrize("old, new", [
    ("Run the tests before committing", "Before committing, run the tests"),
    ("Edit fails before a Read of the file", "edit fails before a read of the file."),
    ("Use single-quoted rg patterns when matching markdown backticks",
     "Note: use single-quoted rg patterns when matching markdown backticks"),
    ("The colour of the status badge follows the theme", "The color of the status badge follows the theme"),
])
def test_the_same_statement_reworded_is_same(old, new):
    verdict = compare(old, new)
    assert verdict.kind == "same", verdict.explain()


@pytest.mark.parametrize("old, new, changed", [
    ("Use Node 18 for the build image", "Use Node 20 for the build image", ("18", "20")),
    ("The API listens on port 3000", "The API listens on port 8080", ("3000", "8080")),
    ("Pin ruff to version 0.4.2 in CI", "Pin ruff to version 0.5.0 in CI", ("0.4.2", "0.5.0")),
])
def test_a_changed_number_or_version_is_a_sure_update(old, new, changed):
    verdict = compare(old, new)
    assert (verdict.kind, verdict.sure) == ("update", True), verdict.explain()
    assert verdict.signals["specifics_old"] == [changed[0]] and verdict.signals["specifics_new"] == [changed[1]]


@pytest.mark.parametrize("old, new", [
    ("Config lives in src/config/app.yaml", "Config lives in src/settings/app.yaml"),  # a path
    ("Call `load_tenant()` before rendering", "Call `fetch_tenant()` before rendering"),  # an identifier
    ("Use Redis for caching", "Use Memcached for caching"),  # a name
    ("Tests run with vitest", "Tests run with jest"),  # a word replaced
    ("writer 0 note 1 about subsystem 1", "writer 0 note 2 about subsystem 2"),  # two values changed
    ("Run the linter before pushing", "Run the linter and the type checker before pushing"),  # added
])
def test_other_changed_specifics_and_words_are_updates_a_person_confirms(old, new):
    verdict = compare(old, new)
    assert verdict.kind == "update" and not verdict.sure, verdict.explain()


@pytest.mark.parametrize("old, new", [
    ("Never call the payments API from the web worker", "Always call the payments API from the web worker"),
    ("Don't use npm in this repository", "Use npm in this repository"),
    ("The cache must not be shared between tenants", "The cache must be shared between tenants"),
    ("Enable strict mode in the TypeScript config", "Disable strict mode in the TypeScript config"),
    ("Run migrations before deploying", "Run migrations after deploying"),
    ("We no longer pin the Postgres image", "We pin the Postgres image"),
    ("Il faut utiliser le cache pour les images", "Il ne faut jamais utiliser le cache pour les images"),
    ("Den Cache für Bilder verwenden", "Den Cache für Bilder nicht verwenden"),
    ("N'utilisez pas le cache pour les images", "Utilisez le cache pour les images"),
])
def test_opposite_polarity_on_the_same_subject_is_a_contradiction(old, new):
    verdict = compare(old, new)
    assert verdict.kind == "contradiction", verdict.explain()
    assert verdict.signals["polarity"]


@pytest.mark.parametrize("old, new", [
    ("Use Redis for caching", "Deploys go out on Fridays after the standup"),
    ("failure: cmd=cargo fmt --check, error='diff in src/main.rs after adding the lexer', next=run cargo fmt",
     "failure: cmd=cargo test, error='3 tests failed in the parser module after the refactor', next=fix the parser"),
])
def test_statements_about_other_things_are_distinct(old, new):
    assert compare(old, new).kind == "distinct"


@pytest.mark.parametrize("old, new, why", [
    # Another file in the error: the same command failing on something else.
    ("failure: cmd=cargo fmt --all -- --check, exit=1, error='rustfmt diff in src/main.rs', next=run cargo fmt --all",
     "failure: cmd=cargo fmt --all -- --check, exit=1, error='rustfmt diff in src/lexer.rs', next=run cargo fmt --all",
     "error names src/main.rs -> src/lexer.rs"),
    # Another test run, the same words around it.
    ("expected RED: cmd=cargo test --test verify_benchmark_gate_thresholds, exit=101, error='verify passes', next=implement it",
     "expected RED: cmd=cargo test --test verify_manual_evidence_requirements, exit=101, error='verify passes', next=implement it",
     "cmd … verify_benchmark_gate_thresholds -> … verify_manual_evidence_requirements"),
])
def test_records_of_different_failures_are_distinct_and_say_what_failed(old, new, why):
    verdict = compare(old, new)
    assert verdict.kind == "distinct", verdict.explain()
    assert verdict.signals["failed"] == why and f"another failure: {why}" in verdict.explain()


def test_a_record_of_the_same_failure_with_new_advice_is_an_update():
    old = ("failure: cmd=python3 -m pytest -q tests/test_cli.py, exit=1, error=No module named pytest, "
           "next=use a local assertion script or install pytest in the environment")
    new = ("failure: cmd=python3 -m pytest -q tests/test_cli.py, exit=1, error='No module named pytest', "
           "next=use static checks and git history when pytest is unavailable")
    verdict = compare(old, new)
    assert verdict.kind == "update" and "failed" not in verdict.signals, verdict.explain()
    # The same record twice is the same, and the same command failing the opposite way contradicts.
    assert compare(old, old.replace("failure:", "Failure:")).kind == "same"
    assert compare("failure: cmd=rg -n spec, exit=1, error='no matches in tests', next=add || true",
                   "failure: cmd=rg -n spec, exit=1, error='some matches in tests', next=add || true").kind == "contradiction"


def test_a_record_changed_in_several_places_is_another_record_of_the_same_shape():
    old = ("TASK-012 is complete once commit 3868e87 is verified by cargo test -p slicer-core --test "
           "triangle_mesh_slicer_tdd, then docs/07_implementation_status.md marks Triangle slicing done.")
    new = ("TASK-013 is complete once commit 5136946 is verified by cargo test -p slicer-core --test "
           "geometry_helpers_tdd, then docs/07_implementation_status.md marks Geometry helpers done.")
    verdict = compare(old, new)
    assert verdict.kind == "distinct" and verdict.signals["places"] >= 3, verdict.explain()
    assert "another record of the same shape" in verdict.explain()
    # Values bumped together in several places are still one fact updated.
    bumped = compare("Build with Node 18, pnpm 8 and turbo 1 in CI", "Build with Node 20, pnpm 9 and turbo 2 in CI")
    assert bumped.kind == "update", bumped.explain()


def test_the_reading_names_each_kind_of_specific():
    reading = read('Set `MAX_RETRIES` to 5 in src/net/retry.py, and give Postgres --no-sync and NODE_ENV=prod')
    assert {"max_retries", "5", "src/net/retry.py", "postgres", "--no-sync", "node_env"} <= reading.specifics
    assert {"set", "give", "prod"} <= reading.subject


def test_every_decision_explains_itself_in_one_line():
    line = compare("Use Node 18 for the build image", "Use Node 20 for the build image").explain()
    assert line.startswith("update") and "specifics 18 -> 20" in line and "\n" not in line


def test_thresholds_come_from_config():
    from store import Config

    config = Config.defaults().with_overrides({"sameness.related": 0.9})
    thresholds = config.sameness  # the section is the thresholds, as typed
    assert isinstance(thresholds, Thresholds)
    assert thresholds.related == 0.9
    # With a stricter line, a pair sharing half its words is distinct.
    assert compare("Use Redis for caching", "Use Memcached for caching", thresholds=thresholds).kind == "distinct"


def test_on_the_held_out_half_of_the_pairs_nothing_is_lost_and_the_targets_hold():
    report = evaluate(load_pairs(PAIRS), half="test")
    assert report.pairs >= 60
    assert report.silent_losses == []  # no update or contradiction decided "same"
    assert report.retired_wrongly == []
    assert report.recall["update"] >= 0.8 and report.recall["contradiction"] >= 0.8
    assert report.precision["same"] >= 0.9


def test_the_pairs_file_has_its_classes_sources_and_halves():
    import yaml

    data = yaml.safe_load(PAIRS.read_text(encoding="utf-8"))
    pairs = data["pairs"]
    assert len(pairs) >= 120
    assert {p["label"] for p in pairs} == {"same", "update", "contradiction", "related", "unrelated"}
    assert all(p["source"].split("#")[0].endswith(".md") for p in pairs)
    assert {p["half"] for p in pairs} == {"tune", "test"}
    assert "licence" in PAIRS.read_text(encoding="utf-8")[:1200]


def test_a_bad_pairs_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "pairs.yaml"
    bad.write_text("pairs:\n  - {label: maybe, old: a, new: b}\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="pair 1: label must be one of"):
        load_pairs(bad)
    bad.write_text("just text", encoding="utf-8")
    with pytest.raises(InvalidInput, match="non-empty list `pairs`"):
        load_pairs(bad)


def test_the_semantic_signal_can_only_send_a_same_to_review():
    old, new = "Run the tests before committing", "Before committing, run the tests"
    assert compare(old, new, semantic=0.95).kind == "same"
    far = compare(old, new, semantic=0.3)
    assert (far.kind, far.sure) == ("update", False) and far.signals["semantic"] == 0.3
    # It never turns an update or a contradiction into "same".
    assert compare("Use Node 18 for the build image", "Use Node 20 for the build image", semantic=1.0).kind == "update"


def test_with_the_semantic_extra_a_rewording_still_reinforces(store):
    pytest.importorskip("wordllama")
    first = store.add("Run the tests before committing", type="pattern").memory
    again = store.add("Before committing, run the tests", type="pattern")
    assert not again.created and again.memory.id == first.id
