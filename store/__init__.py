"""memdeck's engine: a store of memories and their history, the lifecycle rules, search,
ingestion, injection and interchange. It never imports Textual. `store.api` is its front door,
re-exported here; importing the package wires the engine to its back-ends (`store.engine.ports`)."""

from store.engine.peewee_import import import_peewee

import_peewee()  # before any module imports Peewee: see store/engine/peewee_import.py

from store.api import (  # noqa: E402
    Activity, AddResult, Clock, Config, ConfigError, Event, FrozenClock, InvalidInput, MemdeckError, Memory,
    NotFound, Project, Session, Store, StoreError,
)

__all__ = [
    "Activity", "AddResult", "Clock", "Config", "ConfigError", "Event", "FrozenClock",
    "InvalidInput", "MemdeckError", "Memory", "NotFound", "Project", "Session", "Store",
    "StoreError",
]
