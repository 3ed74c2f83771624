"""An eval file (`memdeck eval`): Ralph memory files as corpora, one project each, and
labelled queries (see `../shared/eval/README.md`); what a ranker did for one query; and the
pooled set (every project given every other corpus as well)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from store.engine.errors import InvalidInput

K = 8  # the rank cut of the metrics (nDCG@8, recall@8), and Dex's top 8


@dataclass(frozen=True)
class Query:
    id: str
    project: str
    task: str
    hat: str | None = None
    paths: tuple[str, ...] = ()
    relevant: dict[str, int] = field(default_factory=dict)  # memory id -> grade (2 essential, 1 useful)
    noise_probe: bool = False
    difficulty: str = ""


@dataclass(frozen=True)
class Corpus:
    project: str
    path: Path
    suffix: str = ""  # added to each memory's id (a corpus loaded again, into another project)


@dataclass(frozen=True)
class EvalSet:
    corpora: tuple[Corpus, ...]
    queries: tuple[Query, ...]
    budget: int | None = None


@dataclass(frozen=True)
class Outcome:
    """What one ranker did for one query: its order, and what it packed into the budget."""

    ranking: list[str]
    packed: list[str]
    tokens: int
    # The ranker's whole order, when its `ranking` is cut (memdeck's: the block's memories, then
    # every other eligible candidate by score), so `order_ndcg@8` measures the order as BM25's is.
    order: list[str] | None = None


def _problem(path: Path, message: str) -> InvalidInput:
    return InvalidInput(f"{path}: {message}")


def load_eval(path: Path) -> EvalSet:
    """Read an eval file; corpus paths are relative to it."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _problem(path, f"cannot read the eval file: {exc.strerror}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise _problem(path, f"not a readable YAML file: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("corpora"), list) or not isinstance(data.get("queries"), list):
        raise _problem(path, "an eval file is a mapping with `corpora` and `queries` lists")
    corpora = []
    for number, item in enumerate(data["corpora"], start=1):
        if not isinstance(item, dict) or not item.get("project") or not item.get("file"):
            raise _problem(path, f"corpus {number} needs `project` and `file`")
        corpora.append(Corpus(str(item["project"]), (path.parent / str(item["file"])).resolve()))
    queries = []
    for number, item in enumerate(data["queries"], start=1):
        if not isinstance(item, dict) or not item.get("project") or not isinstance(item.get("task"), str):
            raise _problem(path, f"query {number} needs `project` and `task`")
        try:
            relevant = {str(r["id"]): int(r.get("grade", 1)) for r in item.get("relevant") or []}
        except (TypeError, KeyError, ValueError):
            raise _problem(path, f"query {item.get('id', number)}: `relevant` is a list of {{id, grade}}") from None
        queries.append(Query(
            id=str(item.get("id", number)), project=str(item["project"]), task=item["task"],
            hat=item.get("hat"), paths=tuple(str(p) for p in item.get("paths") or ()),
            relevant=relevant, noise_probe=bool(item.get("noise_probe")),
            difficulty=str(item.get("difficulty", "")),
        ))
    budget = data.get("budget")
    if budget is not None and (not isinstance(budget, int) or budget <= 0):
        raise _problem(path, "`budget` is a positive number of tokens")
    return EvalSet(tuple(corpora), tuple(queries), budget)


def pooled(spec: EvalSet) -> EvalSet:
    """The set with every project given every other corpus too: each project's own corpus, then
    the others as distractors, their ids made the project's own (`<id>@<n>`, n the project's
    number in the file: short, as a PostgreSQL store's ids are at most 32 characters)."""
    projects = list(dict.fromkeys(corpus.project for corpus in spec.corpora))
    corpora = [*spec.corpora, *(Corpus(project, corpus.path, suffix=f"@{number}")
                                for number, project in enumerate(projects, start=1)
                                for corpus in spec.corpora if corpus.project != project)]
    return EvalSet(tuple(corpora), spec.queries, spec.budget)
