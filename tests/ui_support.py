"""Fixtures shared by the workbench's tests: the demo store, built once per test session and
copied for each test (apps write to it)."""

from __future__ import annotations

import asyncio
import functools
import shutil
from pathlib import Path

import pytest

from store.demo import build_demo
from store.browse.search import MemoryFilter, list_memories
from tui.testing import DEMO_NOW


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    build_demo(path, now=DEMO_NOW)
    return path


@pytest.fixture
def demo_db(demo_template, tmp_path) -> Path:
    target = tmp_path / "demo.db"
    shutil.copy(demo_template, target)
    return target


def memory_titled(app, start: str):
    """The memory of the app's project whose title starts with `start`."""
    everything = MemoryFilter(statuses=("pending", "active", "inactive", "deleted"))
    return next(m for m in list_memories(app.store, everything, limit=None) if m.title.startswith(start))


def pilot_test(flow):
    """Run an async Pilot flow as a plain test (no async plugin needed)."""

    @functools.wraps(flow)
    def run(*args, **kwargs):
        asyncio.run(flow(*args, **kwargs))

    return run
