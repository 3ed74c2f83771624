"""memdeck's engine: a SQLite store of memories and their history, the lifecycle rules, search,
ingestion, injection and interchange. It never imports Textual."""

from store.peewee_import import import_peewee

import_peewee()  # before any module imports Peewee: see store/peewee_import.py


from store.clock import Clock, FrozenClock
from store.config import Config
from store.core import Store
from store.errors import ConfigError, InvalidInput, MemdeckError, NotFound, StoreError
from store.records import Activity, AddResult, Event, Memory, Project, Session

__all__ = [
    "Activity", "AddResult", "Clock", "Config", "ConfigError", "Event", "FrozenClock",
    "InvalidInput", "MemdeckError", "Memory", "NotFound", "Project", "Session", "Store",
    "StoreError",
]
