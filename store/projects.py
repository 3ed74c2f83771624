"""Which project the current directory belongs to: `MEMDECK_PROJECT`, else the name of the git
root above the current directory, else the current directory's own name."""

from __future__ import annotations

import os
from pathlib import Path


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
        return root.name, root
    return folder.name or "default", None
