"""Checking anchors against the code: `memdeck verify`, the check `prime` runs on its
candidates, and re-anchoring a memory that still holds.

Each anchor comes out `fresh` (its lines hash the same), `moved` (the snapshot is found
elsewhere in the file, or the file was renamed: the anchor is updated to point there), `changed`
(the lines differ) or `missing` (the file is gone and no rename of it is known to git). A
memory's status is its worst anchor's.

The check is cheap when nothing changed: each anchor keeps the size and mtime its file had at
the last check, and a file that still has them is not read. git is asked only about a file
that went missing (was it renamed?). Saving a check records the anchors' new status, size and
mtime (and new place when moved), a `checked` event when a memory's status changes, and, for a
memory found fresh or moved, `verified_at`: a verification restarts the decay clock.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from store.anchors import git
from store.anchors.anchoring import (
    MAX_FILE_BYTES, STALE, Anchor, AnchorResult, AnchorSpec, anchor_from_row, anchor_memory, anchors_for, inside,
    lines_hash, locate, project_root, read_capped, region, span, split_lines, stat_is_file, worst,
)
from store.backends import anchor_rows
from store.engine.core import Store
from store.engine.errors import InvalidInput


@dataclass(frozen=True)
class AnchorCheck:
    """One anchor's check: its status and where its lines are now."""

    anchor: Anchor
    status: str
    path: str
    start: int | None
    end: int | None
    file_size: int | None = None
    file_mtime_ns: int | None = None
    read: bool = False  # the file was read (its size or mtime changed since the last check)

    @property
    def spec_now(self) -> str:
        """Where the anchor points after this check: `path:start-end`."""
        return span(self.path, self.start, self.end)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "start": self.start, "end": self.end,
                                "status": self.status, "commit": self.anchor.commit}
        if (self.path, self.start, self.end) != (self.anchor.path, self.anchor.start, self.anchor.end):
            data["was"] = {"path": self.anchor.path, "start": self.anchor.start, "end": self.anchor.end}
        return data

    def describe(self) -> str:
        """`src/a.py:3-7 moved to 10-14`, `src/a.py:3-7 changed since abc1234`."""
        where = self.anchor.spec
        # A whole file renamed is `fresh` (its text is the same) but lives elsewhere now.
        if self.status == "moved" or (self.status == "fresh" and self.spec_now != where):
            return f"{where} moved to {self.spec_now}"
        if self.status in STALE:
            return f"{where} {self.status} since {self.anchor.since()}"
        return f"{where} {self.status}"


@dataclass(frozen=True)
class MemoryCheck:
    memory_id: str
    anchors: tuple[AnchorCheck, ...]

    @property
    def status(self) -> str:
        return worst(a.status for a in self.anchors) or "fresh"

    @property
    def stale(self) -> bool:
        return self.status in STALE

    def first_stale(self) -> AnchorCheck | None:
        return next((a for a in self.anchors if a.status == self.status and a.status in STALE), None)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.memory_id, "status": self.status, "anchors": [a.to_json() for a in self.anchors]}


# -- checking one anchor -------------------------------------------------------------------------

def check_content(anchor: Anchor, data: bytes, path: str) -> tuple[str, int | None, int | None]:
    """(status, start, end) of the anchor in a file with these bytes."""
    lines = split_lines(data)
    if anchor.start is None:
        return ("fresh" if lines_hash(lines) == anchor.line_hash else "changed"), None, None
    if anchor.end <= len(lines) and lines_hash(region(lines, anchor.start, anchor.end)) == anchor.line_hash:
        return ("fresh" if path == anchor.path else "moved"), anchor.start, anchor.end
    at = locate(lines, anchor.snapshot.split("\n"), anchor.start)
    if at is not None:
        return "moved", at, at + anchor.end - anchor.start
    return "changed", anchor.start, anchor.end


def check_anchor(anchor: Anchor, root: Path | str, *, use_cache: bool = True, path: str | None = None,
                 real_root: str | None = None) -> AnchorCheck:
    """Check one anchor against the file at `path` (default: its own). Without `use_cache` the
    file is read even when its size and mtime are those of the last check.

    A file that is now a link out of the project root, or not a regular file (a FIFO would
    block), counts as missing: it is not read. A file grown past `MAX_FILE_BYTES` counts as
    changed, unread. `real_root`: the root with its links resolved, when the caller has it."""
    path = path or anchor.path
    full = os.path.join(root, path)  # not pathlib: this runs for every candidate of every prime
    if not inside(real_root or os.path.realpath(root), full):
        return AnchorCheck(anchor, "missing", path, anchor.start, anchor.end)
    try:
        stat = os.stat(full)
    except OSError:
        return AnchorCheck(anchor, "missing", path, anchor.start, anchor.end)
    if not stat_is_file(stat):
        return AnchorCheck(anchor, "missing", path, anchor.start, anchor.end)
    if (use_cache and path == anchor.path and anchor.checked_at is not None
            and (stat.st_size, stat.st_mtime_ns) == (anchor.file_size, anchor.file_mtime_ns)):
        return AnchorCheck(anchor, anchor.status, path, anchor.start, anchor.end, stat.st_size, stat.st_mtime_ns)
    if stat.st_size > MAX_FILE_BYTES:
        return AnchorCheck(anchor, "changed", path, anchor.start, anchor.end, stat.st_size, stat.st_mtime_ns)
    try:
        data = read_capped(full)
    except OSError as exc:
        if exc.errno == errno.EFBIG:  # grew between the stat and the read
            return AnchorCheck(anchor, "changed", path, anchor.start, anchor.end, stat.st_size, stat.st_mtime_ns)
        return AnchorCheck(anchor, "missing", path, anchor.start, anchor.end)
    status, start, end = check_content(anchor, data, path)
    return AnchorCheck(anchor, status, path, start, end, stat.st_size, stat.st_mtime_ns, read=True)


