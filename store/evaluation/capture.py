"""The capture eval: what capture proposes from real sessions, beside the learnings a person
labelled in them (`memdeck eval-capture FILE`).

A labelled set is a YAML file with `sessions:`, each naming a transcript (`file`, relative to the
YAML file) and its `learnings` (`learning`, `lines`, `kind`, `keywords`). Each session is
ingested into a fresh temporary store with the default settings, and its inbox candidates are
compared with its learnings.

A candidate matches a learning when its text (title and content) contains every keyword's stem:
the keyword less its last two letters, but at least four characters (`stem`). A rough automatic
check, not a substitute for reading the candidates. Per session the report gives the learnings
captured (some candidate matches them), the candidates, the share of candidates that match some
learning, the most candidates that match one learning, and for each learning missed the nearest
candidate (the most stems in common, then evidence lines closest to the learning's lines).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.engine.errors import InvalidInput

_NUMBER_RANGE = re.compile(r"(\d+)\s*[-–]\s*(\d+)|(\d+)")


def stem(keyword: str) -> str:
    """The keyword less its last two letters, at least four characters (all of a shorter one)."""
    keyword = keyword.lower()
    return keyword[:max(4, len(keyword) - 2)]


def parse_lines(value: Any) -> list[int]:
    """`lines 244, 286`, `lines 303-332`, `[12, 13]` or `7` as line numbers."""
    if isinstance(value, int):
        return [value]
    if isinstance(value, list):
        return [n for item in value for n in parse_lines(item)]
    numbers: list[int] = []
    for found in _NUMBER_RANGE.finditer(str(value or "")):
        if found.group(3):
            numbers.append(int(found.group(3)))
        else:
            low, high = int(found.group(1)), int(found.group(2))
            numbers += list(range(low, min(high, low + 500) + 1))
    return numbers


@dataclass
class Learning:
    text: str
    kind: str
    lines: list[int]
    keywords: list[str]

    @property
    def stems(self) -> list[str]:
        return [stem(k) for k in self.keywords]

    def matched_by(self, candidate_text: str, lines: list[int] | None = None) -> bool:
        """Every keyword's stem in the candidate's text; a learning labelled without keywords
        (tests/data/capture_labels.yaml) by one of its lines among the candidate's evidence lines."""
        if not self.keywords:
            return bool(lines) and bool(set(lines) & set(self.lines))
        text = candidate_text.lower()
        return all(s in text for s in self.stems)


@dataclass
class Proposed:
    """One candidate, as the eval shows it."""

    id: str
    type: str
    title: str
    text: str  # title and content, for matching
    lines: list[int]
    confidence: float
    learnings: list[int] = field(default_factory=list)  # indexes of the learnings it matches


@dataclass
class SessionScore:
    file: str
    learnings: list[Learning]
    candidates: list[Proposed]
    missing: bool = False  # the transcript is absent

    @property
    def captured(self) -> list[int]:
        return sorted({i for c in self.candidates for i in c.learnings})

    @property
    def matching(self) -> int:
        return sum(1 for c in self.candidates if c.learnings)

    @property
    def most_per_learning(self) -> int:
        counts = [sum(1 for c in self.candidates if i in c.learnings) for i in range(len(self.learnings))]
        return max(counts, default=0)

    def nearest(self, index: int) -> Proposed | None:
        learning = self.learnings[index]
        if not self.candidates:
            return None

        def closeness(candidate: Proposed) -> tuple[int, int]:
            shared = sum(1 for s in learning.stems if s in candidate.text.lower())
            distance = min((abs(a - b) for a in candidate.lines for b in learning.lines), default=10**9)
            return shared, -distance

        return max(self.candidates, key=closeness)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file, "missing": self.missing, "learnings": len(self.learnings),
            "captured": len(self.captured), "candidates": len(self.candidates), "matching": self.matching,
            "most_per_learning": self.most_per_learning,
            "candidate_list": [{"id": c.id, "type": c.type, "title": c.title, "lines": c.lines,
                                "confidence": c.confidence, "learnings": c.learnings} for c in self.candidates],
            "missed": [{"learning": self.learnings[i].text, "keywords": self.learnings[i].keywords,
                        "nearest": (n.title if (n := self.nearest(i)) else None)}
                       for i in range(len(self.learnings)) if i not in self.captured],
        }


