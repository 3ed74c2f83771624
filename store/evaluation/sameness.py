"""Measuring the sameness decision on labelled pairs (`memdeck eval-pairs FILE`).

A pairs file is YAML: `pairs:` a list of {id, label, old, new} (and optionally `half`, `rule`,
`source`), `label` one of same, update, contradiction, related, unrelated. `related` and
`unrelated` are both the decision's `distinct`. The report gives, per class, precision and
recall of `compare`, the confusion counts, and the two failures that lose or hide something:

- **silent losses**: an update or contradiction pair decided "same", so the new text would only
  reinforce the old memory (the issue's zero target);
- **retired wrongly**: a distinct pair decided a *sure* update, so the old memory would be
  superseded without review.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.engine.errors import InvalidInput
from store.engine.sameness import KINDS, Thresholds, compare

LABELS = ("same", "update", "contradiction", "related", "unrelated")
_CLASS = {"same": "same", "update": "update", "contradiction": "contradiction",
          "related": "distinct", "unrelated": "distinct"}


@dataclass(frozen=True)
class Pair:
    id: str
    label: str
    old: str
    new: str
    half: str | None = None


@dataclass
class PairsReport:
    pairs: int
    half: str | None
    precision: dict[str, float | None]
    recall: dict[str, float | None]
    support: dict[str, int]
    confusion: dict[str, dict[str, int]]  # label class -> decided kind -> count
    silent_losses: list[str] = field(default_factory=list)
    retired_wrongly: list[str] = field(default_factory=list)
    mistakes: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "half": self.half, "precision": self.precision, "recall": self.recall,
                "support": self.support, "confusion": self.confusion, "silent_losses": self.silent_losses,
                "retired_wrongly": self.retired_wrongly, "mistakes": self.mistakes}


def load_pairs(path: Path) -> list[Pair]:
    """The pairs of a file, checked: a clear error names the first bad entry."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read: {exc.strerror}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: not a YAML pairs file: {str(exc).splitlines()[0]}") from None
    items = data.get("pairs") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise InvalidInput(f"{path}: expected a mapping with a non-empty list `pairs`")
    pairs = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise InvalidInput(f"{path}: pair {number} is not a mapping")
        label, old, new = item.get("label"), item.get("old"), item.get("new")
        if label not in LABELS:
            raise InvalidInput(f"{path}: pair {number}: label must be one of {', '.join(LABELS)}, not {label!r}")
        if not isinstance(old, str) or not isinstance(new, str) or not old.strip() or not new.strip():
            raise InvalidInput(f"{path}: pair {number}: `old` and `new` must be non-empty texts")
        pairs.append(Pair(str(item.get("id") or number), label, old, new,
                          str(item["half"]) if item.get("half") is not None else None))
    return pairs


def evaluate(pairs: list[Pair], thresholds: Thresholds | None = None, *, half: str | None = None,
             semantic: bool = False) -> PairsReport:
    """With `semantic`, each pair's cosine (the semantic extra) is a signal, as on add."""
    thresholds = thresholds or Thresholds()
    if semantic:
        from store.engine.relations import semantic_cosine
    chosen = [p for p in pairs if half is None or p.half == half]
    if not chosen:
        raise InvalidInput(f"no pairs in half {half!r}")
    confusion = {kind: {k: 0 for k in KINDS} for kind in KINDS}
    silent, retired, mistakes = [], [], []
    for pair in chosen:
        verdict = compare(pair.old, pair.new, thresholds=thresholds,
                          semantic=semantic_cosine(pair.old, pair.new) if semantic else None)
        truth = _CLASS[pair.label]
        confusion[truth][verdict.kind] += 1
        if truth in ("update", "contradiction") and verdict.kind == "same":
            silent.append(pair.id)
        if truth == "distinct" and verdict.kind == "update" and verdict.sure:
            retired.append(pair.id)
        if truth != verdict.kind:
            mistakes.append({"id": pair.id, "label": pair.label, "decided": verdict.kind, "why": verdict.explain()})
    precision: dict[str, float | None] = {}
    recall: dict[str, float | None] = {}
    support = {kind: sum(confusion[kind].values()) for kind in KINDS}
    for kind in KINDS:
        decided = sum(confusion[t][kind] for t in KINDS)
        precision[kind] = round(confusion[kind][kind] / decided, 3) if decided else None
        recall[kind] = round(confusion[kind][kind] / support[kind], 3) if support[kind] else None
    return PairsReport(len(chosen), half, precision, recall, support, confusion, silent, retired, mistakes)
