"""Concurrency: writers (adds, reinforcement, ingest, bulk edits, decay, the `memdeck` command)
and readers (search, prime, the workbench's paging queries) in separate processes on one store,
all at once. No "database is locked" (or any other error) reaches anyone, no write is lost, the
counts add up, and every memory's history still explains its confidence: each event starts from
the confidence the one before it left (a write computed from a stale read would break that)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from store import Config, Store
from store.engine.clock import DAY
from tests.cli_support import memdeck_command
from tests.history_support import assert_history_explains_confidence
from tests.process_support import CHILD_GATE, StartGate
from tests.data_support import worked_on

pytestmark = pytest.mark.slow  # many processes racing on one store

SEEDS = 300
ADD_WORKERS = 2
BULK_SIZE = 150
CLI_ADDS = 4
# How much each writer does at scale 1 (`benchmarks/soak.py` runs larger scales).
WORK = {"adds": 120, "reinforcements": 100, "markers": 120, "bulk_rounds": 8, "decay_runs": 12,
        "read_seconds": 6.0}  # readers read while writers write, at most this long

WORKER = CHILD_GATE + r"""
import json, os, random, sys, time
from store import Config, Store

role, path, ready, go, stop, plan = sys.argv[1:7]
WORDS = [a + b + c for a in ("ka", "lo", "mi", "ne", "su", "ta", "vo", "ri")
         for b in ("der", "mon", "sel", "tar", "quin", "bos") for c in ("", "a", "ex", "ium", "or", "ing")]
def text(rng, n):
    return f"note {n}: " + " ".join(rng.choice(WORDS) for _ in range(10))

store = Store.open(path, project="demo", config=Config.defaults())
plan = json.loads(open(plan).read())
at_the_gate(ready, go)
done = {"role": role, "ops": 0}
if role.startswith("add"):
    rng = random.Random(role)
    done["ids"] = []
    for i in range(plan["adds"]):
        done["ids"].append(store.add(text(rng, f"{role}-{i}"), type="fix", session_id=role).memory.id)
        done["ops"] += 1
elif role == "reinforce":
    rng = random.Random(5)
    for _ in range(plan["reinforcements"]):
        memory = store.get(rng.choice(plan["reinforced"]))
        assert not store.add(memory.content, type=memory.type, actor="reinforcer").created
        done["ops"] += 1
elif role == "ingest":
    from store.capture.ingest import IngestOptions, ingest_file
    report = ingest_file(store, plan["notes"], IngestOptions(format="text", session_id="notes", batch_lines=10))
    done["ops"], done["created"] = report.lines, len(report.created)
elif role == "bulk":
    from store.engine.curation import Curator
    curator = Curator(store)
    for i in range(plan["bulk_rounds"]):
        curator.add_tags(plan["bulk"], f"round-{i}")
        done["ops"] += 1
elif role == "decay":
    from store.engine.lifecycle import run_decay
    done["changes"] = 0
    for _ in range(plan["decay_runs"]):
        done["changes"] += len(run_decay(store))
        done["ops"] += 1
        time.sleep(0.05)
else:  # a reader, until the writers are done
    from store.retrieval.injection import InjectionContext, prime
    from store.browse.paging import ListQuery, counts, fetch, listing
    from store.browse.search import search
    rng = random.Random(role)
    deadline = time.monotonic() + plan["read_seconds"]
    while not os.path.exists(stop) and time.monotonic() < deadline:
        word = rng.choice(WORDS)
        search(store, word)
        assert prime(store, InjectionContext(task=f"{word} {rng.choice(WORDS)}")).tokens >= 0
        ids = listing(store, ListQuery(sort=rng.choice(["updated", "confidence", "created"]))).ids
        fetch(store, ids[:50])
        counts(store)
        done["ops"] += 4
store.close()
print(json.dumps(done))
"""

# The command line as a user (or a hook) runs it, in the middle of all that.
CLI_LOOP = CHILD_GATE + r"""
import subprocess, sys
command, ready, go = sys.argv[1:-2], sys.argv[-2], sys.argv[-1]
at_the_gate(ready, go)
texts = ["the deploy window opens at noon", "staging needs its own token file",
         "the cache warms up in ten minutes", "logs rotate every sunday night"]
for i in range(%(adds)d):
    for args in (["add", texts[i], "--type", "convention"],
                 ["search", "deploy"], ["prime", "--task", "deploy window"], ["stats"]):
        result = subprocess.run([*command, *args], capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"memdeck {args[0]} exited {result.returncode}: {result.stderr}")
        sys.stderr.write(result.stderr)
