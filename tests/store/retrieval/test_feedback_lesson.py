"""The feedback lesson's settings (`injection.feedback`): the project's not_relevant floor
follows `floor_gain` (0: none) and `floor_helpful`; and the feedback folds' choice of them by
leave-one-project-out, on the labelled dev set and on figures of known shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.engine.config import Config
from store.engine.feedback import give_feedback
from store.retrieval import judged
from store.evaluation.feedback_folds import _OFF, Measured, choose, choose_by_projects, feedback_folds, measure_grid
from store.retrieval.injection import InjectionContext, prime
from tests.data_support import SHARED, needs_shared

pytestmark = pytest.mark.both_backends


def _judged_project(store):
    about = store.add("Refund webhooks are retried with exponential backoff", type="pattern").memory
    loose = [store.add(f"Refund {word} notes for the finance team", type="context", reinforce=False).memory
             for word in ("ledger", "export", "audit", "review", "archive", "summary", "calendar", "report",
                          "budget")]
    for number, memory in enumerate(loose):
        give_feedback(store, memory.id, "not_relevant", task=f"refund task {number}",
                      evidence={"relevance": 0.2, "cosine": 0.1})
    return store.get_many([m.id for m in [about, *loose]]), about


def test_the_floor_follows_the_settings(store):
    memories, about = _judged_project(store)
    lesson = Config.defaults().injection.feedback
    assert 0.2 < judged.floor(memories, lesson.__class__(floor_gain=8, floor_helpful=10)) < 0.201
    assert judged.floor(memories, lesson.__class__(floor_gain=0, floor_helpful=10)) == 0.0  # 0: no floor
    assert judged.floor(memories, lesson.__class__(floor_gain=10, floor_helpful=10)) == 0.0  # nine < ten
    # Without the semantic signal the floor is `words_floor_gain`'s.
    words = lesson.__class__(floor_gain=8, words_floor_gain=64, floor_helpful=10)
    assert judged.floor(memories, words, semantic=False) == 0.0
    assert 0.2 < judged.floor(memories, lesson.__class__(floor_gain=0, words_floor_gain=8), semantic=False) < 0.201
    give_feedback(store, about.id, "helpful", task="the refund ledger", evidence={"relevance": 0.15})
    memories = store.get_many([m.id for m in memories])
    # Nine not_relevant against one helpful below the mark: a helpful one weighing 0.5 leaves 8.5.
    assert 0.2 < judged.floor(memories, lesson.__class__(floor_gain=8, floor_helpful=0.5)) < 0.201
    assert judged.floor(memories, lesson.__class__(floor_gain=8, floor_helpful=10)) == 0.0


def test_prime_reads_the_floor_from_config(store, db_path, clock):
    from store import Store

    strong = store.add("Refund exports are zipped before the upload to the ledger", type="pattern").memory
    weak = store.add("Exports run nightly", type="context").memory
    others = [store.add(f"The {word} page has its own style sheet", type="context", reinforce=False).memory
              for word in ("billing", "audit", "review", "archive", "summary", "calendar", "report", "budget",
                           "team")]
    task = "zip the refund exports before the upload to the ledger"
    relevance = {r.memory.id: r.relevance for r in prime(store, InjectionContext(task=task)).included}
    for number, memory in enumerate(others):
        give_feedback(store, memory.id, "not_relevant", task=f"task {number}", evidence={"relevance": relevance[weak.id]})
    on = Config.defaults().with_overrides({"injection.feedback.floor_gain": 8})
    off = Config.defaults().with_overrides({"injection.feedback.floor_gain": 0})
    with Store.open(db_path, project="demo", clock=clock, config=on) as floored:
        assert weak.id not in [r.memory.id for r in prime(floored, InjectionContext(task=task)).included]
    with Store.open(db_path, project="demo", clock=clock, config=off) as unfloored:
        assert {strong.id, weak.id} <= {r.memory.id for r in prime(unfloored, InjectionContext(task=task)).included}
    assert store.get(others[0].id).confidence == others[0].confidence  # never a confidence change


def _row(project: str, query: str, gain: float, loss: float) -> Measured:
    return Measured("set.yaml", project, query, "None/0", 0.2, 0.2 + gain, 0.9, 0.9 - loss)


@pytest.mark.sqlite_only
def test_choose_takes_the_most_precision_within_the_recall_loss():
    summaries = {0: {"precision_before": 0.2, "precision_after": 0.2, "recall_before": 0.9, "recall_after": 0.9},
                 1: {"precision_before": 0.2, "precision_after": 0.5, "recall_before": 0.9, "recall_after": 0.7},
                 2: {"precision_before": 0.2, "precision_after": 0.3, "recall_before": 0.9, "recall_after": 0.89}}
    assert choose(summaries) == 2
    assert choose(summaries, recall_loss=0.5) == 1
    assert choose({n: s for n, s in summaries.items() if n == 1}) == 1  # none within: the least loss


@pytest.mark.sqlite_only
def test_each_project_is_reported_under_the_setting_the_others_chose():
    # Setting 1 helps projects a and b within the recall loss, and costs c much recall.
    measured = {0: [_row(p, f"{p}-1", 0.0, 0.0) for p in "abc"],
                1: [_row("a", "a-1", 0.2, 0.0), _row("b", "b-1", 0.2, 0.0), _row("c", "c-1", 0.1, 0.3)]}
    chosen, held = choose_by_projects(measured)
    # a: chosen on b and c (mean loss 0.15 > 0.02) -> 0; c: chosen on a and b -> 1.
    assert chosen == {"a": 0, "b": 0, "c": 1}
    assert {r.query: r.recall_after for r in held} == {"a-1": 0.9, "b-1": 0.9, "c-1": pytest.approx(0.6)}


@needs_shared
@pytest.mark.sqlite_only
@pytest.mark.slow
def test_a_seeded_split_and_the_grid_keep_each_held_out_tasks_figures():
    path = SHARED / "eval" / "dev-retrieval.yaml"
    alternate = feedback_folds(Path(path), budget=2000)
    shuffled = feedback_folds(Path(path), budget=2000, seed=1)
    assert {q for f in alternate for q in f.measured} == {q for f in shuffled for q in f.measured}
    assert alternate[0].fed != shuffled[0].fed
    for fold in shuffled:
        assert set(fold.by_query) == set(fold.measured)
        counts = fold.relevant_judged
        assert counts["relevant"] > 0 and 0 < counts["judged_not_relevant"] <= counts["relevant"]
        assert all(0.0 <= r["recall_before"] <= 1.0 and "precision_after" in r for r in fold.by_query.values())
    grid = (_OFF, {**_OFF, "injection.feedback.floor_gain": 4})
    measured = measure_grid([Path(path)], grid=grid, budget=2000)
    off, strong = (measured[0], measured[1])
    assert len(off) == len(strong) == len(alternate[0].measured) + len(alternate[1].measured)
    assert all(r.recall_after == r.recall_before for r in off)  # no floor, no same task: nothing moves
    # (Since issue 25's gate and spend, a floor no longer moves any held-out block of this set:
    # the blocks hold only memories with their own evidence. docs/mcp.md has the figures.)
    assert all(r.recall_after <= r.recall_before + 1e-9 for r in strong)  # a floor never adds


NEAR = ("Change the colours of the checkout banner", "Make the checkout banner colours match the brand")
FAR = ("Retry refund webhooks with exponential backoff", "Migrate the ledger database to a new schema",
       "Rotate the API keys of the payment provider", "Speed up the nightly export job",
       "Translate the onboarding emails to German")


def _banner_judged(store, relevance: float, cosine: float | None = None):
    """The banner judged not relevant for two colour tasks (at `relevance`, and `cosine`), other
    memories for unrelated tasks (the chance level)."""
    banner = store.add("The checkout banner text and colours live in the CMS, not in the code",
                       type="context").memory
    others = [store.add(text, type="pattern", reinforce=False).memory for text in (
        "Refund webhooks are retried by the queue", "Ledger migrations run with alembic",
        "API keys are rotated by the ops team", "Exports are zipped before upload")]
    for task in NEAR:
        evidence = {"relevance": relevance, **({"cosine": cosine} if cosine is not None else {})}
        give_feedback(store, banner.id, "not_relevant", task=task, evidence=evidence)
    for memory, task in zip(others, FAR):
        give_feedback(store, memory.id, "not_relevant", task=task, evidence={"relevance": 0.1})
    assert store.get(banner.id).confidence == banner.confidence  # not_relevant: never a confidence change
    return banner


def test_not_relevant_for_tasks_like_the_new_one_leaves_the_memory_out_when_set(store, db_path, clock):
    from store import Store

    banner = _banner_judged(store, 1.0)  # it looked fully relevant to them, and was not
    on = Config.defaults().with_overrides({"injection.feedback.similar_evidence": 0.5,
                                           "injection.feedback.floor_gain": 0})
    # On words alone the lesson is not drawn (it cost precision there).
    with Store.open(db_path, project="demo", clock=clock,
                    config=on.with_overrides({"injection.semantic": False})) as alone:
        assert banner.id in _ids(prime(alone, InjectionContext(
            task="Which colours should the checkout banner use on phones?")))
    task = "Make the checkout banner colours darker on mobile"
    off = Config.defaults().with_overrides({"injection.feedback.similar_evidence": 0})
    with Store.open(db_path, project="demo", clock=clock, config=off) as unlearned:
        assert banner.id in _ids(prime(unlearned, InjectionContext(task=task)))
    with Store.open(db_path, project="demo", clock=clock, config=on) as lesson:
        result = prime(lesson, InjectionContext(task=task))
        (out,) = [r for r in result.excluded if r.memory.id == banner.id]
        assert out.reason.startswith("judged not relevant to tasks nearer this one than chance")
        # A task far from the judged ones is no evidence: the banner stays for it.
        assert banner.id in _ids(prime(lesson, InjectionContext(task="Where does the banner text of the CMS live?")))
        # Helpful for a task as near outweighs (similar_helpful 1, one helpful against two not_relevant: no).
        give_feedback(lesson, banner.id, "helpful", task="Make the checkout banner colours match the logo",
                      evidence={"relevance": 0.5})
        give_feedback(lesson, banner.id, "helpful", task="Change the checkout banner colours for the sale",
                      evidence={"relevance": 0.5})
        assert banner.id in _ids(prime(lesson, InjectionContext(task=task)))


@pytest.mark.parametrize("relevance, cosine", [(0.01, None), (1.0, 0.01)], ids=["relevance", "cosine"])
def test_a_judgment_made_at_a_lower_relevance_or_cosine_than_now_is_no_evidence(store, db_path, clock,
                                                                                  relevance, cosine):
    from store import Store

    banner = _banner_judged(store, relevance, cosine)  # it barely matched the judged tasks; the new one says more
    on = Config.defaults().with_overrides({"injection.feedback.similar_evidence": 0.5})
    with Store.open(db_path, project="demo", clock=clock, config=on) as lesson:
        assert banner.id in _ids(prime(lesson, InjectionContext(task="Make the checkout banner colours darker on mobile")))


def _ids(result):
    return [r.memory.id for r in result.included]


def test_a_judgment_keeps_only_the_numbers_of_its_evidence():
    """Own and team memories' judgments keep the same evidence: relevance and cosine, rounded;
    anything else an evidence dict holds (a string, a boolean, another key) is dropped."""
    from store.engine.feedback import judged_evidence

    assert judged_evidence({"relevance": 0.123456, "cosine": "0.9", "score": 1.0}) == {"relevance": 0.1235}
    assert judged_evidence({"cosine": True, "relevance": 1}) == {"relevance": 1.0}
    assert judged_evidence(None) == {}


@needs_shared
@pytest.mark.sqlite_only
@pytest.mark.slow
def test_with_the_index_on_the_simulated_agent_opens_the_relevant_lines():
    # Opening is a use (issue 39): the fed half's relevant index lines opened, the rest left
    # unopened; no verdicts with `verdicts=False`. Reachable recall is measured before and after.
    path = SHARED / "eval" / "dev-retrieval.yaml"
    config = Config.defaults().with_overrides({"injection.index_lines": 10})
    folds = feedback_folds(Path(path), config=config, budget=2000, verdicts=False)
    given = {k: sum(f.verdicts[k] for f in folds) for k in folds[0].verdicts}
    assert given["helpful"] == given["not_relevant"] == 0 and given["opened"] > 0 and given["unopened"] > 0
    for fold in folds:
        assert 0.0 <= fold.before["reachable_recall"] <= 1.0 and fold.before["reachable_recall"] >= fold.before["budget_recall"]
        assert all("reachable_after" in r for r in fold.by_query.values())
    # Index off: nothing to open.
    off = feedback_folds(Path(path), budget=2000, verdicts=False)
    assert all(f.verdicts["opened"] == f.verdicts["unopened"] == 0 and f.before == f.after for f in off)


@pytest.mark.sqlite_only
def test_with_the_index_choose_keeps_reachable_recall_and_counts_its_gain():
    base = {"precision_before": 0.2, "recall_before": 0.9, "recall_after": 0.9, "reachable_before": 0.8}
    summaries = {0: {**base, "precision_after": 0.2, "reachable_after": 0.8},
                 1: {**base, "precision_after": 0.25, "reachable_after": 0.7},  # loses what the index reached
                 2: {**base, "precision_after": 0.2, "reachable_after": 0.85}}
    assert choose(summaries) == 1
    assert choose(summaries, reachable=True) == 2
