"""The plain, frozen values the store hands out. The UI and the command line see only these,
never Peewee rows, so they can be passed between threads and compared in tests."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from store.engine.clock import iso


@dataclass(frozen=True)
class Project:
    id: int
    name: str
    root: str | None
    created_at: float
    memory_count: int = 0  # memories not in the trash


@dataclass(frozen=True)
class Memory:
    id: str
    project: str
    type: str
    title: str
    content: str
    confidence: float
    tags: tuple[str, ...] = ()
    file_refs: tuple[str, ...] = ()
    scope: str | None = None
    hat: str | None = None
    source: str = "explicit"
    status: str = "active"
    protected: bool = False
    session_id: str | None = None
    task: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    last_used_at: float | None = None
    verified_at: float | None = None
    use_count: int = 0
    supersedes: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    # Raised by every write; what `Store.update` compares. Counts writes in one store, so two
    # copies of a memory (an export re-imported) are equal whatever their versions.
    version: int = field(default=1, compare=False)
    # The worst status of its anchors' last check: fresh, moved, changed or missing; None
    # without anchors. Read with the memory, not one of its fields.
    anchor_status: str | None = field(default=None, compare=False)
    # The layer it was read from (store.layers.layers): "own" (the person's store), "team" (the
    # team store, setting `team.db`) or "file" (the repository's `.memdeck/team.yaml`).
    layer: str = field(default="own", compare=False)

    @property
    def stale(self) -> bool:
        """The code it is anchored to changed or went missing at the last check."""
        return self.anchor_status in ("changed", "missing")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if self.anchor_status is None:
            del data["anchor_status"]
        data["tags"] = list(self.tags)
        data["file_refs"] = list(self.file_refs)
        for key in ("created_at", "updated_at", "last_used_at", "verified_at"):
            data[key] = iso(data[key])
        return data


@dataclass(frozen=True)
class Event:
    id: int
    memory_id: str
    kind: str
    at: float
    actor: str
    session_id: str | None
    confidence_before: float | None
    confidence_after: float | None
    detail: dict[str, Any] = field(default_factory=dict, compare=False)
    author: str | None = field(default=None, compare=False)  # the person; None before migration 9

    def confidence_change(self) -> str:
        """"0.60 → 0.70", or "0.60" when the event left the confidence as it was (an edit of the
        text, say), or "" when it has none."""
        before, after = self.confidence_before, self.confidence_after
        if after is None:
            return ""
        if before is None or abs(after - before) < 1e-9:
            return f"{after:.2f}"
        return f"{before:.2f} → {after:.2f}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["at"] = iso(self.at)
        return data


@dataclass(frozen=True)
class Session:
    id: str
    project: str
    agent: str | None
    hat: str | None
    task: str | None
    started_at: float
    ended_at: float | None
    source_path: str | None
    files_touched: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["files_touched"] = list(self.files_touched)
        data["started_at"] = iso(self.started_at)
        data["ended_at"] = iso(self.ended_at)
        return data


@dataclass(frozen=True)
class Activity:
    id: int
    session_id: str
    seq: int
    at: float
    kind: str
    summary: str
    memory_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["at"] = iso(self.at)
        return data


@dataclass(frozen=True)
class AddResult:
    """What `Store.add` did: stored a new memory, or reinforced an existing one."""

    memory: Memory
    created: bool  # False: an existing memory was reinforced
    # What the sameness decision said of the memory the new text bears on (store.engine.sameness):
    # {"kind", "sure", "other", "why", "superseded"}; None when it bore on none.
    decided: dict[str, Any] | None = None

    @property
    def action(self) -> str:
        if not self.created:
            return "reinforced"
        if self.decided and self.decided.get("superseded"):
            return "updated"
        if self.decided:
            return "proposed"
        return "created"


@dataclass(frozen=True)
class InjectionContext:
    """Who will read the memories and for what (`prime`'s input, read by ranking and the gate).
    Times are unix seconds."""

    hat: str | None = None
    task: str = ""
    paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    session_id: str | None = None  # the reading session: its own memories are left out
    own_memories: bool = False  # ...unless it asks for them (an agent's `context` call over MCP)
    budget: int | None = None  # tokens; None: `injection.budget` from config
    project: str | None = None  # None: the store's project
    since: float | None = None  # only memories other sessions created or reinforced since then
