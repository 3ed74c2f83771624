"""`run_cli` runs the command line in the test's process (`tests/cli_support.py`): it answers as
the real process does, and leaves the test's process as it found it."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from tests.cli_support import run_in_process

DOCUMENT = ('{"format": "memdeck", "version": 1, "memories": [{"id": "mem-retry", "type": "fix", '
            '"title": "Retry backoff must cap at 60 s", "content": "Retry backoff must cap at 60 s"}]}')

# Each answered once by a real process and once in the process: stdout, stderr and exit code.
SAME_ANSWER = [
    ("import", "-", "--format", "json"),
    ("list",),
    ("search", "backoff"),
    ("show", "mem-nothere"),
    ("list", "--no-such-option"),
    ("--project", "a\tb", "list"),
]


def test_a_command_answers_in_the_process_as_the_real_process_does(run_cli, run_cli_process, tmp_path):
    other = tmp_path / "other.db"
    for args in SAME_ANSWER:
        real = run_cli_process(*args, input=DOCUMENT, env={"MEMDECK_DB": str(other)})
        here = run_cli(*args, input=DOCUMENT)
        assert (here.returncode, here.stdout, here.stderr) == (real.returncode, real.stdout, real.stderr), args


def test_bytes_in_give_bytes_out_and_help_is_exit_0(run_cli):
    assert run_cli("--help").returncode == 0 and "usage: memdeck" in run_cli("--help").stdout
    result = run_cli("list", "--json", input=b"")
    assert result.returncode == 0 and result.stdout == b"[]\n"


def test_the_call_leaves_the_environment_cwd_streams_and_signals_as_they_were(run_cli, tmp_path):
    before = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr,
              signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_cli("ingest", "-", "--format", "markers", input="LEARNING: retry backoff caps at 60 s\n",
            env={"MEMDECK_PROJECT": "other"}, cwd=elsewhere)  # ingest sets SIGINT and SIGTERM
    after = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr,
             signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    assert after == before


def test_a_variable_python_reads_as_it_starts_is_refused(tmp_path):
    with pytest.raises(ValueError, match="PYTHONPATH"):
        run_in_process(["list"], env={**os.environ, "PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
