"""Retrieval on small corpora of our own: identifiers as code writes them, generic verbs, the
semantic signal, the relevance gate, signals that stay in 0..1, and vectors kept in step with
the model."""

from __future__ import annotations

import json
import math

import pytest

from postgres_server import raw_connect
from store.index import embedding
from store.backends.opening import connect
from store.engine.config import Config
from store.index.identifiers import identifier_parts, split_identifier, split_words
from store.retrieval.injection import InjectionContext, prime
from store.retrieval.ranking import SIGNALS, keywords, rank, root, specific
from store.index.reindex import stale_vectors
from tests.data_support import T0

pytestmark = pytest.mark.both_backends

semantic_extra = pytest.mark.skipif(not embedding.available(), reason="needs memdeck[semantic]")


def _ids(items):
    return [r.memory.id for r in items]


def _about(result):
    """The ids of a block's memories with evidence (what the gate let in), without the filler
    after them (`injection.gate.fill`)."""
    return [r.memory.id for r in result.included if not r.filler]


def words_only(store):
    store.config = store.config.with_overrides({"injection.semantic": False})


@pytest.fixture(params=["semantic", "words alone"])
def either(request, store):
    """The store, ranked with the semantic signal and then on words alone."""
    if request.param == "semantic" and not embedding.available():
        pytest.skip("needs memdeck[semantic]")
    if request.param == "words alone":
        words_only(store)
    return store


def test_identifiers_split_into_the_words_a_person_types():
    assert split_identifier("useSearchParams") == ["use", "search", "params"]
    assert split_identifier("parseJSONBody") == ["parse", "json", "body"]
    assert split_identifier("snake_case-and.dotted/path") == ["snake", "case", "and", "dotted", "path"]
    assert split_identifier("ÉtéFort") == ["été", "fort"]
    assert identifier_parts("call admin.updateRestaurant, not x") == ["admin", "update", "restaurant"]
    assert split_words("useSearchParams") == ["usesearchparams", "use", "search", "params"]
    assert "params" in keywords("the useSearchParams hook")


def test_identifier_parts_of_ascii_text_match_every_token_split():
    """ASCII text takes a quicker path (one scan for the runs that may split, their parts cached):
    the same parts, in the same order, as splitting every token the way non-ASCII text is."""
    import random

    from store.index.identifiers import _TOKEN

    def by_every_token(text: str) -> list[str]:
        found: dict[str, None] = {}
        for token in _TOKEN.findall(text):
            parts = split_identifier(token)
            if len(parts) > 1:
                found.update(dict.fromkeys(p for p in parts if len(p) > 1))
        return list(found)

    rng = random.Random(16)
    alphabet = "aZk9_.-/: \n\tQx("
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(20_000)]
    texts += ["_foo_bar_ __init__ --x-- foo..bar a.b.c/d:e HTTPServer v2Api parseJSONBody ABc aB 12ab",
              "see src/app/router.ts:42 and load_invoice17.py, not AB or x_1"]
    for text in texts:
        assert identifier_parts(text) == by_every_token(text), text
        assert identifier_parts(text + " Ünicode") == by_every_token(text + " Ünicode"), text


def test_a_task_in_plain_words_finds_a_memory_that_names_the_identifier(store):
    words_only(store)
    hook = store.add("Wrap useSearchParams in a Suspense boundary or the static build fails.",
                     type="pitfall").memory
    store.add("Buttons use the primary colour for the main action.", type="convention")
    # In a store of two memories two shared words are no more than chance gives (the gate's
    # business, `store.retrieval.chance`); the ranking still finds the memory by its identifier.
    ranked = rank(store, InjectionContext(task="the search params of the page break prerendering")).items
    assert ranked[0].memory.id == hook.id and ranked[0].signals["words"] > 0 and ranked[1].signals["words"] == 0


