"""Shared fixtures: a real SQLite store in a temp dir with a frozen clock, and runners for the
`memdeck` command (in this process, or as a real process), isolated from the user's own store
and config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from store import Config, FrozenClock, Store
from tests.cli_support import run_in_process, run_process
from tests.data_support import SHARED, T0

# Helpers that test modules share live in `tests/*_support.py`; this file holds the fixtures
# every module gets. Tests on the real sample data (`needs_shared` in `tests/data_support.py`)
# skip without ../shared; CI has it, and there it is never skipped (see pytest_configure).


def pytest_configure(config):
    """In CI a missing ../shared is a broken checkout, not a reason to skip: fail loudly."""
    if os.environ.get("CI") and not SHARED.is_dir():
        raise pytest.UsageError(f"CI is set but {SHARED} is missing: the tests on the real sample data "
                                "would be skipped. Check out the shared data beside the repository.")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """A marker set (`-m slow`, `-m "not slow"`) with no test in it passes, saying so: the
    README's test command runs both sets, and an empty one is not a failure. Without `-m`, no
    tests is still pytest's exit 5."""
    markexpr = session.config.option.markexpr
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and markexpr:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"no test is in the set -m {markexpr!r}: nothing to run")
        session.exitstatus = pytest.ExitCode.OK


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path, monkeypatch):
    """No test reads the developer's config or store, or depends on the cwd's git root."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    monkeypatch.delenv("MEMDECK_CONFIG", raising=False)
    monkeypatch.delenv("MEMDECK_DB", raising=False)
    monkeypatch.setenv("MEMDECK_PROJECT", "demo")
    # The width of the terminal the tests run in is not the program's: pytest-xdist's workers
    # set COLUMNS=80, which `prime --explain` would lay its rows out by. A test that wants a
    # width says so.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    # No hook starts a hook server (a process that outlives the test) or asks one; the tests of
    # the hook server (tests/tui/cli/test_hook_server.py) say where theirs runs.
    monkeypatch.setenv("MEMDECK_NO_SERVE", "1")
    monkeypatch.delenv("MEMDECK_SERVE_VERBOSE", raising=False)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(T0)


def pytest_generate_tests(metafunc):
    """A module marked `both_backends` runs each of its store tests twice: on SQLite and on a
    real PostgreSQL server (tests/postgres_server.py)."""
    definition = metafunc.definition
    if (definition.get_closest_marker("both_backends") and not definition.get_closest_marker("sqlite_only")
            and "backend" in metafunc.fixturenames):
        metafunc.parametrize("backend", ["sqlite", "postgres"], indirect=True)


@pytest.fixture
def backend(request) -> str:
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def postgres_server():
    """One PostgreSQL server for the test session (per xdist worker). Without one here the
    PostgreSQL half skips, saying why; in CI it must run."""
    yield from _started_server(tcp=False)


@pytest.fixture(scope="module")
def postgres_tcp_server():
    """A PostgreSQL server that also listens on 127.0.0.1 on a free port (`tcp_url`), for the
    module that tests the TCP URL form; skips or fails as `postgres_server` does."""
    yield from _started_server(tcp=True)


def _started_server(*, tcp: bool):
    from postgres_server import Server, unavailable

    if why := unavailable():
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but the PostgreSQL tests cannot run: {why}")
        pytest.skip(f"no PostgreSQL here: {why}")
    server = Server(tcp=tcp).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def db_path(tmp_path, backend, request) -> Path | str:
    """The test's store: a file on SQLite, a fresh database's URL on PostgreSQL."""
    if backend == "postgres":
        return request.getfixturevalue("postgres_server").fresh_database()
    return tmp_path / "memdeck.db"


@pytest.fixture
def store(db_path, clock):
    with Store.open(db_path, project="demo", clock=clock, config=Config.defaults()) as opened:
        yield opened


@pytest.fixture
def run_cli(db_path, tmp_path):
    """`memdeck` on the test's store, through `main(argv)` in this process
    (`tests/cli_support.py`): `run_cli("list", "--json")`."""
    return _runner(db_path, tmp_path, in_process=True)


@pytest.fixture
def run_cli_process(db_path, tmp_path):
    """`memdeck` on the test's store as a real process, for the tests where the process is the
    point (hooks as Claude Code runs them, the MCP server, signals, imports, pipes)."""
    return _runner(db_path, tmp_path, in_process=False)


def _runner(db_path, tmp_path, *, in_process: bool):
    def run(*args: str, input: str | bytes | None = None, env: dict | None = None,
            check: bool = False, cwd: Path | None = None, timeout: float = 120):
        full_env = {**os.environ, "MEMDECK_DB": str(db_path), **(env or {})}
        if in_process:  # no timeout: a call that hangs hangs the test, where a traceback shows why
            result = run_in_process(args, input=input, env=full_env, cwd=cwd or tmp_path)
        else:
            result = run_process(args, input=input, env=full_env, cwd=cwd or tmp_path, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"memdeck {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
        return result

    return run
