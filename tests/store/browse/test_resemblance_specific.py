"""The inbox's "Resembles" compares what is specific to each memory: the wording machines put
around a failure (the heuristics' "X keeps failing", Ralph's `failure: cmd=…`) never makes two
different failures alike, so `m` never offers to merge them."""

from __future__ import annotations

from store.browse.look_alikes import resembling


def pitfall(store, tool: str, error: str, status: str = "active"):
    # As store/capture/heuristics.py words a repeated tool failure.
    return store.add(f"{tool} failed 3 times in one session with the same error: {error}",
                     title=f"{tool} keeps failing: {error[:80]}", type="pitfall", source="automatic",
                     status=status, reinforce=False).memory


def test_two_different_tool_failures_do_not_resemble(store):
    known = pitfall(store, "Bash", "[TypeError: Cannot read properties of undefined (reading 'map')]")
    candidate = pitfall(store, "Edit", "File has not been read yet. Read it first before writing to it.",
                        status="pending")
    assert resembling(store, candidate) == []
    assert resembling(store, known) == []


def test_two_different_failures_worded_with_what_they_taught_do_not_resemble(store):
    # As store/capture/failures.py words a repeated failure with its way out, or its cause.
    def taught(command: str, error: str, lesson: str, status: str):
        return store.add(f"Bash failed 3 times in one session with the same error: {error}\n{lesson}\n"
                         f"First seen running Bash: {command}.", title=f"`{command}` fails{lesson[lesson.index(':'):]}",
                         type="pitfall", source="automatic", status=status, reinforce=False).memory

    known = taught("make docs", "sphinx-build: error: theme 'furo' not available", "What worked: `make html`", "active")
    assert known.status == "active"
    way = taught("pip install hypothesis", "error: externally-managed-environment",
                 "What worked: `.venv/bin/pip install hypothesis`", "pending")
    cause = taught("yarn build", "Error: no config", "The agent found: the vite config was deleted", "pending")
    assert resembling(store, way) == [] and resembling(store, cause) == []


def test_the_same_failure_seen_again_still_resembles(store):
    known = pitfall(store, "Bash", "npm ERR! missing script: lint")
    candidate = pitfall(store, "Bash", "npm ERR! missing script: lint (in packages/web)", status="pending")
    assert candidate.id != known.id
    (found, score), = resembling(store, candidate)
    assert found.id == known.id and score >= 80


def test_ralph_failures_are_compared_by_their_command_error_and_lesson(store):
    store.add("failure: cmd=cargo fmt --check, exit=1, error=rustfmt diff in src/main.rs, "
              "next=run cargo fmt --all then re-run --check", type="fix", source="imported")
    other = store.add("failure: cmd=python3 -m pytest -q, exit=1, error=No module named pytest, "
                      "next=use uvx to run pytest", type="fix", source="imported", status="pending", reinforce=False).memory
    same = store.add("failure: cmd=cargo fmt --check, exit=1, error=rustfmt diff in src/parser.rs, "
                     "next=run cargo fmt --all then re-run --check", type="fix", source="imported",
                     status="pending", reinforce=False).memory
    assert resembling(store, other) == []
    assert [m.content[:30] for m, _ in resembling(store, same)] == ["failure: cmd=cargo fmt --check"]