def test_a_task_naming_an_identifier_finds_the_memory_in_plain_words(store):
    words_only(store)
    parser = store.add("The request body parser rejects JSON with a trailing comma.", type="pitfall").memory
    store.add("Deploys go out on Tuesdays after the release review.", type="convention")
    ranked = rank(store, InjectionContext(task="parseJsonBody throws on legacy clients",
                                          paths=("src/http/parse_json_body.py",))).items
    assert ranked[0].memory.id == parser.id and ranked[0].signals["words"] > 0 and ranked[1].signals["words"] == 0


def test_generic_verbs_are_known_in_every_form():
    assert {root(w) for w in ("fix", "fixes", "fixed", "fixing")} == {"fix"}
    assert root("update") == root("updated") == root("updating")
    assert root("refactoring") == root("refactor")


def test_a_generic_verb_alone_injects_nothing(either):
    store = either
    store.add("failure: cmd=cargo test, exit=101, error=fixed by rerunning with --locked", type="fix")
    store.add("Fixed the flaky upload test by waiting for the worker.", type="fix")
    for task in ("fix", "Fix it.", "add, update, refactor and fix"):
        result = prime(store, InjectionContext(task=task))
        assert result.included == [] and result.block == ""
        assert all("no specific word" in r.reason for r in result.excluded)


def test_a_fix_task_about_something_else_does_not_pull_in_a_log_that_was_fixed(either):
    store = either
    store.add("failure: cmd=cargo fmt --check, exit=1, error=diff in src/lexer.rs, next=fixed formatting",
              type="fix")
    store.add("Release binaries are signed in CI with the project's key.", type="decision")
    result = prime(store, InjectionContext(task="Fix the dark-mode toggle in the site header"))
    assert result.included == []



def test_the_projects_own_name_and_hat_verbs_are_no_evidence():
    generic = frozenset(root(w) for w in ("fix", "add", "implement", "update", "make", "refactor",
                                          "plan", "review", "investigate"))
    words = keywords("Plan and review shipping Tonic as a VS Code extension")
    assert specific(words, generic, "tonic") == ["shipping", "vs", "code", "extension"]
    assert specific(keywords("investigate ralph-orchestrator loops"), generic, "ralph-orchestrator") == ["loops"]


def test_a_task_naming_only_the_project_injects_nothing(either):
    store = either
    for text in ("tonic run reads tonic.toml for the project's entry file.",
                 "The tonic lexer keeps byte offsets for every token.",
                 "tonic check stops at the first type error."):
        store.add(text, type="pattern", project="tonic")
    result = prime(store, InjectionContext(task="Plan the Tonic packaging for Homebrew", project="tonic"))
    assert result.included == [] and result.tokens == 0
    assert all(r.reason.startswith("below the gate: nothing here is about the task") for r in result.excluded)


def test_weak_evidence_injects_only_the_best_candidate(store):
    """One shared word, found in two of three memories, is some evidence and not enough: with the
    mark set where that is weak, only the best candidate goes in, and the others say why."""
    words_only(store)
    store.config = store.config.with_overrides({"injection.gate.word_share": 0.3})
    store.add("Webhook deliveries retry three times with backoff.", type="pattern")
    store.add("Webhook secrets rotate every month.", type="pattern")
    store.add("Invoices are numbered per tenant and year.", type="convention")
    result = prime(store, InjectionContext(task="webhook signature header"))
    assert len(result.included) == 1
    assert "the best candidate; weak evidence" in result.included[0].gate
    out = [r for r in result.excluded if "webhook" in r.memory.content.lower()]
    assert out and all("only the best candidate goes in" in r.reason for r in out)
    # Unsure, the gate spends little: a best candidate longer than its share of the budget stays out.
    small = prime(store, InjectionContext(task="webhook signature header", budget=100))
    assert small.included == [] and small.tokens == 0
    assert any("the best candidate, but ~" in r.reason and "of the budget" in r.reason for r in small.excluded)


