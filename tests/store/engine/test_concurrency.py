"""Several processes writing one store at the same time: nothing is lost, nothing is doubled, and
no process sees "database is locked"."""

from __future__ import annotations

import subprocess
import sys

import pytest

from store import Config, Store
from tests.process_support import CHILD_GATE, StartGate

pytestmark = pytest.mark.slow  # processes racing on one store

PROCESSES = 4
PER_PROCESS = 400  # each a transaction of its own: the four overlap for seconds either way

# One writer: opens the store, waits at the start gate so all start together, then adds its
# memories through the Store API one by one, each in its own transaction, as separate agent
# sessions would.
WRITER = CHILD_GATE + """
import random, sys
from store import Config, Store

path, ready, go, seed, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
# A few hundred made-up words, so texts share words the way real notes do, not all of them.
words = [a + b + c for a in ("ka", "lo", "mi", "ne", "su", "ta", "vo", "ri")
         for b in ("der", "mon", "sel", "tar", "quin", "bos") for c in ("", "a", "ex", "ium", "or", "ing")]
store = Store.open(path, project="demo", config=Config.defaults())
at_the_gate(ready, go)
for i in range(count):
    rng = random.Random(seed * 1_000_000 + i)
    text = f"note {seed}-{i}: " + " ".join(rng.choice(words) for _ in range(12))
    store.add(text, type="context", session_id=f"writer-{seed}")
store.close()
"""


def run_writers(tmp_path, seeds):
    path, gate = tmp_path / "shared.db", StartGate(tmp_path)
    Store.open(path, project="demo", config=Config.defaults()).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(gate.ready_file()), str(gate.go),
                               str(seed), str(PER_PROCESS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for seed in seeds]
    gate.open(procs)  # every writer has imported and opened the store
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * len(procs), errors
    assert errors == [""] * len(procs)
    return Store.open(path, project="demo", config=Config.defaults())


def scalar(store, sql):
    return store.db.execute_sql(sql).fetchone()[0]


@pytest.mark.slow
def test_four_processes_adding_distinct_memories_end_with_all_of_them(tmp_path):
    with run_writers(tmp_path, seeds=range(PROCESSES)) as store:
        assert scalar(store, "SELECT COUNT(*) FROM memory") == PROCESSES * PER_PROCESS
        assert scalar(store, "SELECT COUNT(DISTINCT session_id) FROM memory") == PROCESSES
        assert scalar(store, "SELECT COUNT(*) FROM event WHERE kind = 'created'") == PROCESSES * PER_PROCESS
        assert scalar(store, "SELECT COUNT(*) FROM event WHERE kind = 'reinforced'") == 0
        assert scalar(store, "SELECT COUNT(*) FROM memory_fts") == PROCESSES * PER_PROCESS


@pytest.mark.slow
def test_four_processes_adding_the_same_memories_reinforce_them(tmp_path):
    """Every text is added four times: stored once, then reinforced three times (0.6 + 3 x 0.1)."""
    with run_writers(tmp_path, seeds=[7] * PROCESSES) as store:
        assert scalar(store, "SELECT COUNT(*) FROM memory") == PER_PROCESS
        assert scalar(store, "SELECT COUNT(*) FROM event WHERE kind = 'created'") == PER_PROCESS
        assert scalar(store, "SELECT COUNT(*) FROM event WHERE kind = 'reinforced'") == (PROCESSES - 1) * PER_PROCESS
        confidences = {round(r[0], 6) for r in store.db.execute_sql("SELECT confidence FROM memory")}
        assert confidences == {0.9}
