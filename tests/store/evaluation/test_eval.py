"""The retrieval eval: the dev set runs, and memdeck's ranker beats BM25 and the seeds' rules."""

from __future__ import annotations

import json

import pytest

from store.evaluation.retrieval import ndcg, reciprocal_rank
from tests.data_support import SHARED, needs_shared

DEV_SET = SHARED / "eval" / "dev-retrieval.yaml"
DEV_SET_2 = SHARED / "eval" / "dev-retrieval-2.yaml"


@needs_shared
def test_memdeck_beats_every_other_ranker_on_the_main_dev_set(run_cli):
    result = run_cli("eval", str(DEV_SET_2), "--budget", "2000", "--json", "--no-neighbours")
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)
    assert set(results) == {"memdeck", "bm25", "dex", "claude-ops", "ralph", "nova26"}
    for metrics in results.values():
        assert {"ndcg@8", "recall@8", "mrr", "budget_recall", "noise_tokens", "ndcg@8:hard"} <= set(metrics)
    ours = results["memdeck"]
    for name, theirs in results.items():
        if name not in ("memdeck", "bm25"):
            assert ours["ndcg@8"] > theirs["ndcg@8"], name
    # Injection that earns its tokens (issue 25): a larger share of memdeck's block is relevant
    # than of plain BM25's, and far less goes in where nothing is about the task. (Against BM25's
    # nDCG@8 and budget recall memdeck now loses: the gate trades recall for silence; the
    # recorded baseline, tests/data/eval_baseline.json, guards what it reaches.)
    assert ours["block_precision"] > results["bm25"]["block_precision"]
    assert ours["noise_tokens"] < results["bm25"]["noise_tokens"] / 2
    assert ours["cross_tokens"] < results["bm25"]["cross_tokens"] / 2


@pytest.mark.slow
@needs_shared
def test_the_bm25_baseline_is_the_strongest_plain_one(run_cli):
    """Task and paths words, any of them, over title, content and tags: 0.63 on the main set
    (the task's words alone give 0.59)."""
    results = json.loads(run_cli("eval", str(DEV_SET_2), "--budget", "2000", "--json", "--no-neighbours",
                                 check=True).stdout)
    assert results["bm25"]["ndcg@8"] >= 0.6


@needs_shared
def test_the_table_shows_every_ranker_the_breakdowns_and_the_signals(run_cli):
    result = run_cli("eval", str(DEV_SET))
    assert result.returncode == 0, result.stderr
    assert "17 queries, budget 500 tokens" in result.stdout
    assert "hard queries" in result.stdout and "easy queries" in result.stdout
    assert all(name in result.stdout for name in ("memdeck", "bm25", "dex", "claude-ops", "ralph", "nova26"))
    for by in ("per project", "per difficulty", "per hat"):
        assert by in result.stdout
    assert "noise probe" in result.stdout and "runatal-ios" in result.stdout and "creator" in result.stdout
    assert "signals: semantic on (wordllama" in result.stdout or "semantic off" in result.stdout
    assert "weak_budget 0.125, fill on" in result.stdout  # a switch reads as one, not as 1


@needs_shared
def test_without_the_semantic_signal_the_eval_says_words_alone(run_cli):
    result = run_cli("eval", str(DEV_SET), "--words-only", check=True)
    assert "signals: semantic off (injection.semantic is false): words alone" in result.stdout
    assert "semantic 0.7" not in result.stdout and "text 1" in result.stdout


@needs_shared
def test_neither_signal_alone_orders_the_candidates_better_than_both(run_cli):
    """Fusion that never hurts (issue 25): on each dev set, memdeck's whole order (the block,
    then every candidate only the gate or the budget kept out) with both signals is not beaten by
    more than 0.01 by words alone or by meaning alone."""
    from store.engine.config import Config
    from store.evaluation.retrieval import run_eval

    # The command line's flags once, on the small set; both sets in-process, memdeck's ranker alone.
    flags = {"--words-only": {"injection.semantic": False}, "--meaning-only": {"injection.weights.text": 0.0}}
    for flag, overrides in flags.items():
        shown = json.loads(run_cli("eval", str(DEV_SET), "--budget", "2000", "--json", "--no-neighbours", flag,
                                   check=True).stdout)["memdeck"]
        alone = run_eval(DEV_SET, config=Config.defaults().with_overrides(overrides, flag), budget=2000,
                         rankers=("memdeck",), cross=False).results["memdeck"]
        assert shown["order_ndcg@8"] == alone["order_ndcg@8"], flag
    for path in (DEV_SET, DEV_SET_2):
        both, words, meaning = (run_eval(path, config=Config.defaults().with_overrides(overrides, "test"), budget=2000,
                                         rankers=("memdeck",), cross=False).results["memdeck"]
                                for overrides in ({}, *flags.values()))
        assert words["order_ndcg@8"] <= both["order_ndcg@8"] + 0.01, path
        assert meaning["order_ndcg@8"] <= both["order_ndcg@8"] + 0.01, path


