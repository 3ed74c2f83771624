"""Every fenced shell example in docs/ runs on a fresh clone: each ```sh or ```bash block is run
with bash (`set -e`: any failing command fails it) in a scratch folder, with a scratch store and
a scratch home, `memdeck` on the PATH, and the clone's `examples/` at hand. The blocks of one page
run in order on one store, as a reader types them.

A block that cannot run here says so in the page, on the line before its fence:
`<!-- example not run: WHY -->` (it needs a PostgreSQL server, opens the workbench, runs for
minutes...). The test fails on a block that neither runs nor says why."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_BLOCK = re.compile(r"^```(sh|bash)\n(.*?)^```", re.S | re.M)
_NOT_RUN = re.compile(r"<!-- example not run: (\S.*?) -->\s*$")
# Blocks of pages this test's author may not edit, with why they are not run.
NOT_RUN_ELSEWHERE = {
    ("safety.md", ".venv/bin/python benchmarks/soak.py 2"): "a soak test: minutes of CPU, and it kills processes",
}


def blocks(page: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, why it is not run or None) for each shell block of `page`."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _BLOCK.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marked = _NOT_RUN.search(before)
        code = match.group(2)
        why = marked.group(1) if marked else NOT_RUN_ELSEWHERE.get((page.name, code.strip()))
        found.append((text[:match.start()].count("\n") + 1, code, why))
    return found


PAGES = sorted(p for p in DOCS.glob("*.md") if blocks(p))


def test_every_page_with_shell_examples_is_run():
    assert [p.name for p in PAGES] and all(p.parent == DOCS for p in PAGES)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_shell_examples_of_a_page_run(page, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for name in ("examples", "benchmarks", "screenshots"):
        (work / name).symlink_to(ROOT / name)
    # The docs say `.venv/bin/memdeck`: the environment running the tests is that `.venv`,
    # wherever it is (CI makes its own outside the clone).
    (work / ".venv").symlink_to(Path(sys.prefix))
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDECK_")}
    # MEMDECK_NO_SERVE: no hook starts a hook server, a process that would outlive the test.
    env |= {"HOME": str(home), "MEMDECK_DB": str(tmp_path / "store.db"), "XDG_DATA_HOME": str(home / ".local/share"),
            "MEMDECK_NO_SERVE": "1",
            "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "TERM": "dumb"}
    ran = 0
    for line, code, why in blocks(page):
        if why is not None:
            continue
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=work, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (f"{page.name}:{line} failed (exit {done.returncode}):\n{code}\n"
                                      f"stdout:\n{done.stdout[-2000:]}\nstderr:\n{done.stderr[-2000:]}")
        ran += 1
    if not ran:
        pytest.skip(f"every shell example of {page.name} says why it is not run")
