"""Every environment variable memdeck reads, in one place: a variable's name is written here and
nowhere else, so what the environment can change is this page (docs/settings.md lists them)."""

from __future__ import annotations

import os
from pathlib import Path


def _folder(variable: str, *default: str) -> Path:
    return Path(os.environ.get(variable) or Path.home().joinpath(*default))


def store_location() -> str | None:
    """MEMDECK_DB: the store to open without --db (a path, or a PostgreSQL URL)."""
    return os.environ.get("MEMDECK_DB") or None


def user_config() -> str | None:
    """MEMDECK_CONFIG: the user's config file, instead of `config_home()/memdeck/config.yml`."""
    return os.environ.get("MEMDECK_CONFIG") or None


def project_name() -> str | None:
    """MEMDECK_PROJECT: the project, instead of the folder's (or its git root's) name."""
    return os.environ.get("MEMDECK_PROJECT") or None


def data_home() -> Path:
    """XDG_DATA_HOME, else ~/.local/share: where the default store lives."""
    return _folder("XDG_DATA_HOME", ".local", "share")


def config_home() -> Path:
    """XDG_CONFIG_HOME, else ~/.config."""
    return _folder("XDG_CONFIG_HOME", ".config")


def cache_home() -> Path:
    """XDG_CACHE_HOME, else ~/.cache: the team file's and the embedding model's caches."""
    return _folder("XDG_CACHE_HOME", ".cache")


def columns() -> int | None:
    """COLUMNS: the width a command lays its tables out in, when it is a number."""
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() else None


def claude_config_dir() -> Path | None:
    """CLAUDE_CONFIG_DIR: where Claude Code keeps its user settings, when it is set."""
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value) if value else None


def codex_home() -> Path:
    """CODEX_HOME, else ~/.codex: where Codex CLI keeps its user config.toml and hooks.json."""
    return _folder("CODEX_HOME", ".codex")
