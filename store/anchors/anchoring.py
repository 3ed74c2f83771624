"""Anchors: a memory pointing at lines of code, captured so the code can be checked later.

An anchor is a path relative to the project root, an optional line range (1-based, inclusive;
none: the whole file), a hash and a snapshot of those lines, and, in a git repository, HEAD's
commit and the file's blob id when it was anchored. Lines are compared without their trailing
whitespace, so re-indenting a line end or CRLF does not count as a change.

This module owns capturing anchors and storing them (the statements are
`store/backends/anchor_rows.py`'s); `store/anchors/verify.py` checks them. Outside a
git repository anchors work the same except that a renamed file is not followed and the diff
view compares with the snapshot instead of the commit.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat as statmod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from store.anchors import git
from store.backends import anchor_rows
from store.engine.redaction import redact
from store.engine.clock import iso
from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.engine.records import AddResult, Memory

STATUSES = ("fresh", "moved", "changed", "missing")  # from best to worst
STALE = ("changed", "missing")
# A whole-file anchor keeps at most this much of the file as its snapshot (its hash covers all).
SNAPSHOT_LIMIT = 64 * 1024
# The largest file an anchor reads, at capture and at every check: an anchor is to code a person
# reads, and a 20 MB file read at every session start costs hundreds of MB for nothing.
MAX_FILE_BYTES = 1024 * 1024
_SPEC = re.compile(r"(.+?):(\d+)(?:-(\d+))?")


@dataclass(frozen=True)
class AnchorSpec:
    """What a user or an agent names: `PATH`, `PATH:LINE` or `PATH:START-END`."""

    path: str
    start: int | None = None
    end: int | None = None

    def __str__(self) -> str:
        return span(self.path, self.start, self.end)


def span(path: str, start: int | None, end: int | None) -> str:
    if start is None:
        return path
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


def parse_spec(text: str) -> AnchorSpec:
    """`src/refund.py:40-52` -> AnchorSpec('src/refund.py', 40, 52). A bad range is refused."""
    text = text.strip()
    if not text:
        raise InvalidInput("an anchor needs a path: PATH or PATH:START-END")
    match = _SPEC.fullmatch(text)
    if match is None:
        return AnchorSpec(text)
    start = int(match.group(2))
    end = int(match.group(3) or start)
    if start < 1 or end < start:
        raise InvalidInput(f"anchor {text!r}: lines run from 1, and the range's end is not before its start")
    return AnchorSpec(match.group(1), start, end)


def path_part(text: str) -> str:
    """`src/a.py:10-20` -> `src/a.py`: what a spec names as a file (for file refs)."""
    match = _SPEC.fullmatch(text.strip())
    return match.group(1) if match else text.strip()


def as_spec(value: AnchorSpec | str) -> AnchorSpec:
    return value if isinstance(value, AnchorSpec) else parse_spec(value)


@dataclass(frozen=True)
class Anchor:
    """One stored anchor, with its last check's status. Its fields are in the order
    `anchor_rows.ANCHOR_COLUMNS` reads them."""

    id: int
    memory_id: str
    path: str
    start: int | None
    end: int | None
    line_hash: str
    snapshot: str
    commit: str | None
    blob: str | None
    status: str
    checked_at: float | None
    created_at: float
    file_size: int | None = field(default=None, compare=False)
    file_mtime_ns: int | None = field(default=None, compare=False)

    @property
    def spec(self) -> str:
        return span(self.path, self.start, self.end)

    def since(self) -> str:
        """What the code is compared with: the commit, or the day it was anchored."""
        return self.commit[:7] if self.commit else (iso(self.created_at) or "")[:10]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "start": self.start, "end": self.end, "status": self.status,
                "commit": self.commit, "blob": self.blob, "checked_at": iso(self.checked_at),
                "anchored_at": iso(self.created_at)}


def anchor_from_row(row: Sequence[Any]) -> Anchor:
    return Anchor(*row)


def worst(statuses: Iterable[str]) -> str | None:
    found = [STATUSES.index(s) for s in statuses]
    return STATUSES[max(found)] if found else None


# -- reading files ------------------------------------------------------------------------------

def project_root(store: Store, project: str | None = None) -> Path:
    """Where a project's anchors are relative to: its git root, else the folder it was used in
    (the project's recorded root, else the current folder)."""
    name = project or store.project
    if name == store.project and store.project_root is not None:
        return Path(store.project_root)
    root = anchor_rows.project_root(store.backend, name)
    return Path(root) if root else Path.cwd()


def relative_path(root: Path, path: str) -> str:
    """`path` (relative to the root or absolute) as a clean path relative to `root`. A path
    that leaves the root, by `..` or through a symbolic link (to a file or any folder on the
    way), is refused: an anchor reads the file and keeps its lines."""
    given = Path(path.strip()).expanduser()
    full = given if given.is_absolute() else root / given
    try:
        rel = Path(os.path.normpath(full)).relative_to(os.path.normpath(root))
    except ValueError:
        raise InvalidInput(f"{path}: outside the project root {root}") from None
    if str(rel) in ("", "."):
        raise InvalidInput(f"{path}: an anchor names a file, not the project root")
    if not inside(os.path.realpath(root), os.path.join(root, rel)):
        raise InvalidInput(f"{path}: a link that leads outside the project root {root}")
    return rel.as_posix()


def inside(real_root: str, full: str) -> bool:
    """Whether `full`, every link on its way followed, is within `real_root` (a resolved path)."""
    real = os.path.realpath(full)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def read_capped(full: str | Path) -> bytes:
    """A file's bytes, refused (`OSError` EFBIG) past `MAX_FILE_BYTES`: never more is read."""
    with open(full, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, f"larger than the {MAX_FILE_BYTES // 1024} KB an anchor reads")
    return data


def stat_is_file(stat: os.stat_result) -> bool:
    # A FIFO or a device would block or never end: only a regular file is read.
    return statmod.S_ISREG(stat.st_mode)


def split_lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


def lines_hash(lines: Sequence[str]) -> str:
    return hashlib.sha1("\n".join(line.rstrip() for line in lines).encode("utf-8")).hexdigest()


def region(lines: Sequence[str], start: int | None, end: int | None) -> list[str]:
    return list(lines) if start is None else list(lines[start - 1:end])


def locate(lines: Sequence[str], wanted: Sequence[str], near: int) -> int | None:
    """The 1-based line where `wanted` appears whole in `lines`, the nearest to `near`."""
    if not wanted:
        return None
    target = [w.rstrip() for w in wanted]
    first = target[0]
    found = [i + 1 for i in range(len(lines) - len(target) + 1)
             if lines[i].rstrip() == first and [x.rstrip() for x in lines[i:i + len(target)]] == target]
    return min(found, key=lambda at: (abs(at - near), at)) if found else None


@dataclass(frozen=True)
class Captured:
    """An anchor read from the file, ready to be stored."""

    path: str
    start: int | None
    end: int | None
    line_hash: str
    snapshot: str
    blob: str | None
    file_size: int
    file_mtime_ns: int


def capture(root: Path, spec: AnchorSpec | str, *, in_git: bool) -> Captured:
    """Read the anchored lines now; a missing file or a range past its end is refused."""
    spec = as_spec(spec)
    path = relative_path(root, spec.path)
    full = root / path
    try:
        stat = full.stat()
        data = read_capped(full) if stat_is_file(stat) else None
    except OSError as exc:
        raise InvalidInput(f"anchor {spec}: cannot read {path}: {exc.strerror}") from None
    if data is None:
        raise InvalidInput(f"anchor {spec}: {path} is not a file")
    lines = split_lines(data)
    if spec.start is not None and spec.end > len(lines):
        raise InvalidInput(f"anchor {spec}: {path} has {len(lines)} lines")
    anchored = region(lines, spec.start, spec.end)
    snapshot = "\n".join(anchored)
    if spec.start is None:
        snapshot = snapshot[:SNAPSHOT_LIMIT]
    # The snapshot is kept, exported and copied: a key in the anchored lines is not. The hash is
    # of the lines as they are, so a check still finds them fresh.
    snapshot, _ = redact(snapshot)
    return Captured(path, spec.start, spec.end, lines_hash(anchored), snapshot,
                    git.blob_id(data) if in_git else None, stat.st_size, stat.st_mtime_ns)


# -- storing -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class AnchorResult:
    """What `anchor_memory` stored, and the specs it skipped (with `strict=False`) and why."""

    anchors: tuple[Anchor, ...]
    skipped: tuple[tuple[str, str], ...] = ()


def anchors_of(store: Store, memory_id: str) -> list[Anchor]:
    return anchors_for(store, [memory_id]).get(memory_id, [])


def anchors_for(store: Store, memory_ids: Sequence[str]) -> dict[str, list[Anchor]]:
    """The anchors of these memories, by memory id, each memory's in the order they were made."""
    found: dict[str, list[Anchor]] = {}
    for row in anchor_rows.for_memories(store.backend, list(dict.fromkeys(memory_ids))):
        found.setdefault(row[1], []).append(anchor_from_row(row))
    return found


def anchor_memory(store: Store, memory_id: str, specs: Iterable[AnchorSpec | str], *,
                  actor: str = "cli", replace: bool = False, strict: bool = True,
                  recapture: bool = False, session_id: str | None = None,
                  expected: int | Memory | None = None) -> AnchorResult:
    """Anchor a memory to files or lines of them, as they are now.

    The entry point for every source of anchors (`add --anchor`, the edit form, markers, ingest,
    the MCP `remember(paths=...)`). With `strict` (the default) a file that cannot be read or a
    range past its end is an `InvalidInput` and nothing is stored; without it such specs are
    skipped and reported in `AnchorResult.skipped`. An anchor the memory already has (same path
    and lines) is not stored twice, unless `recapture` (re-anchoring: the lines as they are now
    replace the snapshot). `replace` drops the memory's other anchors. Records an
    `anchored` event naming the anchors added and removed, and raises the memory's version.

    `expected`: the memory (or its version) as the caller read it: a compare-and-set, raising
    `Conflict` and storing nothing if it changed since (`Store.update`).
    """
    memory = store.get(memory_id)
    root = project_root(store, memory.project)
    wanted: list[AnchorSpec] = []
    skipped: list[tuple[str, str]] = []
    for value in specs:
        try:
            spec = as_spec(value)
            spec = AnchorSpec(relative_path(root, spec.path), spec.start, spec.end)
        except InvalidInput as exc:
            if strict:
                raise
            skipped.append((str(value), str(exc)))
            continue
        if spec not in wanted:
            wanted.append(spec)
    existing = anchors_of(store, memory_id)
    have = set() if recapture else {AnchorSpec(a.path, a.start, a.end) for a in existing}
    new = [s for s in wanted if s not in have]
    commit = git.head_commit(root) if new else None
    captured: list[Captured] = []
    for spec in new:
        try:
            captured.append(capture(root, spec, in_git=commit is not None))
        except InvalidInput as exc:
            if strict:
                raise
            skipped.append((str(spec), str(exc)))
    now = store.now()
    with store.transaction():
        if expected is not None:
            store.update(memory_id, expected)  # no change: only the comparison
        retaken = {AnchorSpec(c.path, c.start, c.end) for c in captured} if recapture else set()
        removed = [a for a in anchors_of(store, memory_id)
                   if (spec := AnchorSpec(a.path, a.start, a.end)) in retaken or (replace and spec not in wanted)]
        if removed:
            anchor_rows.delete(store.backend, [a.id for a in removed])
        for c in captured:
            anchor_rows.add(store.backend, memory_id, c.path, c.start, c.end, c.line_hash, c.snapshot, commit, c.blob,
                            c.file_size, c.file_mtime_ns, now)
        if captured or removed:
            detail: dict[str, Any] = {"added": [span(c.path, c.start, c.end) for c in captured]}
            if removed:
                detail["removed"] = [a.spec for a in removed]
            if commit:
                detail["commit"] = commit
            store.record_event(memory_id, "anchored", before=memory.confidence, after=memory.confidence,
                               actor=actor, session_id=session_id, at=now, detail=detail)
            anchor_rows.memory_anchored(store.backend, memory_id, now)
        stored = anchors_of(store, memory_id)
    return AnchorResult(tuple(stored), tuple(skipped))


def set_anchors(store: Store, memory_id: str, specs: Iterable[AnchorSpec | str], *,
                actor: str = "cli") -> AnchorResult:
    """Make these the memory's anchors: the ones it keeps are left as they are (with their
    commit and snapshot), new ones are captured now, the others dropped."""
    return anchor_memory(store, memory_id, specs, actor=actor, replace=True)


def add_anchored(store: Store, content: str, anchors: Iterable[AnchorSpec | str], *, strict: bool = True,
                 **fields: Any):
    """`Store.add` and `anchor_memory` in one transaction: with `strict`, a bad anchor stores
    nothing at all. Returns (the `AddResult`, the `AnchorResult`). For `memdeck add --anchor`
    and the MCP `remember(paths=...)`; an added memory that reinforces an existing one anchors
    that one."""
    anchors = list(anchors)
    with store.transaction():
        added = store.add(content, **fields)
        if not anchors:
            return added, AnchorResult(())
        anchored = anchor_memory(store, added.memory.id, anchors, actor=fields.get("actor", "cli"),
                                 strict=strict, session_id=fields.get("session_id"))
        # As it is after anchoring: its version raised, its anchors' status.
        return AddResult(store.get(added.memory.id), added.created), anchored


def event_note(kind: str, detail: dict[str, Any]) -> str:
    """An `anchored` or `checked` event in a few words, for a history line."""
    if kind == "checked":
        return "; ".join([f"{detail.get('was')} → {detail.get('status')}", *detail.get("anchors", [])])
    parts = [f"+{spec}" for spec in detail.get("added", [])] + [f"-{spec}" for spec in detail.get("removed", [])]
    return " ".join(parts)