def test_the_gates_verdict_carries_the_evidence_it_weighed(store):
    store.add("Webhook deliveries retry three times with exponential backoff.", type="pattern")
    store.add("Invoices are numbered per tenant and year.", type="convention")
    on_topic = prime(store, InjectionContext(task="webhook delivery retries and backoff"))
    assert _about(on_topic) and all(r.gate.startswith("in: own evidence") and "relevance" in r.gate
                                    for r in on_topic.included if not r.filler)
    assert not any(r.filler for r in on_topic.included)  # filler only when the gate is sure
    off = prime(store, InjectionContext(task="bluetooth pairing on android tablets"))
    assert off.included == []
    gate = off.excluded[0].gate
    assert gate.startswith("below the gate: nothing here is about the task (evidence")
    assert f"/{store.config.injection.gate.word_surprise:.1f} over chance or share" in gate
    if embedding.available():
        assert "cosine" in gate and "over the typical cosine" in gate


@semantic_extra
def test_a_paraphrase_is_found_with_the_semantic_extra_and_not_by_words(store):
    saved = store.add("Saved restaurants live in localStorage until the favourites endpoint exists, "
                      "so they do not follow a customer to another device.", type="context").memory
    store.add("The build fails when a page reads the query string outside a Suspense boundary.", type="pitfall")
    store.add("Order totals are computed on the server in cents.", type="convention")
    task = "Diners lose the places they bookmarked when they sign in on their phone"
    result = prime(store, InjectionContext(task=task))
    assert _ids(result.included)[0] == saved.id
    assert result.included[0].signals["semantic"] == 1.0
    words_only(store)
    assert saved.id not in _ids(prime(store, InjectionContext(task=task)).included)


def test_the_gate_keeps_a_relevant_memory_ranked_below_a_strong_one(either):
    store = either
    strong = store.add("Webhook deliveries retry three times with exponential backoff; the retry "
                       "timeout is 30 seconds per webhook delivery.", type="pattern").memory
    weaker = store.add("Raising the webhook delivery timeout above a minute makes the queue workers pile up.",
                       type="pitfall").memory
    unrelated = store.add("Invoices are numbered per tenant and year.", type="convention").memory
    store.add("The PDF renderer needs the fonts folder mounted.", type="dependency")
    store.add("Dark mode follows the operating system's setting.", type="decision")
    store.config = store.config.with_overrides({"injection.gate.fill": False})  # the gate's own cut, with no filler after it
    result = prime(store, InjectionContext(task="change the webhook delivery retry timeout"))
    order = _ids(result.included)
    assert order[:2] == [strong.id, weaker.id]
    assert result.included[1].signals["relevance"] < result.included[0].signals["relevance"]
    assert unrelated.id not in order
    out = {r.memory.id: r for r in result.excluded}[unrelated.id]
    assert out.reason.startswith("below the gate") and out.reason == out.gate


def test_fill_puts_other_memories_only_in_the_room_an_on_topic_task_leaves(either):
    """`injection.gate.fill`: on topic, candidates nothing says are about the task go in after
    every memory with evidence, marked as filler, and never displace one (even more confident,
    of the same hat); a task about nothing here still gets nothing."""
    store = either
    strong = store.add("Webhook deliveries retry three times with exponential backoff; the retry "
                       "timeout is 30 seconds per webhook delivery.", type="pattern", confidence=0.5).memory
    weaker = store.add("Raising the webhook delivery timeout above a minute makes the queue workers pile up.",
                       type="pitfall", confidence=0.5).memory
    unrelated = store.add("Invoices are numbered per tenant and year.", type="convention",
                          confidence=0.95, hat="creator").memory
    task = "change the webhook delivery retry timeout"
    # By default filler needs a sure gate (`injection.gate.fill_strength`): none here.
    assert not any(r.filler for r in prime(store, InjectionContext(task=task, hat="creator")).included)
    # The whole budget on topic (spending in proportion to confidence is another test's).
    store.config = store.config.with_overrides({"injection.gate.fill_strength": 1.0,
                                                "injection.gate.full_strength": 1.0})
    filled = prime(store, InjectionContext(task=task, hat="creator"))
    assert _ids(filled.included) == [strong.id, weaker.id, unrelated.id]
    last = filled.included[-1]
    assert last.filler and last.gate.startswith("in: filler: own evidence") and last.reason.startswith("filler")
    assert not any(r.filler for r in filled.included[:2])
    # The smallest budget that holds the two with evidence: the filler is the one over budget.
    store.config = store.config.with_overrides({"injection.gate.fill": False})
    relevant = prime(store, InjectionContext(task=task, hat="creator"))
    assert _ids(relevant.included) == [strong.id, weaker.id]
    fits = next(b for b in range(relevant.tokens, 2 * relevant.tokens)
                if len(prime(store, InjectionContext(task=task, hat="creator", budget=b)).included) == 2)
    store.config = store.config.with_overrides({"injection.gate.fill": True})
    tight = prime(store, InjectionContext(task=task, hat="creator", budget=fits))
    assert _ids(tight.included) == [strong.id, weaker.id]
    assert {r.memory.id: r.reason for r in tight.excluded}[unrelated.id] == "over budget"
    nothing = prime(store, InjectionContext(task="investigate the flaky bluetooth pairing on android"))
    assert nothing.included == []


