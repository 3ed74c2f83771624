"""Races on one memory, in real processes started together by the ready-file gate of
`tests/process_support.py` (each process opens the store, says it is ready, and waits for the go
file: no sleeps): nothing anyone wrote is lost.

- `memdeck edit --add-tags` (the real command) against a reinforcement loop that adds a tag of
  its own each time: every tag of both sides is there at the end.
- An editor that reads, then writes title and task from that read (as the edit form does),
  against a reinforcement loop: each stale write is a conflict, retried from a fresh read, and
  every reinforcement and every edit survives.
- A curator running bulk actions and undoing them against a reinforcement loop: undo reverts
  only what its action did and is still as it left it, so no reinforcement is undone.

`benchmarks/soak.py` runs `run_races` at a larger scale, for minutes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from store import Config, Store
from tests.cli_support import memdeck_command
from tests.history_support import assert_history_explains_confidence
from tests.process_support import CHILD_GATE, StartGate

pytestmark = pytest.mark.slow  # processes racing on one memory

# How much each side does at scale 1.
WORK = {"cli_tag_edits": 12, "edits": 40, "curator_rounds": 15}

WORKER = CHILD_GATE + r"""
import json, os, sys
from store import Config, Store
from store.engine.errors import Conflict

role, path, ready, go, stop, plan = sys.argv[1:7]
plan = json.loads(open(plan).read())
store = Store.open(path, project="demo", config=Config.defaults())
at_the_gate(ready, go)
done = {"role": role, "ops": 0, "conflicts": 0}
target = plan["memory"]
if role == "reinforce":
    # Until the other side is done: each reinforcement adds a tag of its own, from a set that
    # stays within a memory's 200 tags with the other side's (an edit over the limit is refused).
    content = store.get(target).content
    done["tags"] = []
    while not os.path.exists(stop):
        tag = f"r{done['ops'] % 150}"
        assert not store.add(content, type="fix", tags=tag, actor="reinforcer").created
        done["tags"].append(tag)
        done["ops"] += 1
elif role == "editor":
    # Read, then write from that read, as a person's form does; a conflict is read again.
    for i in range(plan["edits"]):
        while True:
            read = store.get(target)
            try:
                store.update(target, read, title=f"Edited {i}", task=f"task-{i}", actor="editor")
                break
            except Conflict:
                done["conflicts"] += 1
        done["ops"] += 1
elif role == "curator":
    from store.engine.curation import Curator
    curator = Curator(store, actor="curator")
    done["not_undone"] = 0
    for i in range(plan["curator_rounds"]):
        curator.add_tags(plan["bulk"], f"bulk-{i}")
        done["not_undone"] += len(curator.undo().not_undone)
        curator.adjust_confidence(plan["bulk"], -0.05)
        done["not_undone"] += len(curator.undo().not_undone)
        done["ops"] += 4
store.close()
print(json.dumps(done))
"""

CLI_TAGGER = CHILD_GATE + r"""
import json, subprocess, sys
command, ready, go, target, count = sys.argv[1:-4], *sys.argv[-4:]
at_the_gate(ready, go)
for i in range(int(count)):
    result = subprocess.run([*command, "edit", target, "--add-tags", f"cli-{i}"], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"edit exited {result.returncode}: {result.stderr}")
