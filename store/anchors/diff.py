"""What changed in an anchored region since the memory was anchored, for the workbench's diff view.

In a git repository whose anchoring commit holds the anchored lines where the anchor says, the
diff is `git diff COMMIT` of the file (following a rename), cut to the hunks that touch the
anchored lines, with the commits that changed the file since. Otherwise (outside git, or lines
anchored while uncommitted) the snapshot is compared with the region as it is now.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from store.anchors import git
from store.anchors.anchoring import inside, lines_hash, read_capped, region, split_lines
from store.engine.core import Store
from store.anchors.verify import AnchorCheck, MemoryCheck, current_span

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class AnchorDiff:
    check: AnchorCheck
    lines: tuple[str, ...]  # unified diff lines (`@@`, `-`, `+`, ` `); empty when nothing changed
    source: str  # "git" (git diff since the commit), "snapshot", or "" (nothing to compare)
    commits: tuple[str, ...] = ()  # `abc1234 subject` of commits that changed the file since


def diff_region(root: Path, check: AnchorCheck) -> AnchorDiff:
    anchor = check.anchor
    if check.status in ("fresh", "missing"):
        return AnchorDiff(check, (), "")
    if anchor.commit:
        at_commit = git.file_at(root, anchor.commit, anchor.path)
        if at_commit is not None and lines_hash(region(split_lines(at_commit), anchor.start, anchor.end)) == anchor.line_hash:
            diff = git.diff_since(root, anchor.commit, anchor.path, check.path) or ""
            commits = tuple(git.commits_touching(root, anchor.commit, check.path))
            hunks = _hunks_touching(diff, anchor.start or 1, anchor.end or len(diff))
            return AnchorDiff(check, tuple(hunks), "git", commits)
    if not inside(os.path.realpath(root), os.path.join(root, check.path)):
        return AnchorDiff(check, (), "")
    try:
        now = split_lines(read_capped(root / check.path))
    except OSError:
        return AnchorDiff(check, (), "")
    if anchor.start is None:
        start, end = 1, len(now)
    else:
        start, end = (check.start, check.end) if check.status == "moved" else current_span(anchor, now)
    old_start = anchor.start or 1
    lines = difflib.unified_diff(anchor.snapshot.split("\n"), now[start - 1:end], lineterm="", n=3)
    # difflib numbers the two sides from 1: put them where they are in the files.
    shifted = [_shift(line, old_start - 1, start - 1) for line in list(lines)[2:]]
    commits = tuple(git.commits_touching(root, anchor.commit, check.path)) if anchor.commit else ()
    return AnchorDiff(check, tuple(shifted), "snapshot", commits)


def _shift(line: str, old: int, new: int) -> str:
    match = _HUNK.match(line)
    if not match:
        return line
    a, b, c, d = match.groups()
    return (f"@@ -{int(a) + old}{',' + b if b is not None else ''} "
            f"+{int(c) + new}{',' + d if d is not None else ''} @@")


def _hunks_touching(diff: str, start: int, end: int) -> list[str]:
    """The hunks of a unified diff whose old side overlaps lines start..end."""
    kept: list[str] = []
    keep = False
    for line in diff.splitlines():
        match = _HUNK.match(line)
        if match:
            first = int(match.group(1))
            count = 1 if match.group(2) is None else int(match.group(2))
            last = first + max(count, 1) - 1
            keep = first <= end and last >= start
        elif line.startswith(("diff --git", "index ", "--- ", "+++ ", "similarity", "rename ")):
            keep = False
            continue
        if keep:
            kept.append(line)
    return kept


def memory_diffs(store: Store, result: MemoryCheck) -> list[AnchorDiff]:
    """The diff of each anchor of a checked memory."""
    from store.anchors.anchoring import project_root

    root = project_root(store, store.get(result.memory_id).project)
    return [diff_region(root, check) for check in result.anchors]
