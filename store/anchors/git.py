"""The few questions anchors ask git, by running `git` as a subprocess (no dependency).

Every function answers None (or nothing) when the folder is not in a git repository, git is not
installed, or git fails: anchors then work with what the files alone tell. Blob ids are computed
here without git, the way `git hash-object` does, so capturing an anchor costs one git call.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

TIMEOUT = 10.0


def _git(root: Path, *args: str) -> bytes | None:
    """git's output as bytes, or None if git is missing, fails or takes too long."""
    # Imported here: `prime` imports this module on every run and calls git only when a file
    # anchored to went missing.
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def run(root: Path, *args: str) -> str | None:
    """git's output as text, or None if git is missing, fails or takes too long."""
    out = _git(root, *args)
    return None if out is None else out.decode("utf-8", "replace")


def blob_id(data: bytes) -> str:
    """The id git gives a file with these bytes (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def head_commit(root: Path) -> str | None:
    """HEAD's commit id, or None outside git (or in a repository with no commit yet)."""
    out = run(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() or None if out else None


def renames_since(root: Path, commit: str) -> dict[str, str]:
    """Old path -> new path for the files renamed between `commit` and the working tree
    (committed renames and `git mv` alike), as git's rename detection sees them."""
    out = run(root, "diff", "--name-status", "-M", "-z", commit, "--")
    if not out:
        return {}
    fields = out.split("\0")
    found: dict[str, str] = {}
    index = 0
    while index < len(fields) and fields[index]:
        status = fields[index]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                found[fields[index + 1]] = fields[index + 2]
            index += 3
        else:
            index += 2
    return found


def file_at(root: Path, commit: str, path: str) -> bytes | None:
    """The file's bytes at `commit`, or None if it was not there."""
    return _git(root, "show", f"{commit}:{path}")


def commits_touching(root: Path, commit: str, path: str, limit: int = 20) -> list[str]:
    """`abc1234 subject` of each commit after `commit` that changed `path`, newest first."""
    out = run(root, "log", f"--max-count={limit}", "--format=%h %s", "--follow", f"{commit}..HEAD", "--", path)
    return [line for line in (out or "").splitlines() if line.strip()]


def diff_since(root: Path, commit: str, old_path: str, new_path: str) -> str | None:
    """`git diff` of the file from `commit` to the working tree, following a rename."""
    paths = [old_path] if old_path == new_path else [old_path, new_path]
    return run(root, "diff", "--no-color", "--no-ext-diff", "-M", "-U3", commit, "--", *paths)