def check_anchors(anchors: Sequence[Anchor], root: Path | str, *, use_cache: bool = True) -> list[AnchorCheck]:
    """Check anchors of one project; a missing file is looked for under the name git says it
    was renamed to (one git call per commit among the missing)."""
    real_root = os.path.realpath(root)
    checks = [check_anchor(a, root, use_cache=use_cache, real_root=real_root) for a in anchors]
    renames: dict[str, dict[str, str]] = {}
    for index, check in enumerate(checks):
        commit = check.anchor.commit
        if check.status != "missing" or not commit or (use_cache and check.anchor.status == "missing"):
            continue  # known to be missing at the last check: nothing changed, no git call
        if commit not in renames:
            renames[commit] = git.renames_since(Path(root), commit)
        new_path = renames[commit].get(check.anchor.path)
        if new_path:
            moved = check_anchor(check.anchor, root, use_cache=False, path=new_path, real_root=real_root)
            if moved.status != "missing":
                checks[index] = moved
    return checks


# -- reading anchors by memory, and saving checks -------------------------------------------------

def anchored_memories(store: Store, memory_ids: Sequence[str] | None = None, *,
                      project: str | None = None) -> dict[str, list[Anchor]]:
    """The anchors of these memories (default: every anchored memory of the project that is not
    in the trash), by memory id. Unknown ids raise `NotFound`; ids without anchors are left out."""
    if memory_ids is not None:
        store.get_many(memory_ids)
        return anchors_for(store, memory_ids)
    found: dict[str, list[Anchor]] = {}
    for row in anchor_rows.in_project(store.backend, store.project_id(project)):
        found.setdefault(row[1], []).append(anchor_from_row(row))
    return found


def check_memories(store: Store, anchored: dict[str, list[Anchor]], *, use_cache: bool = True) -> list[MemoryCheck]:
    """Check each memory's anchors against the files of its project's root."""
    projects = anchor_rows.project_names(store.backend, list(anchored)) if anchored else {}
    by_project: dict[str, list[Anchor]] = {}
    for memory_id, anchors in anchored.items():
        by_project.setdefault(projects[memory_id], []).extend(anchors)
    checks: dict[int, AnchorCheck] = {}
    for name, anchors in by_project.items():
        for check in check_anchors(anchors, str(project_root(store, name)), use_cache=use_cache):
            checks[check.anchor.id] = check
    return [MemoryCheck(memory_id, tuple(checks[a.id] for a in anchors)) for memory_id, anchors in anchored.items()]


def save_checks(store: Store, results: Sequence[MemoryCheck], *, actor: str) -> None:
    """Record checks: anchors' status, place and file stamp; `checked` events where a memory's
    status changed; `verified_at` now for memories found fresh or moved.

    A memory whose anchors were replaced since they were read (re-anchored, edited) is left
    alone: its check is of anchors it no longer has."""
    now = store.now()
    with store.transaction():
        for result in results:
            ids = [c.anchor.id for c in result.anchors]
            if anchor_rows.still_held(store.backend, result.memory_id, ids) != len(ids):
                continue
            before = worst(a.anchor.status for a in result.anchors)
            for check in result.anchors:
                anchor_rows.save_check(store.backend, check.anchor.id, check.status, check.path, check.start,
                                       check.end, now, check.file_size, check.file_mtime_ns)
            moved = any(c.status == "moved" and c.anchor.status != "moved" for c in result.anchors)
            if not result.stale:
                # A rule's write (as a use is): its own field and the version, no `edited` event.
                anchor_rows.memory_verified(store.backend, result.memory_id, now)
            # fresh and moved are the same news (the memory holds); a move is news of its own.
            if _sound(result.status) != _sound(before) or moved:
                confidence = anchor_rows.confidence(store.backend, result.memory_id)
                store.record_event(result.memory_id, "checked", before=confidence, after=confidence,
                                   actor=actor, at=now, detail={
                                       "status": result.status, "was": before,
                                       "anchors": [c.describe() for c in result.anchors if c.status != "fresh"]})


