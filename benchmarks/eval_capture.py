"""Recall and precision of capture (inbox candidates from transcripts without markers) against
the lessons labelled by hand in tests/data/capture_labels.yaml.

Each transcript is ingested into a fresh store with the default settings. A candidate counts for
a lesson when one of its evidence lines is one of the lesson's lines. Recall: the share of
labelled lessons some candidate counts for. Precision: the share of candidates that count for a
lesson (a candidate that counts for none is one a strict reviewer rejects). Transcripts under
../shared are skipped, and said so, when ../shared is absent.

    .venv/bin/python benchmarks/eval_capture.py [--json]
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store import Config, Store  # noqa: E402
from store.capture.ingest import ingest_file  # noqa: E402

LABELS = ROOT / "tests" / "data" / "capture_labels.yaml"
OWN = ROOT / "tests" / "data" / "transcripts"


@dataclass
class Scored:
    file: str
    lessons: int
    shared: bool  # one of the real transcripts under ../shared
    found: list[str] = field(default_factory=list)  # lesson ids some candidate counts for
    missed: list[str] = field(default_factory=list)
    candidates: list[dict] = field(default_factory=list)  # {"title", "type", "lines", "lesson"}

    @property
    def kept(self) -> int:
        return sum(1 for c in self.candidates if c["lesson"])

    @property
    def recall(self) -> float | None:
        return len(self.found) / self.lessons if self.lessons else None

    @property
    def precision(self) -> float | None:
        return self.kept / len(self.candidates) if self.candidates else None


def transcript_path(name: str) -> Path:
    return (ROOT / name).resolve() if name.startswith("../") else OWN / name


def load_labels() -> list[dict]:
    import yaml

    return yaml.safe_load(LABELS.read_text(encoding="utf-8"))["transcripts"]


def score(entry: dict, folder: Path) -> Scored:
    path = transcript_path(entry["file"])
    lessons = entry.get("lessons") or []
    with Store.open(folder / "eval.db", project="eval", config=Config.defaults()) as store:
        report = ingest_file(store, path)
        memories = store.get_many(list(dict.fromkeys(report.candidates)))
    scored = Scored(Path(entry["file"]).name, len(lessons), entry["file"].startswith("../"))
    hit: set[str] = set()
    for memory in memories:
        lines = {e.get("line") for e in memory.meta.get("evidence") or []}
        lesson = next((les["id"] for les in lessons if lines & set(les["lines"])), None)
        if lesson:
            hit.add(lesson)
        scored.candidates.append({"title": memory.title, "type": memory.type,
                                  "lines": sorted(n for n in lines if n is not None), "lesson": lesson})
    scored.found = [les["id"] for les in lessons if les["id"] in hit]
    scored.missed = [les["id"] for les in lessons if les["id"] not in hit]
    return scored


def evaluate() -> tuple[list[Scored], list[str]]:
    """Every labelled transcript scored; and the ones skipped because their file is absent."""
    results, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n, entry in enumerate(load_labels()):
            if not transcript_path(entry["file"]).is_file():
                skipped.append(entry["file"])
                continue
            folder = Path(tmp) / str(n)
            folder.mkdir()
            results.append(score(entry, folder))
    return results, skipped


def totals(results: list[Scored]) -> tuple[float, float]:
    lessons = sum(r.lessons for r in results)
    candidates = sum(len(r.candidates) for r in results)
    return (sum(len(r.found) for r in results) / lessons if lessons else 1.0,
            sum(r.kept for r in results) / candidates if candidates else 1.0)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def main() -> None:
    results, skipped = evaluate()
    if "--json" in sys.argv:
        print(json.dumps({"transcripts": [{**asdict(r), "recall": r.recall, "precision": r.precision}
                                          for r in results], "skipped": skipped}, indent=2))
        return
    print(f"{'transcript':58} {'lessons':>7} {'found':>5} {'recall':>6} {'cands':>5} {'kept':>4} {'precision':>9}")
    for r in results:
        print(f"{r.file[-58:]:58} {r.lessons:7} {len(r.found):5} {_percent(r.recall):>6} "
              f"{len(r.candidates):5} {r.kept:4} {_percent(r.precision):>9}")
    recall, precision = totals(results)
    print(f"{'all':58} {sum(r.lessons for r in results):7} {sum(len(r.found) for r in results):5} "
          f"{recall:6.0%} {sum(len(r.candidates) for r in results):5} {sum(r.kept for r in results):4} {precision:9.0%}")
    for r in results:
        for c in r.candidates:
            if not c["lesson"]:
                print(f"  rejected in {r.file[-40:]}: {c['type']} {c['title']!r} (lines {c['lines']})")
        for missed in r.missed:
            print(f"  missed in {r.file[-40:]}: {missed}")
    for name in skipped:
        print(f"skipped (file absent): {name}")


if __name__ == "__main__":
    main()