def test_json_flags_the_filler_and_the_block_puts_it_apart(store, run_cli, tmp_path):
    store.add("Webhook deliveries retry three times with exponential backoff; the retry timeout is 30 "
              "seconds per webhook delivery.", type="pattern")
    store.add("Raising the webhook delivery timeout above a minute makes the queue workers pile up.", type="pitfall")
    unrelated = store.add("Invoices are numbered per tenant and year.", type="convention").memory
    sure = tmp_path / "sure.yaml"  # filler whenever the task is on topic, not only when the gate is sure
    sure.write_text("injection:\n  gate:\n    fill_strength: 1.0\n")
    shown = json.loads(run_cli("prime", "--task", "change the webhook delivery retry timeout", "--format", "json",
                               check=True, env={"MEMDECK_CONFIG": str(sure)}).stdout)
    assert [item["filler"] for item in shown["included"]] == [False, False, True]
    assert shown["included"][-1]["id"] == unrelated.id
    assert shown["block"].index("### Also in this project (not matched to the task)") < shown["block"].index("Invoices")


def test_a_task_about_nothing_here_injects_nothing_and_says_why(either):
    store = either
    store.add("Invoices are numbered per tenant and year.", type="convention")
    store.add("The PDF renderer needs the fonts folder mounted.", type="dependency")
    result = prime(store, InjectionContext(task="investigate the flaky bluetooth pairing on android"))
    assert result.included == []
    assert all(r.reason.startswith("below the gate: nothing here is about the task") for r in result.excluded)


HOSTILE = [
    # confidence, last_used_at, use_count
    (7.5, T0 + 86400 * 3650, 10),  # above 1, used ten years from now
    (-3.0, -1e18, -5),  # below 0, used before time began
    (1e308, 1e308, 2 ** 62),
]


def test_every_signal_stays_within_0_and_1_whatever_is_stored(store):
    ids = []
    for n, (confidence, last_used, uses) in enumerate(HOSTILE):
        memory = store.add(f"Webhook retry note number {n} about the delivery queue.", type="pattern",
                           hat="creator", reinforce=False).memory
        store.db.execute_sql(store.backend.fmt("UPDATE memory SET confidence = {p}, last_used_at = {p}, "
                                               "use_count = {p} WHERE id = {p}"),
                             (confidence, last_used, uses, memory.id))
        ids.append(memory.id)
    result = prime(store, InjectionContext(task="webhook retry delivery queue", hat="creator"))
    candidates = [*result.included, *result.excluded]
    assert len(candidates) == len(HOSTILE)
    for item in candidates:
        for name, value in item.signals.items():
            assert 0.0 <= value <= 1.0 and not math.isnan(value), (item.memory.confidence, name, value)
        assert set(SIGNALS) <= set(item.signals)
    future = next(r for r in candidates if r.memory.id == ids[0])
    assert future.signals["recency"] == 1.0 and future.signals["confidence"] == 1.0


