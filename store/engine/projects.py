"""Which project the current directory belongs to: `MEMDECK_PROJECT`, else the name of the git
root above the current directory, else the current directory's own name.

A name someone typed (`MEMDECK_PROJECT`) must be a valid project name or is refused. A folder's
name is whatever bytes the file system holds: a name derived from it is made valid instead
(escape sequences removed, then `limits.safe_project_name`), so a hook run in a directory named
with tabs or bytes that are not UTF-8 still works, and no terminal obeys the name."""

from __future__ import annotations

import os
from pathlib import Path

from store.engine.limits import check_project_name, safe_project_name
from store.engine.redaction import clean_field
from store.engine import environment


def find_git_root(start: Path) -> Path | None:
    # Walk up for a `.git` entry instead of running git: `prime` runs at every session start.
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def detect_project(cwd: Path | None = None) -> tuple[str, Path | None]:
    """(project name, project root). The root is where a `.memdeck.yml` is looked for."""
    cwd = (cwd or Path.cwd()).resolve()
    root = find_git_root(cwd)
    if env := environment.project_name():
        return check_project_name(env, "MEMDECK_PROJECT"), root
    return folder_project(cwd, root)


def folder_project(folder: Path, root: Path | None = None) -> tuple[str, Path | None]:
    """The project of `folder` by where it is, whatever `MEMDECK_PROJECT` says: its git root's
    name, else its own, made a valid project name. `root`: the git root, when the caller has
    looked it up already."""
    root = root or find_git_root(folder)
    if root is not None:
        return _folder_name(root), root
    return _folder_name(folder), None


def _folder_name(folder: Path) -> str:
    # Escape sequences go whole, then control and invisible characters (made `_` one at a time,
    # an escape would leave its printable tail in the name); a byte that is not UTF-8 becomes
    # U+FFFD, as in the project's root.
    return safe_project_name(clean_field(path_text(Path(folder.name))) or "")


def path_text(path: Path) -> str:
    """A path as text the store can keep: bytes that are not UTF-8 become U+FFFD."""
    return os.fsencode(path).decode("utf-8", "replace")
