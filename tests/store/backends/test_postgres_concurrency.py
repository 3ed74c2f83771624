"""A team writing one PostgreSQL store at once: eight processes adding, searching, listing and
editing one shared memory, with nothing lost, nothing doubled and no error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from store import Config, Store
from store.engine.errors import Conflict
from tests.process_support import CHILD_GATE, StartGate

pytestmark = pytest.mark.slow  # processes racing on one PostgreSQL store

PROCESSES = 8
ADDS = 25
EDITS = 10

WORKER = CHILD_GATE + """
import random, sys
from store import Config, Store
from store.engine.errors import Conflict
from store.browse.search import list_memories, search

url, ready, go, shared = sys.argv[1:5]
seed, adds, edits = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
store = Store.open(url, project="demo", config=Config.defaults())
at_the_gate(ready, go)
# Made-up words, so no two notes are similar enough to reinforce each other.
words = [a + b + c for a in ("ka", "lo", "mi", "ne", "su", "ta", "vo", "ri")
         for b in ("der", "mon", "sel", "tar", "quin", "bos") for c in ("", "a", "ex", "ium", "or", "ing")]
for i in range(adds):
    rng = random.Random(seed * 1_000_000 + i)
    text = f"note {seed}-{i}: " + " ".join(rng.choice(words) for _ in range(12))
    store.add(text, type="context", session_id=f"worker-{seed}")
    assert search(store, text.split(": ")[1])
    assert list_memories(store, limit=20)
    if i < edits:
        while True:  # a compare-and-set edit of what was read, again after a conflict
            read = store.get(shared)
            try:
                store.update(shared, read, tags=[*read.tags, f"w{seed}-{i}"], actor=f"worker-{seed}")
                break
            except Conflict:
                continue
store.close()
"""


@pytest.mark.slow
def test_eight_processes_write_and_read_one_postgres_store(postgres_server, tmp_path):
    url, gate = postgres_server.fresh_database(), StartGate(tmp_path)
    with Store.open(url, project="demo", config=Config.defaults()) as store:
        shared = store.add("The shared deploy checklist", type="convention").memory.id
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, url, str(gate.ready_file()), str(gate.go), shared,
                               str(seed), str(ADDS), str(EDITS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for seed in range(PROCESSES)]
    gate.open(procs)
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * PROCESSES, errors
    assert errors == [""] * PROCESSES
    with Store.open(url, project="demo", config=Config.defaults()) as store:
        count = store.db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0]
        assert count == 1 + PROCESSES * ADDS
        created = store.db.execute_sql("SELECT COUNT(*) FROM event WHERE kind = 'created'").fetchone()[0]
        assert created == 1 + PROCESSES * ADDS
        memory = store.get(shared)
        assert sorted(memory.tags) == sorted(f"w{s}-{i}" for s in range(PROCESSES) for i in range(EDITS))
        assert memory.version == 1 + PROCESSES * EDITS
        edited = [e for e in store.events(shared) if e.kind == "edited"]
        assert len(edited) == PROCESSES * EDITS


def test_a_stale_compare_and_set_is_refused_on_postgres(postgres_server):
    url = postgres_server.fresh_database()
    with Store.open(url, project="demo", config=Config.defaults()) as store:
        read = store.add("One memory", type="context").memory
        store.update(read.id, read, title="Changed once")
        with pytest.raises(Conflict):
            store.update(read.id, read, title="Changed from a stale read")
        assert store.get(read.id).title == "Changed once"