def test_explain_and_json_show_the_semantic_signal_and_the_gates_verdict_for_every_candidate(store, run_cli):
    store.add("Webhook deliveries retry three times with backoff.", type="pattern")
    store.add("Invoices are numbered per tenant and year.", type="convention")
    shown = json.loads(run_cli("prime", "--task", "webhook delivery retries", "--format", "json",
                               check=True).stdout)
    candidates = shown["included"] + shown["excluded"]
    assert len(candidates) == 2
    for item in candidates:
        assert {"semantic", "cosine", "text", "relevance"} <= set(item["signals"])
        assert item["gate"].startswith(("in:", "below the gate:"))
        assert item["filler"] == item["gate"].startswith("in: filler")  # a flag as well as the verdict
    explained = run_cli("prime", "--task", "webhook delivery retries", "--explain", check=True).stdout
    assert "sem=" in explained and "cos=" in explained and "gate" in explained
    assert "in: own evidence" in explained


def test_explain_prints_the_gates_verdict_once_for_a_candidate_it_keeps_out(store, run_cli):
    store.add("Webhook deliveries retry three times with backoff.", type="pattern")
    kept_out = store.add("Invoices are numbered per tenant and year.", type="convention").memory
    shown = json.loads(run_cli("prime", "--task", "webhook delivery retries", "--format", "json",
                               check=True).stdout)
    verdict = next(r["gate"] for r in shown["excluded"] if r["id"] == kept_out.id)
    assert verdict.startswith("below the gate:")
    explained = run_cli("prime", "--task", "webhook delivery retries", "--explain", check=True).stdout
    row = next(line for line in explained.splitlines() if kept_out.id in line)
    assert row.count("below the gate") == 2  # "below the gate (see gate)", then the verdict
    assert verdict[:30] in row and "(see gate)" in row


@pytest.mark.parametrize("columns", [200, 120, 80, 50])
def test_explain_uses_the_width_it_has_and_wraps_every_reason_never_cuts_it(store, run_cli, columns):
    """Issue 43 item 5: at COLUMNS=200 the gate column was cut at 160 with "…"."""
    store.add("Webhook deliveries retry three times with exponential backoff and jitter; a dead "
              "letter queue keeps the ones that fail for a day, for the operator to replay by hand.",
              type="pattern", tags=["webhooks", "retries"], hat="critic")
    store.add("Invoices are numbered per tenant and year.", type="convention")
    task = ("webhook delivery retries", "--hat", "critic")
    shown = json.loads(run_cli("prime", "--task", *task, "--json", check=True).stdout)
    explained = run_cli("prime", "--task", *task, "--explain", env={"COLUMNS": str(columns)},
                        check=True).stdout
    why = explained[explained.index("## Why"):]
    assert "…" not in why
    assert max(len(line) for line in why.splitlines()) <= columns
    words = set(why.split())
    for item in shown["included"] + shown["excluded"]:
        whole = item["reason"] if item["reason"] != item["gate"] else "below the gate"
        assert set(whole.split()) <= words, (columns, whole)
        assert set(item["gate"].split(" (evidence")[0].split()) <= words, (columns, item["gate"])
    if columns >= 200:  # the rows use the width there is (they stopped at 160)
        assert max(len(line) for line in why.splitlines()) > 160


@semantic_extra
def test_vectors_are_written_with_the_model_and_a_model_change_is_reindexed(store, run_cli):
    memory = store.add("Webhook deliveries retry three times with backoff.", type="pattern").memory
    model, = store.db.execute_sql("SELECT model FROM memory_vector JOIN vector_block ON vector_block.id = block_id "
                                  f"WHERE memory_id = {store.backend.param}", (memory.id,)).fetchone()
    assert model == embedding.MODEL_ID
    store.edit(memory.id, content="Webhook deliveries retry five times with backoff.")
    assert stale_vectors(store) == 0
    store.db.execute_sql("UPDATE vector_block SET model = 'an-older-model'")
    assert stale_vectors(store) == 1
    # A vector of another model is never compared with the task's.
    result = prime(store, InjectionContext(task="webhook retries"))
    assert [r.signals["cosine"] for r in result.included] == [0.0]
    assert "1 without a vector" in run_cli("reindex", "--dry-run", check=True).stderr
    assert "1 vectors from" in run_cli("reindex", check=True).stderr
    assert stale_vectors(store) == 0