print('{"role": "cli", "ops": %(ops)d}')
""" % {"adds": CLI_ADDS, "ops": CLI_ADDS * 4}


def scalar(store: Store, sql: str, args: tuple = ()):
    return store.db.execute_sql(sql, args).fetchone()[0]


def run_stress(tmp_path: Path, db_path: Path, scale: int = 1) -> int:
    """Every writer and reader at once on a new store at `db_path`; checks what they left and
    returns how many operations they made."""
    work = {key: value * scale for key, value in WORK.items()}
    rng = random.Random(4)
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        old = store.now() - 45 * DAY  # past the 30-day grace: decay has work, none goes inactive
        seeds = [r.memory.id for r in store.add_many(
            {"content": f"seed {i}: " + " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "omega",
                                                              "sigma", "kappa", "theta"]) + str(rng.random())
                                                  for _ in range(6)),
             "type": "context", "created_at": old} for i in range(SEEDS))]
        worked_on(store, old, 45)  # decay counts the days the project was worked on
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"MEMORY:pitfall:ingested fact {i}: {rng.random()} {rng.random()}\n\n"
                             for i in range(work["markers"])))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({**work, "bulk": seeds[:BULK_SIZE], "reinforced": seeds[100:200], "notes": str(notes)}))
    gate, stop = StartGate(tmp_path), tmp_path / "stop"

    def worker(role: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", WORKER, role, str(db_path), str(gate.ready_file()),
                                 str(gate.go), str(stop), str(plan)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    writers = [worker(f"add-{n}") for n in range(ADD_WORKERS)]
    writers += [worker(role) for role in ("reinforce", "ingest", "bulk", "decay")]
    cli = subprocess.Popen([sys.executable, "-c", CLI_LOOP, *memdeck_command(), "--db", str(db_path),
                            str(gate.ready_file()), str(gate.go)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    readers = [worker(f"reader-{n}") for n in range(2)]
    gate.open([*writers, cli, *readers])  # every process has imported and opened the store: all start together
    results = {}
    for proc in [*writers, cli]:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0 and "locked" not in err and "Traceback" not in err, err
        done = json.loads(out)
        results[done["role"]] = done
    stop.touch()
    for proc in readers:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and err == "", err
        done = json.loads(out)
        results[done["role"]] = done
        assert done["ops"] > 0

    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        added = [i for n in range(ADD_WORKERS) for i in results[f"add-{n}"]["ids"]]
        assert len(set(added)) == ADD_WORKERS * work["adds"]
        assert len(store.get_many(added)) == len(added)  # every add is there
        assert results["ingest"]["created"] == work["markers"]
        assert scalar(store, "SELECT COUNT(*) FROM memory") == SEEDS + len(added) + work["markers"] + CLI_ADDS
        assert scalar(store, "SELECT COUNT(*) FROM memory WHERE session_id = 'notes'") == work["markers"]
        # every bulk round reached every memory it was given
        for memory in store.get_many(seeds[:BULK_SIZE]):
            assert {f"round-{i}" for i in range(work["bulk_rounds"])} <= set(memory.tags)
        assert scalar(store, "SELECT COUNT(*) FROM event WHERE kind = 'edited' AND actor = 'ui'") == \
            work["bulk_rounds"] * BULK_SIZE
        assert scalar(store, "SELECT COUNT(*) FROM event WHERE kind = 'reinforced' AND actor = 'reinforcer'") == \
            work["reinforcements"]
        assert scalar(store, "SELECT COUNT(*) FROM event WHERE kind = 'decayed'") == results["decay"]["changes"]
        assert results["decay"]["changes"] > 0
        assert scalar(store, "SELECT COUNT(*) FROM event WHERE kind = 'used'") == 0  # prime's dry runs write nothing
        assert_history_explains_confidence(store)
        assert scalar(store, "SELECT COUNT(*) FROM memory_fts_docsize") == scalar(store, "SELECT COUNT(*) FROM memory")
    return sum(r["ops"] for r in results.values())


@pytest.mark.slow
def test_writers_and_readers_in_many_processes_lose_nothing_and_never_see_a_lock(tmp_path, db_path):
    operations = run_stress(tmp_path, db_path)
    assert operations >= ADD_WORKERS * WORK["adds"] + WORK["reinforcements"] + WORK["bulk_rounds"] + \
        WORK["decay_runs"] + CLI_ADDS * 4
