"""Capture's held-out check on capture-dev (issue 28): each session scored with every rule or
detail switched off whose only motivating example in capture-dev was that session, so that what
the rules owe to that session shows. The switches name the rule; the figures are what
`memdeck eval-capture` prints for the session with them off.

    .venv/bin/python benchmarks/capture_holdout.py ../shared/eval/capture/capture-dev.yaml
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store.capture import heuristics, wording  # noqa: E402
from store.capture.evaluation import evaluate, totals  # noqa: E402

NEVER = re.compile(r"(?!x)x")
OLD_BUG_WORDS = re.compile(
    r"\b(?:bug|broken|wrong|incorrect|doesn'?t work|does not work|isn'?t working|not working|fails?|failing|crash\w*|"
    r"missing|forgot|forgotten|leak\w*|off[- ]by[- ]one|race|should(?:n'?t| not)? (?:be|have|it)|why (?:is|does|did|are)|"
    r"isn'?t (?:it|this|that)|aren'?t|wouldn'?t|won'?t)\b", re.I)
_error = heuristics.Tracker._error
saved = {(wording, "_REMEMBER"): wording._REMEMBER, (heuristics, "_TEST_FAILED"): heuristics._TEST_FAILED,
         (heuristics, "_went_around"): heuristics._went_around, (wording, "approves"): wording.approves,
         (wording, "_BUG_WORDS"): wording._BUG_WORDS, (heuristics.Tracker, "take_thread"): heuristics.Tracker.take_thread,
         (heuristics.Tracker, "_error"): _error}
ONLY_FROM = {
    "templar": [("a repeated error's call and first output line",
                 lambda: setattr(heuristics.Tracker, "_error", lambda self, tool, ex, line, at, call="", opening="": _error(self, tool, ex, line, at)))],
    "task-patterns": [("requests to remember", lambda: setattr(wording, "_REMEMBER", NEVER)),
                      ("failing tests not repeated errors", lambda: setattr(heuristics, "_TEST_FAILED", NEVER))],
    "attio": [("hooks gone around", lambda: setattr(heuristics, "_went_around", lambda s: False)),
              ("challenge questions", lambda: setattr(wording, "_BUG_WORDS", OLD_BUG_WORDS)),
              ("threads across session ids", lambda: setattr(heuristics.Tracker, "take_thread", lambda self, other: None))],
    "dmux": [("approved proposals", lambda: setattr(wording, "approves", lambda t: False))],
}
path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "eval" / "capture" / "capture-dev.yaml"
scores = []
for word, switches in ONLY_FROM.items():
    for _, off in switches:
        off()
    (score,) = evaluate(path, only={word})
    scores.append(score)
    print(f"held out {word:14} captured {len(score.captured)}/{len(score.learnings)} · candidates {len(score.candidates)}"
          f" · matching {score.matching} · most per learning {score.most_per_learning}"
          f"   (off: {', '.join(n for n, _ in switches)})")
    for (owner, name), value in saved.items():
        setattr(owner, name, value)
t = totals(scores)
print(f"held out, all: captured {t['captured']}/{t['learnings']} · candidates {t['candidates']} · matching {t['matching']}"
      f" ({t['matching_share']:.0%}) · most per learning {t['most_per_learning']}")