def test_a_memory_written_by_another_program_is_indexed_at_the_next_write(store, db_path):

    store.add("The project's first memory.", type="context")
    other = raw_connect(db_path)
    with other:
        other.execute(
            "INSERT INTO memory (id, project_id, type, title, content, confidence, source, status, "
            "created_at, updated_at, status_changed_at, content_hash) VALUES "
            "('mem-1700000000-abcd', 1, 'pitfall', 'useSearchParams needs Suspense', "
            "'useSearchParams needs Suspense', 0.7, 'explicit', 'active', 1.0, 1.0, 1.0, 'x')")
    other.close()
    store.add("Another memory, written through the store.", type="context")
    assert store.get("mem-1700000000-abcd")
    words, = store.db.execute_sql("SELECT words FROM memory WHERE id = 'mem-1700000000-abcd'").fetchone()
    assert words.split() == ["use", "search", "params"]


@pytest.mark.sqlite_only
def test_a_migrated_store_gets_identifier_words_and_vectors_for_what_it_held(db_path, clock):
    from store import Config, Store

    db, _ = connect(db_path, target_version=4)
    db.execute_sql("INSERT INTO project (id, name, created_at) VALUES (1, 'demo', 1.0)")
    db.execute_sql(
        "INSERT INTO memory (id, project_id, type, title, content, confidence, source, status, "
        "created_at, updated_at, status_changed_at, content_hash) VALUES ('mem-1700000000-0001', 1, "
        "'pitfall', 'parseJsonBody', 'parseJsonBody rejects trailing commas', 0.7, 'explicit', 'active', "
        "1.0, 1.0, 1.0, 'x')")
    db.close()
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as store:
        assert store.backup is not None
        store.config = store.config.with_overrides({"injection.semantic": False})
        result = prime(store, InjectionContext(task="the json body parser"))
        assert _ids(result.included) == ["mem-1700000000-0001"]
        assert stale_vectors(store) == (0 if embedding.available() else 1)


@semantic_extra
def test_memdecks_tokenizer_gives_the_ids_the_models_own_tokenizer_gives():
    import yaml
    from tokenizers import Tokenizer

    from store.index.embedding import _TOKENIZER, MAX_WORD, MAX_WORDS, BpeTokenizer, _package_dir, clean
    from tests.data_support import DATA, FIXTURES, SHARED

    path = _package_dir() / _TOKENIZER
    theirs, ours = Tokenizer.from_file(str(path)), BpeTokenizer.load(path)
    lazy = BpeTokenizer.load(path, lazy=True)  # a task's tokenizer: reads its cache file entry by entry
    texts = ["ÉtéFort 中文 🚀 tabs\tand\nnew lines  twice", "useSearchParams() -> `x`", "@Environment(\\.colorScheme)"]
    for eval_file in (SHARED / "eval").glob("*.yaml"):
        texts += [q["task"] for q in yaml.safe_load(eval_file.read_text(encoding="utf-8"))["queries"]]
    for memories in [*(FIXTURES / "ralph").glob("*.md"), DATA / "ralph" / "memories.md"]:
        texts += memories.read_text(encoding="utf-8").split("\n### ")
    # Within what is embedded (MAX_WORDS words of at most MAX_WORD characters; longer runs go in
    # pieces, as BPE is quadratic in a word's length).
    whole = [t for t in texts if len(clean(t).split(" ")) <= MAX_WORDS and max(map(len, clean(t).split(" "))) <= MAX_WORD]
    # Hundreds of real texts when ../shared is beside the clone; the project's own otherwise.
    assert len(whole) > (400 if SHARED.is_dir() else 8)
    for text in whole:
        assert ours.encode(text) == theirs.encode(clean(text), add_special_tokens=False).ids, text[:60]
    for text in whole[:200]:
        assert lazy.encode(text) == theirs.encode(clean(text), add_special_tokens=False).ids, text[:60]
    assert lazy._path is not None  # it never loaded the whole tables