print(json.dumps({"role": "cli", "ops": int(count), "conflicts": 0}))
"""


def _seed(db_path: Path, extra: int = 0) -> tuple[str, list[str]]:
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        target = store.add("Retry backoff must cap at sixty seconds", type="fix", confidence=0.5).memory.id
        others = [store.add(f"Bulk memory {i} about the feed", type="pattern", scope=f"s{i}").memory.id
                  for i in range(extra)]
    return target, others


def _race(tmp_path: Path, db_path: Path, sides: list[list[str]], plan: dict) -> dict[str, dict]:
    """Start every side (an argv), wait until each says it is ready, start them together; the
    reinforcer (if any) stops when every other side is done."""
    plan_path, gate, stop = tmp_path / "plan.json", StartGate(tmp_path), tmp_path / "stop"
    stop.unlink(missing_ok=True)
    plan_path.write_text(json.dumps(plan))
    processes = []
    for argv in sides:
        places = {"{ready}": gate.ready_file(), "{go}": gate.go, "{stop}": stop, "{plan}": plan_path}
        argv = [str(places.get(a, a)) for a in argv]
        processes.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results: dict[str, dict] = {}
    reinforcer = processes[0]
    try:
        gate.open(processes)
        for proc in processes[1:]:
            out, err = proc.communicate(timeout=900)
            assert proc.returncode == 0 and "Traceback" not in err, err
            done = json.loads(out)
            results[done["role"]] = done
        stop.touch()
        out, err = reinforcer.communicate(timeout=120)
        assert reinforcer.returncode == 0, err
        results["reinforce"] = json.loads(out)
    finally:
        # A side that failed must not leave the reinforcer looping for the rest of the run.
        stop.touch()
        for proc in processes:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return results


def _worker(role: str, db_path: Path) -> list[str]:
    return [sys.executable, "-c", WORKER, role, str(db_path), "{ready}", "{go}", "{stop}", "{plan}"]


def race_cli_tags(tmp_path: Path, db_path: Path, scale: int = 1) -> dict:
    target, _ = _seed(db_path)
    count = WORK["cli_tag_edits"] * scale
    cli = [sys.executable, "-c", CLI_TAGGER, *memdeck_command(), "--db", str(db_path), "--project", "demo",
           "{ready}", "{go}", target, str(count)]
    results = _race(tmp_path, db_path, [_worker("reinforce", db_path), cli], {"memory": target})
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        tags = set(store.get(target).tags)
        assert_history_explains_confidence(store)
    wanted = {f"cli-{i}" for i in range(count)} | set(results["reinforce"]["tags"])
    return _figures(results, lost=len(wanted - tags))


def race_edit_form(tmp_path: Path, db_path: Path, scale: int = 1) -> dict:
    target, _ = _seed(db_path)
    edits = WORK["edits"] * scale
    results = _race(tmp_path, db_path, [_worker("reinforce", db_path), _worker("editor", db_path)],
                    {"memory": target, "edits": edits})
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        memory = store.get(target)
        events = store.events(target)
        assert_history_explains_confidence(store)
    reinforced = results["reinforce"]["tags"]
    lost = len(set(reinforced) - set(memory.tags))
    lost += (memory.title, memory.task) != (f"Edited {edits - 1}", f"task-{edits - 1}")
    lost += sum(e.kind == "reinforced" for e in events) != len(reinforced)
    lost += sum(e.kind == "edited" and e.actor == "editor" for e in events) != edits
    return _figures(results, lost=lost)


def race_undo(tmp_path: Path, db_path: Path, scale: int = 1) -> dict:
    target, others = _seed(db_path, extra=4)
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        before = store.get_many(others)
    rounds = WORK["curator_rounds"] * scale
    results = _race(tmp_path, db_path, [_worker("reinforce", db_path), _worker("curator", db_path)],
                    {"memory": target, "bulk": [target, *others], "curator_rounds": rounds})
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        memory = store.get(target)
        untouched = store.get_many(others)
        assert_history_explains_confidence(store)
    lost = len(set(results["reinforce"]["tags"]) - set(memory.tags))
    # Memories nobody else touched are back exactly as they were, every round.
    lost += sum((m.tags, m.confidence) != (b.tags, b.confidence) for m, b in zip(untouched, before))
    figures = _figures(results, lost=lost)
    figures["races"] += results["curator"]["not_undone"]  # changes undo kept because of a reinforcement
    return figures


def _figures(results: dict[str, dict], *, lost: int) -> dict:
    return {"operations": sum(r["ops"] for r in results.values()),
            "races": sum(r["conflicts"] for r in results.values()), "lost": lost}


RACES = {"cli add-tags vs reinforce": race_cli_tags, "edit form vs reinforce": race_edit_form,
         "undo vs reinforce": race_undo}


def test_edit_add_tags_against_a_reinforcement_loop_loses_no_tag(tmp_path, db_path):
    figures = race_cli_tags(tmp_path, db_path)
    assert figures["lost"] == 0 and figures["operations"] > WORK["cli_tag_edits"]


def test_edits_from_a_read_against_a_reinforcement_loop_lose_nothing(tmp_path, db_path):
    figures = race_edit_form(tmp_path, db_path)
    assert figures["lost"] == 0 and figures["operations"] > WORK["edits"]


def test_undo_against_a_reinforcement_loop_never_reverts_a_reinforcement(tmp_path, db_path):
    figures = race_undo(tmp_path, db_path)
    assert figures["lost"] == 0 and figures["operations"] > WORK["curator_rounds"] * 4
