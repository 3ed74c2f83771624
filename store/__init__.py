"""memdeck's engine: a SQLite store of memories and their history, the lifecycle rules, search,
ingestion, injection and interchange. It never imports Textual."""

from store.engine.peewee_import import import_peewee

import_peewee()  # before any module imports Peewee: see store/engine/peewee_import.py


from store.engine.clock import Clock, FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.engine.errors import ConfigError, InvalidInput, MemdeckError, NotFound, StoreError
from store.engine.records import Activity, AddResult, Event, Memory, Project, Session

__all__ = [
    "Activity", "AddResult", "Clock", "Config", "ConfigError", "Event", "FrozenClock",
    "InvalidInput", "MemdeckError", "Memory", "NotFound", "Project", "Session", "Store",
    "StoreError",
]