def test_explain_prints_the_task_level_verdict_once_and_rows_fit_in_160_columns(store, run_cli):
    """`--explain`: the gate's confidence, the chance level and the margins once, above the rows;
    each row fits in 160 columns. `--format json` carries the same verdict as `gate`."""
    store.add("Webhook deliveries retry three times with exponential backoff; the retry timeout is 30 "
              "seconds per webhook delivery, and a delivery that still fails is parked for review.",
              type="pattern", file_refs="internal/webhooks/*.go", tags="webhooks,retries,delivery-queue")
    for n in range(4):
        store.add(f"Invoices are numbered per tenant and year, series {n}.", type="convention")
    args = ("prime", "--task", "change the webhook delivery retry timeout", "--paths", "internal/webhooks/send.go")
    explained = run_cli(*args, "--explain", check=True).stdout
    why = explained[explained.index("## Why"):].splitlines()
    assert sum(1 for line in why if line.startswith("gate: confidence")) == 1
    assert "over chance" in explained and "expected by chance" in explained and "margin" in explained
    most = Config.defaults().injection.gate.most_memories
    assert f"; at most {most} memories with evidence" in explained  # the cap, on the spend line
    assert all(len(line) <= 160 for line in why), max(why, key=len)
    assert not any("(evidence" in line for line in why[2:])  # the verdict is not repeated per row
    shown = json.loads(run_cli(*args, "--format", "json", check=True).stdout)
    gate = shown["gate"]
    assert gate["on_topic"] and gate["confidence"] >= 1.0
    assert {"word_surprise", "expected_by_chance", "chance_cosine", "cosine_margin", "verdict"} <= set(gate)
    assert gate["most_memories"] == most
    lifted = json.loads(run_cli("prime", "--format", "json", check=True).stdout)
    assert lifted["gate"] is None  # no task, paths or tags: the gate is lifted


def test_a_task_barely_on_topic_spends_a_small_share_of_the_budget_and_a_sure_one_all_of_it():
    """Spend in proportion to confidence (issue 25): at the gate's mark a task may use
    `least_share` of the budget, from `full_strength` times the mark all of it, in proportion
    between; below the mark the gate's own rule for weak evidence holds."""
    from store.retrieval.gate import GateSettings, spend_share

    gate = GateSettings(0.12, 0.17, 1.1, 0.5, 0.5, 0.125, False, 70, full_strength=5.0, least_share=0.15)
    assert spend_share(gate, 1.0) == 0.15
    assert spend_share(gate, 3.0) == 0.5
    assert spend_share(gate, 5.0) == spend_share(gate, 40.0) == 1.0
    assert spend_share(gate, 0.7) == 1.0  # weak: `weak_budget` decides
    assert spend_share(GateSettings(0.12, 0.17, 1.1, 0.5, 0.5, 0.125, False, 70, full_strength=1.0), 1.0) == 1.0


def test_prime_packs_a_barely_on_topic_task_into_its_share_of_the_budget(store):
    """The spend is the packer's budget: with many relevant memories and a task barely at the
    mark, the block stays within `least_share` of the budget, and `prime --format json`'s gate
    says what it may spend."""
    from store.retrieval.injection import InjectionContext, prime

    for n in range(12):
        store.add(f"Webhook delivery retry number {n} waits longer before the payload is parked in the queue.",
                  type="pattern", reinforce=False)
    store.config = store.config.with_overrides({"injection.gate.full_strength": 1000.0,
                                                "injection.gate.least_share": 0.1}, "test")
    result = prime(store, InjectionContext(task="webhook delivery retry payload parked", budget=2000))
    assert result.gate is not None and result.gate["on_topic"]
    assert result.gate["spend"] < 0.2
    assert 0 < result.tokens <= 2000 * result.gate["spend"]
    assert any(r.reason == "over budget" for r in result.excluded)
    assert result.budget == 2000  # the context's budget; the spend is its share


