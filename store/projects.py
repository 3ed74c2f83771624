"""Which project the current directory belongs to: `MEMDECK_PROJECT`, else the name of the git
root above the current directory, else the current directory's own name.

A folder's name is whatever bytes the file system holds: one that is not UTF-8, or holds escape
sequences or invisible characters, gives a project name with those cleaned away (undecodable
bytes become U+FFFD), never a name the store cannot keep or a terminal would obey."""

from __future__ import annotations

import os
from pathlib import Path

from store.redaction import clean_field


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
    if env := os.environ.get("MEMDECK_PROJECT"):
        return env, root
    return folder_project(cwd, root)


def folder_project(folder: Path, root: Path | None = None) -> tuple[str, Path | None]:
    """The project of `folder` by where it is, whatever `MEMDECK_PROJECT` says: its git root's
    name, else its own. `root`: the git root, when the caller has looked it up already."""
    root = root or find_git_root(folder)
    if root is not None:
        return clean_field(root.name) or "default", root
    return clean_field(folder.name) or "default", None


def path_text(path: Path) -> str:
    """A path as text the store can keep: bytes that are not UTF-8 become U+FFFD."""
    return os.fsencode(path).decode("utf-8", "replace")