def test_meaning_only_and_words_only_cannot_be_asked_together(run_cli):
    result = run_cli("eval", "x.yaml", "--words-only", "--meaning-only")
    assert result.returncode != 0 and "not allowed with argument" in result.stderr


@needs_shared
@pytest.mark.slow
def test_cross_validation_tunes_on_each_set_and_reports_the_other(run_cli):
    result = run_cli("eval", str(DEV_SET), str(DEV_SET_2), "--budget", "2000", "--cross", "--json",
                     check=True, timeout=600)
    folds = json.loads(result.stdout)
    assert [(f["tuned_on"], f["reported_on"]) for f in folds] == [
        ("dev-retrieval.yaml", "dev-retrieval-2.yaml"), ("dev-retrieval-2.yaml", "dev-retrieval.yaml")]
    for fold in folds:
        assert set(fold["settings"]) == {"injection.gate.word_surprise", "injection.gate.floor"}
        assert 0 < fold["reported"]["ndcg@8"] <= 1
    assert run_cli("eval", str(DEV_SET), "--cross").returncode == 2


@needs_shared
def test_no_change_worsens_the_recorded_eval_baseline():
    """tests/data/eval_baseline.json holds memdeck's figures on both dev sets at 2,000 tokens with
    the default settings. No change may worsen one by more than the file's stated margin (quality
    down, tokens or shares of noise up); the file is updated on purpose, with the reason in the
    commit. Tuned numbers are not pinned: settings are chosen by leave-one-project-out."""
    from store.engine.config import Config
    from store.evaluation.retrieval import run_eval
    from tests.data_support import DATA

    baseline = json.loads((DATA / "eval_baseline.json").read_text(encoding="utf-8"))
    margins = baseline["margins"]
    worse = []
    for name, recorded in baseline["sets"].items():
        ours = run_eval(SHARED / "eval" / name, config=Config.defaults(), budget=baseline["budget"],
                        rankers=("memdeck",)).results["memdeck"]
        for key in baseline["higher_is_better"]:
            if ours[key] < recorded[key] - margins["higher_is_better"]:
                worse.append((name, key, recorded[key], ours[key]))
        for group in ("tokens", "shares"):
            for key in baseline[group]:
                if ours[key] > recorded[key] + margins[group]:
                    worse.append((name, key, recorded[key], ours[key]))
    assert not worse, worse


@needs_shared
def test_pool_gives_every_project_every_other_corpus_too(run_cli):
    """`--pool`: each project also holds the other corpora (ids `<id>@<n>`), so a query's
    candidates come from every corpus, yet only from its own project; labels are unchanged."""
    from store.engine.config import Config
    from store.evaluation.retrieval import load_eval, run_eval
    from store.interop.ralph import parse_ralph

    spec = load_eval(DEV_SET)
    home = {memory.id: corpus.project for corpus in spec.corpora
            for memory in parse_ralph(corpus.path.read_text(encoding="utf-8"), str(corpus.path)).memories}
    apart = run_eval(DEV_SET, config=Config.defaults(), budget=2000, rankers=("memdeck", "bm25"))
    pooled = run_eval(DEV_SET, config=Config.defaults(), budget=2000, rankers=("memdeck", "bm25"), pool=True)
    assert pooled.pool and not apart.pool
    assert set(pooled.by["memdeck"]["project"]) == set(apart.by["memdeck"]["project"])
    number = {project: str(n) for n, project in enumerate(dict.fromkeys(c.project for c in spec.corpora), start=1)}
    strangers = 0
    for query in spec.queries:
        assert {home[m] for m in apart.per_query["bm25"][query.id].ranking} <= {query.project}
        for memory_id in pooled.per_query["bm25"][query.id].ranking:
            original, _, project = memory_id.partition("@")
            assert (project == number[query.project] and home[original] != query.project) or \
                (not project and home[original] == query.project), memory_id
            strangers += bool(project)
    assert strangers, "pooled, a query's candidates come from every corpus"
    result = run_cli("eval", str(DEV_SET), "--pool", check=True)
    assert "every project holding every corpus (--pool)" in result.stdout


def test_pooled_cross_validation_says_it_is_pooled(capsys):
    from store.evaluation.retrieval import Fold
    from tui.cli.injection import _print_folds

    metrics = {"ndcg@8": 0.6, "budget_recall": 0.8, "noise_tokens": 40.0}
    fold = Fold("a.yaml", "b.yaml", {"injection.gate.weak": 0.5}, metrics, metrics)
    _print_folds([fold], pool=True)
    assert "every project holding every corpus (--pool)" in capsys.readouterr().out
    _print_folds([fold])
    assert "--pool" not in capsys.readouterr().out


