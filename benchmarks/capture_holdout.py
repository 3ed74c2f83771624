"""Capture's held-out figures (issue 28): leave-one-session-out over every labelled session we
have, capture-dev (../shared/eval/capture/capture-dev.yaml, matched by keywords) and
tests/data/capture_labels.yaml (matched by evidence lines).

Capture's thresholds (`capture.min_confidence`, `capture.similarity`) are chosen on all the
sessions but one, and the session left out is scored with the thresholds chosen without it. The
figures summed over the sessions left out are the held-out estimate; the thresholds chosen on all
sessions are what the defaults should be. The choice maximises, over the sessions it sees, the
share of learnings captured plus the share of candidates that match a learning, less a penalty
when there are more than two candidates per learning; ties go to the defaults.

    .venv/bin/python benchmarks/capture_holdout.py [--json]
"""

from __future__ import annotations

import json
import sys
from itertools import product
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store.capture.evaluation import evaluate, load_lessons, load_set, totals  # noqa: E402
from store.engine.config import Config  # noqa: E402

DEV = ROOT.parent / "shared" / "eval" / "capture" / "capture-dev.yaml"
LABELS = ROOT / "tests" / "data" / "capture_labels.yaml"
MIN_CONFIDENCE = (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
SIMILARITY = (70, 80, 90)


def sessions() -> list[dict]:
    found = []
    if DEV.is_file():
        for session in load_set(DEV):
            found.append({**session, "file": str((DEV.parent / str(session["file"])).resolve()), "set": "capture-dev"})
    for session in load_lessons(LABELS):
        found.append({**session, "set": "capture_labels"})
    return [s for s in found if Path(s["file"]).is_file()]


def objective(scores) -> float:
    t = totals(scores)
    learned = t["captured"] / t["learnings"] if t["learnings"] else 0.0
    matching = t["matching_share"] or 0.0
    per = t["candidates"] / t["learnings"] if t["learnings"] else 0.0
    return learned + matching - max(0.0, per - 2.0)


def main() -> None:
    every = sessions()
    defaults = Config.defaults()
    grid = list(product(MIN_CONFIDENCE, SIMILARITY))
    default = (defaults.capture.min_confidence, defaults.capture.similarity)
    # every session scored once per setting
    scored: dict[tuple, list] = {}
    for setting in grid:
        config = defaults.with_overrides({"capture.min_confidence": setting[0], "capture.similarity": setting[1]})
        scored[setting] = evaluate(DEV, config=config, sessions=every)

    def choose(keep: list[int]) -> tuple:
        return max(grid, key=lambda s: (round(objective([scored[s][i] for i in keep]), 6), s == default,
                                        -abs(s[0] - default[0])))

    held = []
    rows = []
    for out in range(len(every)):
        setting = choose([i for i in range(len(every)) if i != out])
        score = scored[setting][out]
        held.append(score)
        rows.append({"session": Path(every[out]["file"]).name, "set": every[out]["set"], "chosen": setting,
                     "learnings": len(score.learnings), "captured": len(score.captured),
                     "candidates": len(score.candidates), "matching": score.matching,
                     "most_per_learning": score.most_per_learning})
    overall = choose(list(range(len(every))))
    result = {"held_out": totals(held), "sessions": rows, "chosen_on_all": overall,
              "held_out_dev": totals([h for h, s in zip(held, every) if s["set"] == "capture-dev"]),
              "with_defaults": totals(scored[default]) if default in scored else None,
              "dev_with_defaults": totals([sc for sc, s in zip(scored.get(default, []), every)
                                           if s["set"] == "capture-dev"]) if default in scored else None}
    if "--json" in sys.argv:
        print(json.dumps(result, indent=2, default=list))
        return
    for row in rows:
        print(f"held out {row['session'][-58:]:58} {row['set']:14} chosen min_confidence {row['chosen'][0]:.2f} "
              f"similarity {row['chosen'][1]:3}: captured {row['captured']}/{row['learnings']} · candidates "
              f"{row['candidates']} · matching {row['matching']} · most per learning {row['most_per_learning']}")
    for name in ("held_out", "held_out_dev", "with_defaults", "dev_with_defaults"):
        t = result[name]
        if t is None:
            continue
        share = f"{t['matching_share']:.0%}" if t["matching_share"] is not None else "n/a"
        per = t["candidates"] / t["learnings"] if t["learnings"] else 0.0
        print(f"{name:18} captured {t['captured']}/{t['learnings']} ({t['captured'] / max(1, t['learnings']):.0%}) · "
              f"candidates {t['candidates']} · matching {t['matching']} ({share}) · candidates per learning {per:.2f}"
              f" · most per learning {t['most_per_learning']}")
    print(f"chosen on all sessions: min_confidence {overall[0]:.2f}, similarity {overall[1]} "
          f"(defaults {default[0]:.2f}, {default[1]})")


if __name__ == "__main__":
    main()
