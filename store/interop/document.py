"""What every reader hands the importer: memories as read from a file (only the fields that file
carries), with their events, sessions and projects when the format has them.

Readers check each value's type here, so a wrong value is reported with where it was
(`memories[3].confidence`) before anything is written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import PurePosixPath
from typing import Any

from store.engine.errors import InvalidInput
from store.engine.limits import MAX_COUNT, check_datetime, check_time, safe_project_name, sane_time
from store.engine.vocabulary import EVENT_KINDS, SOURCES, STATUSES

MAX_ID_LENGTH = 128


@dataclass(frozen=True)
class IncomingMemory:
    """One memory from a file. `fields` holds memdeck field names, with times as unix floats,
    and only the fields the format carries: the importer compares and fills in nothing else."""

    fields: dict[str, Any]
    where: str  # "line 12", "memories[3]": how a message points at it
    events: tuple[dict[str, Any], ...] | None = None  # None: the format carries no history
    anchors: tuple[dict[str, Any], ...] | None = None  # None: the format carries no anchors
    # memdeck types the format writes the same way as this one (Ralph's Patterns section holds
    # conventions too): a stored memory of any of them has not changed type.
    same_types: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ImportDocument:
    format: str  # json, ralph, nova, yaml
    source: str  # the file name, or "-" for stdin
    memories: list[IncomingMemory]
    project: str | None = None  # the project the file says it belongs to, if it says
    projects: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[dict[str, Any]] = field(default_factory=list)  # each with "activities"
    problems: list[str] = field(default_factory=list)  # parts of the file that were not read


def iso_exact(ts: float | None) -> str | None:
    """An ISO 8601 UTC time, with microseconds only when the time has a fraction of a second."""
    if ts is None:
        return None
    moment = datetime.fromtimestamp(sane_time(ts), tz=timezone.utc)
    spec = "microseconds" if moment.microsecond else "seconds"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


class Reader:
    """Typed access to a parsed mapping, with errors that say where the bad value is."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise InvalidInput(f"{where}: expected an object, got {_kind(data)}")
        self.data = data
        self.where = where

    def has(self, key: str) -> bool:
        return key in self.data

    def at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def text(self, key: str, *, required: bool = False) -> str | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise InvalidInput(f"{self.at(key)}: expected text, got {'nothing' if key not in self.data else 'null'}")
            return None
        if not isinstance(value, str):
            raise InvalidInput(f"{self.at(key)}: expected text, got {_kind(value)}")
        return value

    def number(self, key: str, *, low: float | None = None, high: float | None = None) -> float | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InvalidInput(f"{self.at(key)}: expected a number, got {_kind(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise InvalidInput(f"{self.at(key)}: {value} is not between {low} and {high}")
        return float(value)

    def integer(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidInput(f"{self.at(key)}: expected a whole number of 0 or more, got {_kind(value)}")
        if value > MAX_COUNT:
            raise InvalidInput(f"{self.at(key)}: {str(value)[:20]}… is over the largest number memdeck keeps "
                               f"({MAX_COUNT})")
        return value

    def flag(self, key: str) -> bool | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise InvalidInput(f"{self.at(key)}: expected true or false, got {_kind(value)}")
        return value

    def words(self, key: str) -> tuple[str, ...] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidInput(f"{self.at(key)}: expected a list of text, got {_kind(value)}")
        return tuple(value)

    def mapping(self, key: str) -> dict[str, Any] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise InvalidInput(f"{self.at(key)}: expected an object, got {_kind(value)}")
        return value

    def items(self, key: str) -> list[Any]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise InvalidInput(f"{self.at(key)}: expected a list, got {_kind(value)}")
        return value

    def time(self, key: str) -> float | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return check_time(value, self.at(key))
        if isinstance(value, datetime):  # YAML reads unquoted timestamps as datetimes
            return check_datetime(value if value.tzinfo else value.replace(tzinfo=timezone.utc), self.at(key))
        if isinstance(value, str):
            return read_time(value, self.at(key))
        raise InvalidInput(f"{self.at(key)}: expected a date-time, got {_kind(value)}")

    def choice(self, key: str, allowed: tuple[str, ...]) -> str | None:
        value = self.text(key)
        if value is not None and value not in allowed:
            raise InvalidInput(f"{self.at(key)}: {value!r} is not one of {', '.join(allowed)}")
        return value


def read_time(text: str, where: str) -> float:
    """An ISO 8601 date or date-time as written in a file (UTC unless it says otherwise)."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"{where}: cannot read {text[:40]!r} as an ISO date-time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return check_datetime(moment, where)


def memory_id(reader: Reader, key: str = "id") -> str | None:
    value = reader.text(key)
    if value is None:
        return None
    # Of the characters that are white space, only the ASCII space is printable.
    if not value or len(value) > MAX_ID_LENGTH or " " in value or not value.isprintable():
        raise InvalidInput(f"{reader.at(key)}: {value[:40]!r} is not a usable memory id")
    return value


# A memory's fields in the order `read_memory` reads them, each with how it is checked. Present
# when not null ("set"), or whenever the key is there, null included ("has").
_TEXT, _NUMBER, _WORDS, _SOURCE, _STATUS, _FLAG, _INTEGER, _MAPPING, _TIME, _ID = range(10)
_MEMORY_FIELDS = (
    ("id", _ID, False), ("project", _TEXT, False), ("title", _TEXT, False), ("confidence", _NUMBER, False),
    ("tags", _WORDS, False), ("file_refs", _WORDS, False), ("source", _SOURCE, False),
    ("status", _STATUS, False), ("protected", _FLAG, False), ("use_count", _INTEGER, False),
    ("meta", _MAPPING, False),
    *((name, _TEXT, True) for name in ("scope", "hat", "session_id", "task", "supersedes")),
    *((name, _TIME, True) for name in ("created_at", "updated_at", "last_used_at", "verified_at", "decayed_at",
                                       "status_changed_at")),
)


def _checked(r: Reader, name: str, check: int, value: Any, times: dict[str, float]) -> Any:
    """`value`, the file's `name`, checked as `Reader` checks it. The common cases (text that is
    text, a time as ISO text already met in this memory) without the Reader's calls."""
    if check == _TEXT:
        return value if type(value) is str else r.text(name)
    if check == _TIME:
        if type(value) is str:
            if (seen := times.get(value)) is None:
                seen = times[value] = read_time(value, r.at(name))
            return seen
        return r.time(name)
    if check == _ID:
        return memory_id(r)
    if check == _NUMBER:
        return r.number(name, low=0.0, high=1.0)
    if check == _WORDS:
        return r.words(name)
    if check == _SOURCE:
        return r.choice(name, SOURCES)
    if check == _STATUS:
        return r.choice(name, STATUSES)
    if check == _FLAG:
        return r.flag(name)
    if check == _INTEGER:
        return r.integer(name)
    return r.mapping(name)


def read_memory(data: Any, where: str) -> IncomingMemory:
    """A memory in memdeck's own shape (JSON or YAML), or in seed 000's export shape."""
    r = Reader(data, where)
    fields: dict[str, Any] = {}
    content = r.text("content", required=True)
    if not content.strip():
        raise InvalidInput(f"{r.at('content')}: a memory needs some content")
    fields["content"] = content
    fields["type"] = r.text("type", required=True)
    if not fields["type"].strip():
        raise InvalidInput(f"{r.at('type')}: a memory needs a type")
    data = r.data
    times: dict[str, float] = {}  # a time written twice (created and updated) is read once
    for name, check, when_there in _MEMORY_FIELDS:
        value = data.get(name)
        if value is not None:
            fields[name] = _checked(r, name, check, value, times)
        elif when_there and name in data:
            fields[name] = None
    # Seed 000's names for the same fields.
    if "hat" not in fields and r.has("created_by_hat"):
        fields["hat"] = r.text("created_by_hat")
    if "session_id" not in fields and r.has("created_by_session_id"):
        fields["session_id"] = r.text("created_by_session_id")
    if "task" not in fields and r.data.get("created_by_task_id") is not None:
        task = r.data["created_by_task_id"]
        if isinstance(task, bool) or not isinstance(task, (int, str)):
            raise InvalidInput(f"{r.at('created_by_task_id')}: expected a task id, got {_kind(task)}")
        fields["task"] = str(task)
    events = None
    if r.has("events"):
        events = tuple(read_event(e, f"{r.at('events')}[{i}]") for i, e in enumerate(r.items("events")))
    anchors = None
    if r.has("anchors"):
        anchors = tuple(read_anchor(a, f"{r.at('anchors')}[{i}]") for i, a in enumerate(r.items("anchors")))
    return IncomingMemory(fields, where, events, anchors)


def read_anchor(data: Any, where: str) -> dict[str, Any]:
    """An anchor as memdeck's JSON export writes it: where it points, the lines it captured
    (their hash and snapshot, the commit and blob then) and its last check as exported."""
    from store.anchors.anchoring import STATUSES as ANCHOR_STATUSES, parse_spec, span

    r = Reader(data, where)
    path = r.text("path", required=True)
    start, end = r.integer("start"), r.integer("end")
    try:
        spec = parse_spec(span(path, start, end))  # the rules `--anchor` follows
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from None
    if (spec.path, spec.start, spec.end) != (path, start, end):
        raise InvalidInput(f"{where}: {span(path, start, end)!r} is not a usable anchor")
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if not parts or parts[0] == "/" or ".." in parts or ":" in parts[0]:
        # Anchors point inside the project: a file must not make memdeck read others.
        raise InvalidInput(f"{where}: {path!r} is not a path inside the project")
    return {
        "path": path, "start": start, "end": end,
        "line_hash": r.text("line_hash", required=True), "snapshot": r.text("snapshot") or "",
        "commit": r.text("commit"), "blob": r.text("blob"),
        "status": r.choice("status", ANCHOR_STATUSES) or "fresh", "checked_at": r.time("checked_at"),
        "anchored_at": r.time("anchored_at"),
    }


def read_event(data: Any, where: str) -> dict[str, Any]:
    r = Reader(data, where)
    at = r.time("at")
    if at is None:
        raise InvalidInput(f"{r.at('at')}: an event needs its time")
    return {
        "kind": r.choice("kind", EVENT_KINDS) or _missing(r, "kind"),
        "at": at,
        "actor": r.text("actor") or "import",
        "session_id": r.text("session_id"),
        "confidence_before": r.number("confidence_before"),
        "confidence_after": r.number("confidence_after"),
        "detail": r.mapping("detail") or {},
        # Who made the change (exports before event authors had none), made safe as a name is.
        "author": safe_project_name(r.text("author") or "", "") or None,
    }


def read_session(data: Any, where: str) -> dict[str, Any]:
    r = Reader(data, where)
    session_id = r.text("id", required=True)
    if not session_id.strip():
        raise InvalidInput(f"{r.at('id')}: a session needs an id")
    started_at = r.time("started_at")
    if started_at is None:
        raise InvalidInput(f"{r.at('started_at')}: a session needs its start time")
    activities = []
    for i, item in enumerate(r.items("activities")):
        a = Reader(item, f"{r.at('activities')}[{i}]")
        at = a.time("at")
        seq = a.integer("seq")
        if at is None or seq is None:
            raise InvalidInput(f"{a.where}: an activity needs its seq and time")
        activities.append({"seq": seq, "at": at, "kind": a.text("kind", required=True),
                           "summary": a.text("summary") or "", "memory_id": a.text("memory_id"),
                           "detail": a.mapping("detail") or {}})
    return {
        "id": session_id, "project": r.text("project"), "agent": r.text("agent"), "hat": r.text("hat"),
        "task": r.text("task"), "started_at": started_at, "ended_at": r.time("ended_at"),
        "source_path": r.text("source_path"), "files_touched": r.words("files_touched") or (),
        "meta": r.mapping("meta") or {}, "activities": activities,
    }


def read_project(data: Any, where: str) -> dict[str, Any]:
    r = Reader(data, where)
    return {"name": r.text("name", required=True), "root": r.text("root"), "created_at": r.time("created_at")}


def _missing(reader: Reader, key: str) -> str:
    raise InvalidInput(f"{reader.at(key)}: missing")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
