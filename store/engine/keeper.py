"""What the Store's collaborators (`store.sessions`, `store.trash`, `store.relations`) use of the
Store that holds them, named as a Protocol: they are built by the Store, so they cannot import it,
and each reads here exactly what it borrows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

if TYPE_CHECKING:
    from store.engine.config import Config
    from store.engine.ports import Backend
    from store.engine.records import AddResult, Memory


class Keeper(Protocol):
    db: Any  # the Peewee database
    backend: "Backend"
    config: "Config"

    def now(self) -> float: ...
    def project_id(self, name: str | None = None, *, create: bool = True) -> int: ...
    def get(self, memory_id: str) -> "Memory": ...
    def get_many(self, memory_ids: Sequence[str]) -> list["Memory"]: ...
    def found(self, memory_ids: Sequence[str]) -> dict[str, "Memory"]: ...
    def edit(self, memory_id: str, *, actor: str = "cli", session_id: str | None = None,
             **changes: Any) -> "Memory": ...
    def set_status(self, memory_ids: Sequence[str], status: str, *, actor: str = "cli",
                   session_id: str | None = None) -> list["Memory"]: ...
    def add(self, content: str, *, type: str, title: str | None = None,
            tags: Iterable[str] | str | None = None, hat: str | None = None, scope: str | None = None,
            file_refs: Iterable[str] | str | None = None, confidence: float | None = None,
            source: str = "explicit", status: str = "active", session_id: str | None = None,
            task: str | None = None, project: str | None = None, actor: str = "cli",
            memory_id: str | None = None, created_at: float | None = None,
            meta: dict[str, Any] | None = None, reinforce: bool = True,
            supersedes: str | None = None, note: str | None = None,
            updated_at: float | None = None) -> "AddResult": ...
    def record_event(self, memory_id: str, kind: str, *, before: float | None, after: float | None,
                     actor: str, session_id: str | None = None, at: float | None = None,
                     detail: dict[str, Any] | None = None) -> None: ...