def _sound(status: str | None) -> str | None:
    return "fresh" if status == "moved" else status


def verify(store: Store, memory_ids: Sequence[str] | None = None, *, project: str | None = None,
           actor: str = "verify", save: bool = True) -> list[MemoryCheck]:
    """`memdeck verify`: read every anchored file (no cache), follow renames, save the results."""
    results = check_memories(store, anchored_memories(store, memory_ids, project=project), use_cache=False)
    if save and results:
        save_checks(store, results, actor=actor)
    return results


# -- the check at injection ---------------------------------------------------------------------

STALE_POLICIES = ("leave-out", "flag")


@dataclass(frozen=True)
class Trust:
    """What the anchor check says about injection candidates: the memories left out (id ->
    reason) and those injected with a warning (id -> the note shown in the prompt)."""

    left_out: dict[str, str]
    flagged: dict[str, str]
    checks: tuple[MemoryCheck, ...] = ()


def trust(store: Store, memories: Sequence[Any], *, save: bool = False) -> Trust:
    """Check the anchors of injection candidates, cheaply (the cache: no file read, no git call
    for a file unchanged since the last check). Stale memories are left out with
    `stale: PATH changed since COMMIT`, or under `anchors.stale: flag` those at or above
    `anchors.flag_min_confidence` are kept with "(verify: PATH changed)". With `save` (a
    recorded prime) the checks are saved, which restarts the decay clock of the fresh ones."""
    anchored = anchors_for(store, [m.id for m in memories])
    if not anchored:
        return Trust({}, {})
    policy = store.config.anchors.stale
    if policy not in STALE_POLICIES:
        from store.engine.errors import ConfigError

        raise ConfigError(f"anchors.stale must be one of {', '.join(STALE_POLICIES)}, not {policy!r}")
    floor = float(store.config.anchors.flag_min_confidence)
    confidence = {m.id: m.confidence for m in memories}
    results = check_memories(store, anchored)
    left_out: dict[str, str] = {}
    flagged: dict[str, str] = {}
    for result in results:
        stale = result.first_stale()
        if stale is None:
            continue
        if policy == "flag" and confidence[result.memory_id] >= floor:
            flagged[result.memory_id] = f"(verify: {stale.anchor.path} {stale.status})"
        else:
            left_out[result.memory_id] = f"stale: {stale.anchor.path} {stale.status} since {stale.anchor.since()}"
    if save:
        save_checks(store, [r for r in results if _worth_saving(r)], actor="prime")
    return Trust(left_out, flagged, tuple(results))


def _worth_saving(result: MemoryCheck) -> bool:
    return any(c.read or c.status != c.anchor.status for c in result.anchors) or not result.stale


def current_span(anchor: Anchor, lines: Sequence[str]) -> tuple[int, int]:
    """Where the anchored lines are now, as best the file tells: the stretch of the file that
    matches the snapshot, widened by the snapshot lines it lost; else the anchored numbers."""
    import difflib  # only re-anchoring and the diff view need it, never `prime`

    old = anchor.snapshot.split("\n")
    matcher = difflib.SequenceMatcher(None, [x.rstrip() for x in old], [x.rstrip() for x in lines], autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    if not blocks or not lines:
        end = min(anchor.end or len(lines), len(lines))
        return max(1, min(anchor.start or 1, end)), max(end, 1)
    first, last = blocks[0], blocks[-1]
    start = max(0, first.b - first.a)
    end = min(len(lines), last.b + last.size + (len(old) - last.a - last.size))
    return start + 1, max(end, start + 1)


# -- re-anchoring ---------------------------------------------------------------------------------

def reanchor(store: Store, memory_id: str, *, actor: str = "ui", expected: int | Any = None) -> AnchorResult:
    """The memory still holds: anchor it again to its lines as they are now (where a check
    finds them), with today's commit and snapshot. A missing file cannot be re-anchored.
    `expected`: the memory (or version) the person saw; a memory changed since is a `Conflict`."""
    anchored = anchored_memories(store, [memory_id])
    if memory_id not in anchored:
        raise InvalidInput(f"{memory_id} has no anchors")
    (result,) = check_memories(store, anchored, use_cache=False)
    gone = [c.anchor.path for c in result.anchors if c.status == "missing"]
    if gone:
        raise InvalidInput(f"{', '.join(gone)}: no longer there; edit the memory's anchors instead")
    root = project_root(store, store.get(memory_id).project)
    specs = []
    for check in result.anchors:
        if check.status == "changed" and check.start is not None:
            try:
                lines = split_lines(read_capped(root / check.path))
            except OSError as exc:
                raise InvalidInput(f"{check.path}: cannot read: {exc.strerror}") from None
            specs.append(AnchorSpec(check.path, *current_span(check.anchor, lines)) if lines else AnchorSpec(check.path))
        else:
            specs.append(AnchorSpec(check.path, check.start, check.end))
    return anchor_memory(store, memory_id, specs, actor=actor, replace=True, recapture=True, expected=expected)