def load_set(path: Path) -> list[dict[str, Any]]:
    """The sessions of a labelled set; a clear error for a file that is not one."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path} is not YAML: {str(exc).splitlines()[0]}") from None
    sessions = data.get("sessions") if isinstance(data, dict) else None
    if not isinstance(sessions, list) or not all(isinstance(s, dict) and s.get("file") for s in sessions):
        raise InvalidInput(f"{path} is not a capture set: it needs `sessions:`, each with a `file`")
    return sessions


def load_lessons(path: Path) -> list[dict[str, Any]]:
    """tests/data/capture_labels.yaml (`transcripts:`, each with `lessons` matched by line) as a
    capture set's sessions: files under its `transcripts/` folder, or from the project root when
    they start with `../`."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    root = path.resolve().parents[2]
    sessions = []
    for entry in data["transcripts"]:
        name = str(entry["file"])
        file = (root / name) if name.startswith("../") else path.parent / "transcripts" / name
        sessions.append({"file": str(file.resolve()), "learnings": [
            {"learning": lesson["lesson"], "kind": lesson.get("type"), "lines": lesson["lines"], "keywords": []}
            for lesson in entry.get("lessons") or []]})
    return sessions


def learnings_of(session: dict[str, Any]) -> list[Learning]:
    found = []
    for item in session.get("learnings") or []:
        if isinstance(item, dict) and item.get("learning"):
            found.append(Learning(str(item["learning"]), str(item.get("kind") or ""),
                                  parse_lines(item.get("lines")),
                                  [str(k) for k in item.get("keywords") or []]))
    return found


def score_session(path: Path, learnings: list[Learning], folder: Path, config=None) -> SessionScore:
    from store.engine.config import Config
    from store.engine.core import Store
    from store.capture.ingest import ingest_file

    if not path.is_file():
        return SessionScore(str(path), learnings, [], missing=True)
    with Store.open(folder / "eval.db", project="eval", config=config or Config.defaults()) as store:
        report = ingest_file(store, path)
        memories = store.get_many(list(dict.fromkeys(report.candidates)))
    candidates = []
    for memory in memories:
        lines = sorted({e.get("line") for e in memory.meta.get("evidence") or [] if isinstance(e.get("line"), int)})
        text = f"{memory.title}\n{memory.content}"
        candidates.append(Proposed(memory.id, memory.type, memory.title, text, lines, memory.confidence,
                                   [i for i, learning in enumerate(learnings) if learning.matched_by(text, lines)]))
    return SessionScore(str(path), learnings, candidates)


def evaluate(path: Path, config=None, only: set[str] | None = None,
             sessions: list[dict[str, Any]] | None = None) -> list[SessionScore]:
    """Every session of the set at `path` scored (`only`: the sessions whose file name contains
    one of these words; `sessions`: these instead of the file's)."""
    sessions = load_set(path) if sessions is None else sessions
    scores = []
    with tempfile.TemporaryDirectory(prefix="memdeck-eval-capture-") as tmp:
        for n, session in enumerate(sessions):
            file = (path.parent / str(session["file"])).resolve()
            if only and not any(word in file.name for word in only):
                continue
            folder = Path(tmp) / str(n)
            folder.mkdir()
            scores.append(score_session(file, learnings_of(session), folder, config))
    return scores


def totals(scores: list[SessionScore]) -> dict[str, Any]:
    present = [s for s in scores if not s.missing]
    learnings = sum(len(s.learnings) for s in present)
    candidates = sum(len(s.candidates) for s in present)
    matching = sum(s.matching for s in present)
    return {"sessions": len(present), "learnings": learnings,
            "captured": sum(len(s.captured) for s in present), "candidates": candidates,
            "matching": matching, "matching_share": matching / candidates if candidates else None,
            "per_learning": candidates / learnings if learnings else None,
            "most_per_learning": max((s.most_per_learning for s in present), default=0)}
