"""The store's front door: what the command line, the workbench and the MCP server open and read
through. Importing it (the `store` package does, first) wires the engine's interfaces
(`store.engine.ports`) to the back-ends and the index above it, so `Store.open` works however the
caller reached it.
"""

from __future__ import annotations

from pathlib import Path

from store.backends.choice import location
from store.backends.opening import open_backend
from store.engine.clock import Clock, FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.engine.errors import ConfigError, InvalidInput, MemdeckError, NotFound, StoreError
from store.engine.ports import Backend, Wiring, wire
from store.engine.records import Activity, AddResult, Event, Memory, Project, Session


def _open_backend(path: Path | str) -> tuple[Backend, Path | None]:
    return open_backend(path)


def _index_pending(store: Store) -> int:
    from store.index.reindex import index_pending  # the index's modules load with the first write

    return index_pending(store)


def _text_cosine(a: str, b: str) -> float | None:
    from store.index import embedding

    if not embedding.available():
        return None
    embedder = embedding.embedder()
    if embedder is None:
        return None
    vectors = embedder.embed([a, b])
    return float(vectors[0] @ vectors[1])


wire(Wiring(location=location, open_backend=_open_backend, index_pending=_index_pending,
            text_cosine=_text_cosine))

__all__ = [
    "Activity", "AddResult", "Clock", "Config", "ConfigError", "Event", "FrozenClock",
    "InvalidInput", "MemdeckError", "Memory", "NotFound", "Project", "Session", "Store",
    "StoreError",
]
