"""The retrieval eval: the dev set runs, and memdeck's ranker beats BM25 and the seeds' rules."""

from __future__ import annotations

import json

from store.evaluation import ndcg, reciprocal_rank
from tests.conftest import SHARED, needs_shared

DEV_SET = SHARED / "eval" / "dev-retrieval.yaml"


@needs_shared
def test_memdeck_beats_every_other_ranker_on_the_dev_set(run_cli):
    result = run_cli("eval", str(DEV_SET), "--json")
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)
    assert set(results) == {"memdeck", "bm25", "dex", "claude-ops", "ralph", "nova26"}
    for metrics in results.values():
        assert {"ndcg@8", "recall@8", "mrr", "budget_recall", "noise_tokens", "ndcg@8:hard"} <= set(metrics)
    ours = results["memdeck"]
    for name, theirs in results.items():
        if name != "memdeck":
            assert ours["ndcg@8"] > theirs["ndcg@8"], name
            assert ours["budget_recall"] > theirs["budget_recall"], name
            assert ours["noise_tokens"] < theirs["noise_tokens"], name


@needs_shared
def test_the_table_shows_every_ranker_and_the_difficulty_breakdown(run_cli):
    result = run_cli("eval", str(DEV_SET))
    assert result.returncode == 0, result.stderr
    assert "17 queries, budget 500 tokens" in result.stdout
    assert "hard queries" in result.stdout and "easy queries" in result.stdout
    assert all(name in result.stdout for name in ("memdeck", "bm25", "dex", "claude-ops", "ralph", "nova26"))


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
