"""The store's front door: what the command line, the workbench and the MCP server open and read
through, and the only module of store/ they import (`tests/test_architecture.py` checks it).
Importing it (the `store` package does, first) wires the engine's interfaces
(`store.engine.ports`) to the back-ends and the index above it, so `Store.open` works however the
caller reached it. Everything else a front end uses is named in `EXPORTS` and imported from its
module when first asked for, so a command pays only for what it uses.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

def __getattr__(name: str) -> Any:
    """A name of `EXPORTS`, imported from its module the first time it is asked for."""
    try:
        module, attribute = EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'store.api' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value



# -- what the front ends use: each name, from the module that holds it ------------------------
# Loaded on first use (`__getattr__`), so a command imports only what it calls: `memdeck prime`
# in a hook stays near the import floor. A module given whole has no attribute (None).
EXPORTS: dict[str, tuple[str, str | None]] = {
    "ACTIVITY_KINDS": ("store.engine.vocabulary", "ACTIVITY_KINDS"),
    "add_anchored": ("store.anchors.anchoring", "add_anchored"),
    "Anchor": ("store.anchors.anchoring", "Anchor"),
    "anchor_memory": ("store.anchors.anchoring", "anchor_memory"),
    "AnchorDiff": ("store.anchors.diff", "AnchorDiff"),
    "anchors_of": ("store.anchors.anchoring", "anchors_of"),
    "append": ("store.interop.team_file", "append"),
    "as_spec": ("store.anchors.anchoring", "as_spec"),
    "blame": ("store.engine.trail", "blame"),
    "brief_value": ("store.engine.errors", "brief_value"),
    "BUCKETS": ("store.browse.timeline", "BUCKETS"),
    "build_demo": ("store.demo", "build_demo"),
    "BulkResult": ("store.engine.curation", "BulkResult"),
    "capture_totals": ("store.evaluation.capture", "totals"),
    "check": ("store.backends.doctor", "check"),
    "check_project_name": ("store.engine.limits", "check_project_name"),
    "check_store_folder": ("store.backends.opening", "check_store_folder"),
    "clean_field": ("store.engine.redaction", "clean_field"),
    "clean_list": ("store.engine.core", "clean_list"),
    "CONFIDENCE_STEP": ("store.engine.curation", "CONFIDENCE_STEP"),
    "Conflict": ("store.engine.errors", "Conflict"),
    "connect": ("store.backends.opening", "connect"),
    "consolidate": ("store.engine.consolidation", "consolidate"),
    "copy_store": ("store.interop.copying", "copy_store"),
    "count_memories": ("store.browse.search", "count_memories"),
    "Counts": ("store.browse.paging", "Counts"),
    "CROSS_LARGE": ("store.evaluation.retrieval", "CROSS_LARGE"),
    "cross_validate": ("store.evaluation.retrieval", "cross_validate"),
    "Curator": ("store.engine.curation", "Curator"),
    "DAY": ("store.engine.clock", "DAY"),
    "default_db_path": ("store.engine.database", "default_db_path"),
    "describe": ("store.engine.diagnosis", "describe"),
    "detect_project": ("store.engine.projects", "detect_project"),
    "DIFFICULTIES": ("store.evaluation.retrieval", "DIFFICULTIES"),
    "embedding": ("store.index.embedding", None),
    "environment": ("store.engine.environment", None),
    "evaluate_capture": ("store.evaluation.capture", "evaluate"),
    "evaluate_replay": ("store.evaluation.replay_eval", "evaluate"),
    "evaluate_sameness": ("store.evaluation.sameness", "evaluate"),
    "EVENT_MARKS": ("store.browse.timeline", "EVENT_MARKS"),
    "event_note": ("store.anchors.anchoring", "event_note"),
    "export_into": ("store.interop.transfer", "export_into"),
    "export_text": ("store.interop.transfer", "export_text"),
    "feedback_folds": ("store.evaluation.feedback_folds", "feedback_folds"),
    "figures": ("store.replay.report", "figures"),
    "find": ("store.engine.session_log", "find"),
    "find_git_root": ("store.engine.projects", "find_git_root"),
    "folder_project": ("store.engine.projects", "folder_project"),
    "give": ("store.layers.feedback", "give"),
    "hide_passwords": ("store.engine.redaction", "hide_passwords"),
    "history_format": ("store.capture.ingest.history", "history_format"),
    "holds_password": ("store.engine.redaction", "holds_password"),
    "import_file": ("store.interop.transfer", "import_file"),
    "ingest_file": ("store.capture.ingest", "ingest_file"),
    "ingest_stream": ("store.capture.ingest", "ingest_stream"),
    "IngestOptions": ("store.capture.ingest", "IngestOptions"),
    "InjectionContext": ("store.retrieval.injection", "InjectionContext"),
    "INVISIBLE": ("store.engine.redaction", "INVISIBLE"),
    "iso": ("store.engine.clock", "iso"),
    "json_safe": ("store.engine.escapes", "json_safe"),
    "keep_opened": ("store.engine.openings", "keep_opened"),
    "KINDS": ("store.engine.sameness", "KINDS"),
    "Layers": ("store.layers.layers", "Layers"),
    "list_memories": ("store.browse.search", "list_memories"),
    "Listing": ("store.browse.paging", "Listing"),
    "listing_keys": ("store.layers.layers", "listing_keys"),
    "ListQuery": ("store.browse.paging", "ListQuery"),
    "load_pairs": ("store.evaluation.sameness", "load_pairs"),
    "Loaded": ("store.browse.paging", "Loaded"),
    "LOSS_KINDS": ("store.evaluation.retrieval", "LOSS_KINDS"),
    "MAIN_PROJECT": ("store.demo", "MAIN_PROJECT"),
    "memory_diffs": ("store.anchors.diff", "memory_diffs"),
    "memory_timeline": ("store.browse.timeline", "memory_timeline"),
    "MemoryFilter": ("store.browse.search", "MemoryFilter"),
    "METRICS": ("store.evaluation.retrieval", "METRICS"),
    "MISS_CAUSES": ("store.evaluation.replay_eval", "MISS_CAUSES"),
    "names_file": ("store.backends.choice", "names_file"),
    "open_scratch": ("store.replay.engine", "open_scratch"),
    "OPENED": ("store.engine.openings", "OPENED"),
    "opening": ("store.engine.openings", "opening"),
    "opening_detail": ("store.engine.openings", "opening_detail"),
    "PAGE_SIZE": ("store.browse.paging", "PAGE_SIZE"),
    "paging": ("store.browse.paging", None),
    "parse_spec": ("store.anchors.anchoring", "parse_spec"),
    "parse_time": ("store.engine.clock", "parse_time"),
    "path_part": ("store.anchors.anchoring", "path_part"),
    "postgres_location": ("store.backends.postgres", "location"),
    "postgres_roles": ("store.backends.postgres_roles", None),
    "prime": ("store.retrieval.injection", "prime"),
    "prime_for_prompt": ("store.retrieval.injection", "prime_for_prompt"),
    "prime_session_start": ("store.retrieval.injection", "prime_session_start"),
    "PrimeResult": ("store.retrieval.injection", "PrimeResult"),
    "project_confidence": ("store.browse.timeline", "project_confidence"),
    "project_folds": ("store.evaluation.project_folds", "project_folds"),
    "project_stats": ("store.browse.stats", "project_stats"),
    "ProjectConfidence": ("store.browse.timeline", "ProjectConfidence"),
    "RankedMemory": ("store.retrieval.ranking", "RankedMemory"),
    "read_head": ("store.browse.paging", "read_head"),
    "read_histories": ("store.capture.ingest.history", "read_histories"),
    "reanchor": ("store.anchors.verify", "reanchor"),
    "redacted": ("store.backends.postgres", "redacted"),
    "refusal": ("store.backends.postgres_roles", "refusal"),
    "reindex": ("store.index.reindex", "reindex"),
    "repair": ("store.backends.doctor", "repair"),
    "replay": ("store.replay.engine", "replay"),
    "Replay": ("store.replay.engine", "Replay"),
    "REPLAY_GRID": ("store.evaluation.replay_eval", "REPLAY_GRID"),
    "replay_totals": ("store.evaluation.replay_eval", "totals"),
    "report_json": ("store.replay.report", "report_json"),
    "report_lines": ("store.replay.report", "report_lines"),
    "resembling": ("store.browse.look_alikes", "resembling"),
    "RESOLUTIONS": ("store.engine.curation", "RESOLUTIONS"),
    "run_cleanup": ("store.engine.lifecycle", "run_cleanup"),
    "run_decay": ("store.engine.lifecycle", "run_decay"),
    "run_eval": ("store.evaluation.retrieval", "run_eval"),
    "session_log": ("store.engine.session_log", None),
    "SessionSummary": ("store.engine.session_log", "SessionSummary"),
    "set_anchors": ("store.anchors.anchoring", "set_anchors"),
    "settle": ("store.engine.feedback", "settle"),
    "settle_listings": ("store.engine.openings", "settle_listings"),
    "share": ("store.interop.sharing", "share"),
    "skill_text": ("store.retrieval.skill", "skill_text"),
    "SORT_COLUMNS": ("store.layers.layers", "SORT_COLUMNS"),
    "SORTS": ("store.browse.search", "SORTS"),
    "SOURCES": ("store.engine.vocabulary", "SOURCES"),
    "stale_vectors": ("store.index.reindex", "stale_vectors"),
    "STATUSES": ("store.engine.vocabulary", "STATUSES"),
    "summaries": ("store.engine.session_log", "summaries"),
    "tail": ("store.engine.session_log", "tail"),
    "team_file_location": ("store.layers.layers", "team_file_location"),
    "Timeline": ("store.browse.timeline", "Timeline"),
    "TimelinePoint": ("store.browse.timeline", "TimelinePoint"),
    "transcript_problem": ("store.capture.ingest.formats", "transcript_problem"),
    "VERDICTS": ("store.engine.feedback", "VERDICTS"),
    "verify": ("store.anchors.verify", "verify"),
    "Vocabulary": ("store.engine.vocabulary", "Vocabulary"),
    "whole_characters": ("store.engine.redaction", "whole_characters"),
    "write_output": ("store.interop.files", "write_output"),
}

if TYPE_CHECKING:  # the same names, for type checkers (used through EXPORTS)
    from store.engine.vocabulary import ACTIVITY_KINDS  # noqa: F401
    from store.anchors.anchoring import add_anchored  # noqa: F401
    from store.anchors.anchoring import Anchor  # noqa: F401
    from store.anchors.anchoring import anchor_memory  # noqa: F401
    from store.anchors.diff import AnchorDiff  # noqa: F401
    from store.anchors.anchoring import anchors_of  # noqa: F401
    from store.interop.team_file import append  # noqa: F401
    from store.anchors.anchoring import as_spec  # noqa: F401
    from store.engine.trail import blame  # noqa: F401
    from store.engine.errors import brief_value  # noqa: F401
    from store.browse.timeline import BUCKETS  # noqa: F401
    from store.demo import build_demo  # noqa: F401
    from store.engine.curation import BulkResult  # noqa: F401
    from store.evaluation.capture import totals as capture_totals  # noqa: F401
    from store.backends.doctor import check  # noqa: F401
    from store.engine.limits import check_project_name  # noqa: F401
    from store.backends.opening import check_store_folder  # noqa: F401
    from store.engine.redaction import clean_field  # noqa: F401
    from store.engine.core import clean_list  # noqa: F401
    from store.engine.curation import CONFIDENCE_STEP  # noqa: F401
    from store.engine.errors import Conflict  # noqa: F401
    from store.backends.opening import connect  # noqa: F401
    from store.engine.consolidation import consolidate  # noqa: F401
    from store.interop.copying import copy_store  # noqa: F401
    from store.browse.search import count_memories  # noqa: F401
    from store.browse.paging import Counts  # noqa: F401
    from store.evaluation.retrieval import CROSS_LARGE  # noqa: F401
    from store.evaluation.retrieval import cross_validate  # noqa: F401
    from store.engine.curation import Curator  # noqa: F401
    from store.engine.clock import DAY  # noqa: F401
    from store.engine.database import default_db_path  # noqa: F401
    from store.engine.diagnosis import describe  # noqa: F401
    from store.engine.projects import detect_project  # noqa: F401
    from store.evaluation.retrieval import DIFFICULTIES  # noqa: F401
    from store.index import embedding  # noqa: F401
    from store.engine import environment  # noqa: F401
    from store.evaluation.capture import evaluate as evaluate_capture  # noqa: F401
    from store.evaluation.replay_eval import evaluate as evaluate_replay  # noqa: F401
    from store.evaluation.sameness import evaluate as evaluate_sameness  # noqa: F401
    from store.browse.timeline import EVENT_MARKS  # noqa: F401
    from store.anchors.anchoring import event_note  # noqa: F401
    from store.interop.transfer import export_into  # noqa: F401
    from store.interop.transfer import export_text  # noqa: F401
    from store.evaluation.feedback_folds import feedback_folds  # noqa: F401
    from store.replay.report import figures  # noqa: F401
    from store.engine.session_log import find  # noqa: F401
    from store.engine.projects import find_git_root  # noqa: F401
    from store.engine.projects import folder_project  # noqa: F401
    from store.layers.feedback import give  # noqa: F401
    from store.engine.redaction import hide_passwords  # noqa: F401
    from store.capture.ingest.history import history_format  # noqa: F401
    from store.engine.redaction import holds_password  # noqa: F401
    from store.interop.transfer import import_file  # noqa: F401
    from store.capture.ingest import ingest_file  # noqa: F401
    from store.capture.ingest import ingest_stream  # noqa: F401
    from store.capture.ingest import IngestOptions  # noqa: F401
    from store.retrieval.injection import InjectionContext  # noqa: F401
    from store.engine.redaction import INVISIBLE  # noqa: F401
    from store.engine.clock import iso  # noqa: F401
    from store.engine.escapes import json_safe  # noqa: F401
    from store.engine.openings import keep_opened  # noqa: F401
    from store.engine.sameness import KINDS  # noqa: F401
    from store.layers.layers import Layers  # noqa: F401
    from store.browse.search import list_memories  # noqa: F401
    from store.browse.paging import Listing  # noqa: F401
    from store.layers.layers import listing_keys  # noqa: F401
    from store.browse.paging import ListQuery  # noqa: F401
    from store.evaluation.sameness import load_pairs  # noqa: F401
    from store.browse.paging import Loaded  # noqa: F401
    from store.evaluation.retrieval import LOSS_KINDS  # noqa: F401
    from store.demo import MAIN_PROJECT  # noqa: F401
    from store.anchors.diff import memory_diffs  # noqa: F401
    from store.browse.timeline import memory_timeline  # noqa: F401
    from store.browse.search import MemoryFilter  # noqa: F401
    from store.evaluation.retrieval import METRICS  # noqa: F401
    from store.evaluation.replay_eval import MISS_CAUSES  # noqa: F401
    from store.backends.choice import names_file  # noqa: F401
    from store.replay.engine import open_scratch  # noqa: F401
    from store.engine.openings import OPENED  # noqa: F401
    from store.engine.openings import opening  # noqa: F401
    from store.engine.openings import opening_detail  # noqa: F401
    from store.browse.paging import PAGE_SIZE  # noqa: F401
    from store.browse import paging  # noqa: F401
    from store.anchors.anchoring import parse_spec  # noqa: F401
    from store.engine.clock import parse_time  # noqa: F401
    from store.anchors.anchoring import path_part  # noqa: F401
    from store.backends.postgres import location as postgres_location  # noqa: F401
    from store.backends import postgres_roles  # noqa: F401
    from store.retrieval.injection import prime  # noqa: F401
    from store.retrieval.injection import prime_for_prompt  # noqa: F401
    from store.retrieval.injection import prime_session_start  # noqa: F401
    from store.retrieval.injection import PrimeResult  # noqa: F401
    from store.browse.timeline import project_confidence  # noqa: F401
    from store.evaluation.project_folds import project_folds  # noqa: F401
    from store.browse.stats import project_stats  # noqa: F401
    from store.browse.timeline import ProjectConfidence  # noqa: F401
    from store.retrieval.ranking import RankedMemory  # noqa: F401
    from store.browse.paging import read_head  # noqa: F401
    from store.capture.ingest.history import read_histories  # noqa: F401
    from store.anchors.verify import reanchor  # noqa: F401
    from store.backends.postgres import redacted  # noqa: F401
    from store.backends.postgres_roles import refusal  # noqa: F401
    from store.index.reindex import reindex  # noqa: F401
    from store.backends.doctor import repair  # noqa: F401
    from store.replay.engine import replay  # noqa: F401
    from store.replay.engine import Replay  # noqa: F401
    from store.evaluation.replay_eval import REPLAY_GRID  # noqa: F401
    from store.evaluation.replay_eval import totals as replay_totals  # noqa: F401
    from store.replay.report import report_json  # noqa: F401
    from store.replay.report import report_lines  # noqa: F401
    from store.browse.look_alikes import resembling  # noqa: F401
    from store.engine.curation import RESOLUTIONS  # noqa: F401
    from store.engine.lifecycle import run_cleanup  # noqa: F401
    from store.engine.lifecycle import run_decay  # noqa: F401
    from store.evaluation.retrieval import run_eval  # noqa: F401
    from store.engine import session_log  # noqa: F401
    from store.engine.session_log import SessionSummary  # noqa: F401
    from store.anchors.anchoring import set_anchors  # noqa: F401
    from store.engine.feedback import settle  # noqa: F401
    from store.engine.openings import settle_listings  # noqa: F401
    from store.interop.sharing import share  # noqa: F401
    from store.retrieval.skill import skill_text  # noqa: F401
    from store.layers.layers import SORT_COLUMNS  # noqa: F401
    from store.browse.search import SORTS  # noqa: F401
    from store.engine.vocabulary import SOURCES  # noqa: F401
    from store.index.reindex import stale_vectors  # noqa: F401
    from store.engine.vocabulary import STATUSES  # noqa: F401
    from store.engine.session_log import summaries  # noqa: F401
    from store.engine.session_log import tail  # noqa: F401
    from store.layers.layers import team_file_location  # noqa: F401
    from store.browse.timeline import Timeline  # noqa: F401
    from store.browse.timeline import TimelinePoint  # noqa: F401
    from store.capture.ingest.formats import transcript_problem  # noqa: F401
    from store.engine.feedback import VERDICTS  # noqa: F401
    from store.anchors.verify import verify  # noqa: F401
    from store.engine.vocabulary import Vocabulary  # noqa: F401
    from store.engine.redaction import whole_characters  # noqa: F401
    from store.interop.files import write_output  # noqa: F401
# -- end of what the front ends use ---------------------------------------------------------

__all__ = [
    "Activity", "AddResult", "Clock", "Config", "ConfigError", "Event", "FrozenClock",
    "InvalidInput", "MemdeckError", "Memory", "NotFound", "Project", "Session", "Store",
    "StoreError",
]