def test_a_bad_eval_file_is_a_clear_error(run_cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("queries: [1, 2\n", encoding="utf-8")
    result = run_cli("eval", str(bad))
    assert result.returncode == 2 and "not a readable YAML file" in result.stderr
    assert "Traceback" not in result.stderr
    missing = tmp_path / "missing.yaml"
    missing.write_text("corpora: [{project: p, file: nowhere.md}]\nqueries: []\n", encoding="utf-8")
    result = run_cli("eval", str(missing))
    assert result.returncode == 2 and "cannot read the corpus" in result.stderr


def test_ndcg_and_mrr_reward_putting_essential_memories_first():
    relevant = {"a": 2, "b": 1}
    assert ndcg(["a", "b", "x"], relevant) == 1.0
    assert ndcg(["x", "b", "a"], relevant) < ndcg(["a", "x", "b"], relevant)
    assert reciprocal_rank(["x", "y", "b"], relevant) == 1 / 3


@pytest.mark.slow
@needs_shared
def test_losses_name_every_relevant_memory_the_block_leaves_out_and_where(run_cli):
    """`--losses`: one row per relevant memory memdeck's block leaves out (no more, no fewer),
    each with where it was lost; without fill (--no-fill) the on-topic tasks' relevance-0 losses grow."""
    from store.engine.config import Config
    from store.evaluation.retrieval import LOSS_KINDS, load_eval, run_eval

    report = run_eval(DEV_SET_2, config=Config.defaults(), budget=2000, rankers=("memdeck", "bm25"),
                      explain_losses=True)
    for query in load_eval(DEV_SET_2).queries:
        if query.noise_probe:
            continue
        packed = set(report.per_query["memdeck"][query.id].packed)
        lost = [loss for loss in report.losses if loss.query == query.id]
        assert {loss.memory for loss in lost} == set(query.relevant) - packed
        for loss in lost:
            assert loss.kind in LOSS_KINDS and loss.tokens > 0
            assert loss.bm25 == (loss.memory in report.per_query["bm25"][query.id].packed)
            assert (loss.rank is None) == (loss.kind == "not a candidate")
    # The block's cap is a loss of its own, not "nothing here" (the task was on topic).
    capped = [loss for loss in report.losses if loss.kind == "gate: below the cap"]
    assert capped and all(loss.rank >= 8 for loss in capped)
    result = run_cli("eval", str(DEV_SET), "--budget", "500", "--losses", check=True)
    assert "relevant memories memdeck's block leaves out (budget 500)" in result.stdout
    assert "by kind: not a candidate" in result.stdout
    # The flags on the command line (the small set); the larger set in-process, memdeck's ranker alone.
    plain = {"memdeck": run_eval(DEV_SET_2, config=Config.defaults().with_overrides({"injection.gate.fill": False}, "test"),
                                 budget=2000, rankers=("memdeck",), cross=False).results["memdeck"]}
    results = {"memdeck": run_eval(DEV_SET_2, config=Config.defaults(), budget=2000, rankers=("memdeck",),
                                   cross=False).results["memdeck"]}
    # Fill is on by default (the smaller set says so, as cheaply).
    assert "fill off" in run_cli("eval", str(DEV_SET), "--no-fill", "--no-neighbours", check=True).stdout
    assert json.loads(run_cli("eval", str(DEV_SET), "--json", "--no-neighbours", check=True).stdout) == json.loads(
        run_cli("eval", str(DEV_SET), "--fill", "--json", "--no-neighbours", check=True).stdout)
    # Filler comes after every memory with evidence, in the block and in the ranking: it only
    # adds, and never on a noise probe (none is on topic).
    for metric in ("budget_recall", "ndcg@8", "recall@8"):
        assert results["memdeck"][metric] >= plain["memdeck"][metric], metric
    assert results["memdeck"]["noise_tokens"] == plain["memdeck"]["noise_tokens"]


def test_a_labelled_set_over_memdecks_own_json_export_is_evaluated(store, run_cli, tmp_path):
    """Issue 43 item 14: `memdeck eval` read only Ralph files as corpora; a corpus kept in
    memdeck's JSON export (the lossless format) is read as one, its ids and titles kept."""
    webhook = store.add("Webhook deliveries retry three times with exponential backoff and jitter.",
                        type="pattern", title="Webhook retries back off", tags=["webhooks"]).memory
    invoice = store.add("Invoices are numbered per tenant and year, never globally.", type="convention",
                        title="Invoice numbers per tenant").memory
    store.add("The PDF renderer needs the fonts folder mounted.", type="pitfall")
    run_cli("export", "--format", "json", "--output", str(tmp_path / "corpus.json"), check=True)
    (tmp_path / "set.yaml").write_text(
        "corpora: [{project: billing, file: corpus.json}]\n"
        "queries:\n"
        f"- {{id: q1, project: billing, task: webhook delivery retries backoff, relevant: [{{id: {webhook.id}, grade: 2}}]}}\n"
        f"- {{id: q2, project: billing, task: how are invoices numbered per tenant, relevant: [{{id: {invoice.id}, grade: 2}}]}}\n",
        encoding="utf-8")
    result = run_cli("eval", str(tmp_path / "set.yaml"), "--json", "--no-neighbours", check=True)
    scores = json.loads(result.stdout)
    assert scores["memdeck"]["recall@8"] == 1.0 and scores["memdeck"]["mrr"] == 1.0
