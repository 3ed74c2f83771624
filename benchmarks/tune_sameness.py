"""Choose the sameness thresholds on the `tune` half of a pairs file; report them on `test`.

    .venv/bin/python benchmarks/tune_sameness.py tests/data/pairs/ralph-pairs.yaml

The grid is small on purpose. A setting is admissible on the tune half when no update or
contradiction pair is decided "same" (no silent loss); among those, the best has the highest
smallest recall of update and contradiction, then the highest precision of "same", then the
*lowest* `related` line (the cautious side: the Ralph texts are long, and a short statement
such as "Use Redis for caching" shares only half its words with its update "Use Memcached for
caching"), then the highest distinct recall (fewest proposals a person must dismiss). The
chosen setting is then evaluated once on the test half, which played no part in choosing it.
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import replace
from pathlib import Path

from store.engine.sameness import Thresholds
from store.evaluation.sameness import evaluate, load_pairs

GRID = {
    "related": (0.4, 0.5, 0.6, 0.7),
    "contradiction": (0.5, 0.6, 0.7, 0.8),
    "same": (75.0, 85.0, 95.0),
    "max_change": (0.3, 0.4, 0.5, 0.6),
}


def main(path: str) -> None:
    pairs = load_pairs(Path(path))
    best = None
    for values in itertools.product(*GRID.values()):
        thresholds = replace(Thresholds(), **dict(zip(GRID, values)))
        report = evaluate(pairs, thresholds, half="tune")
        if report.silent_losses:
            continue
        key = (min(report.recall["update"] or 0, report.recall["contradiction"] or 0),
               report.precision["same"] or 0, -values[0], report.recall["distinct"] or 0)
        if best is None or key > best[0]:
            best = (key, thresholds)
    assert best is not None, "no setting without silent losses on the tune half"
    chosen = best[1]
    print("chosen on tune:", {k: getattr(chosen, k) for k in GRID})
    for half in ("tune", "test"):
        report = evaluate(pairs, chosen, half=half)
        print(f"{half}: {report.pairs} pairs; silent losses {len(report.silent_losses)}; "
              f"retired wrongly {len(report.retired_wrongly)}")
        for kind in ("same", "update", "contradiction", "distinct"):
            print(f"  {kind:13} precision {report.precision[kind]}  recall {report.recall[kind]}  "
                  f"(n={report.support[kind]})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/pairs/ralph-pairs.yaml")
