"""memdeck reads environment variables in one place, `store/engine/environment.py`: a variable
read anywhere else is a setting the docs cannot find."""

from __future__ import annotations

import os
import re

from store.engine import environment
from tests.data_support import ROOT

READS = re.compile(r"os\.environ\.get\(|os\.environ\[|os\.getenv\(|environ\.get\(\"[A-Z]")
# Not reads of a setting: the child processes' environment passed on (git), a default set for a
# library before it loads (numpy's threads), and the MCP session's look-up of the agent's
# session id in a mapping its tests hand in. And the hook's warm path, which runs before
# anything of the store may be imported: it reads its own switches (MEMDECK_NO_SERVE,
# MEMDECK_SERVE_VERBOSE), where the sockets are (XDG_RUNTIME_DIR, TMPDIR), and where the store
# is, which the test below checks against this module's answer.
ELSEWHERE = {"store/anchors/git.py", "store/engine/numpy_import.py", "tui/mcp_server/agent_session.py",
             "tui/cli/hook_wire.py"}


def test_no_module_but_environment_reads_the_environment():
    readers = sorted(str(p.relative_to(ROOT)) for package in ("store", "tui") for p in (ROOT / package).rglob("*.py")
                     if READS.search(p.read_text(encoding="utf-8")))
    assert set(readers) - ELSEWHERE == {"store/engine/environment.py"}, readers


def test_each_variable_falls_back_when_unset_or_empty(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("MEMDECK_DB", "MEMDECK_CONFIG", "MEMDECK_PROJECT", "CLAUDE_CONFIG_DIR"):
        monkeypatch.setenv(name, "")
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert environment.store_location() is None and environment.user_config() is None
    assert environment.project_name() is None and environment.claude_config_dir() is None
    assert environment.data_home() == tmp_path / ".local" / "share"
    assert environment.config_home() == tmp_path / ".config"
    assert environment.cache_home() == tmp_path / ".cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    monkeypatch.setenv("MEMDECK_PROJECT", "shop")
    assert environment.cache_home() == tmp_path / "c" and environment.project_name() == "shop"


def test_the_hooks_warm_path_finds_the_store_where_the_store_is(monkeypatch, tmp_path):
    """`tui.cli.hook_wire.store_location` reads MEMDECK_DB, XDG_DATA_HOME and HOME itself: it
    names the file `default_db_path` names, or none (a store it does not serve)."""
    from store.engine.database import default_db_path
    from tui.cli import hook_wire

    monkeypatch.setenv("HOME", str(tmp_path))
    for db, data in ((None, None), ("", ""), (None, str(tmp_path / "data")), (str(tmp_path / "a/../s.db"), None),
                     ("relative.db", None), ("postgresql://team@db.example/memdeck", None)):
        for name, value in (("MEMDECK_DB", db), ("XDG_DATA_HOME", data)):
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        expected = str(default_db_path())
        found = hook_wire.store_location(None)
        assert found == (os.path.normpath(expected) if os.path.isabs(expected) else None), (db, data)