def test_an_on_topic_block_holds_at_most_the_capped_number_of_memories_with_evidence(store):
    """The cap (`injection.gate.most_memories`): on an on-topic task with room for all of them,
    only the best-scored few memories with evidence go in; each of the others says why, and a
    cap of 0 lets every one in. Critical memories are not counted."""
    for n in range(12):
        store.add(f"Webhook delivery retry number {n} waits longer before the payload is parked in the queue.",
                  type="pattern", reinforce=False)
    store.add("Never log a webhook payload: it carries the customer's card token.", type="constraint",
              confidence=0.95, reinforce=False)
    store.config = store.config.with_overrides({"injection.gate.full_strength": 1.0,
                                                "injection.gate.most_memories": 3}, "test")
    context = InjectionContext(task="webhook delivery retry payload parked", budget=4000)
    result = prime(store, context)
    assert result.gate["on_topic"] and result.gate["most_memories"] == 3
    with_evidence = [r for r in result.included if not r.signals.get("critical")]
    assert len(with_evidence) == 3
    assert any(r.signals.get("critical") for r in result.included)
    capped = [r for r in result.excluded if r.reason.startswith("below the cap")]
    assert len(capped) == 9 and "the 3 best memories with evidence" in capped[0].reason
    assert min(r.score for r in with_evidence) >= max(r.score for r in capped)

    store.config = store.config.with_overrides({"injection.gate.most_memories": 0}, "test")
    assert len([r for r in prime(store, context).included if not r.signals.get("critical")]) == 12


def test_the_cap_counts_what_may_go_in_so_a_superseded_memory_leaves_room(store):
    """The cap is counted after supersession: a memory among the first few that its successor
    keeps out (a person set it active again) does not take a place in the block, the next best
    with evidence does."""
    old = store.add("Webhook delivery retry: the payload is parked in the dead-letter queue after five tries.",
                    type="fix", reinforce=False).memory
    new = store.relations.supersede(old.id, "Webhook delivery retry: parked after three tries, not five.").memory
    store.edit(old.id, status="active")  # the predecessor active again: only its successor keeps it out
    for n in range(3):
        store.add(f"Webhook delivery retry number {n} waits longer before the payload is parked.",
                  type="pattern", reinforce=False)
    store.config = store.config.with_overrides({"injection.gate.full_strength": 1.0,
                                                "injection.gate.most_memories": 2}, "test")
    result = prime(store, InjectionContext(task="webhook delivery retry payload parked dead-letter queue tries",
                                           budget=4000))
    assert result.gate["on_topic"]
    reasons = {r.memory.id: r.reason for r in result.excluded}
    assert reasons[old.id] == f"superseded by {new.id}"
    assert len(result.included) == 2 and old.id not in {r.memory.id for r in result.included}
    assert sum(1 for r in result.excluded if r.reason.startswith("below the cap")) == 2


def test_a_small_spend_still_has_room_for_the_best_memory(store):
    """On topic, however small the task's share of the budget, its best memory goes in when the
    budget itself holds it: the spend narrows a block, it never empties one."""
    from store.retrieval.injection import InjectionContext, prime

    store.add("Webhook deliveries are retried with exponential backoff, up to five times, and then parked "
              "in the dead-letter queue for a person to look at.", type="pattern")
    store.config = store.config.with_overrides({"injection.gate.full_strength": 1000.0,
                                                "injection.gate.least_share": 0.01}, "test")
    result = prime(store, InjectionContext(task="webhook delivery retries backoff dead-letter queue", budget=300))
    assert result.gate["on_topic"] and result.gate["spend"] < 0.05
    assert len(result.included) == 1 and result.tokens <= 300
