"""Ralph files on the workbench: a `failure: cmd=…, error=…, next=…` record gets a title that says
what failed and what to do (not the same first characters on every row), and the main list gives
the width of columns no row fills (a Ralph import has no hat, scope, tags or uses) to the title."""

from __future__ import annotations


from ui_support import pilot_test

from store.engine.clock import FrozenClock
from store.engine.config import Config
from store.browse.search import MemoryFilter, list_memories
from store.engine.core import Store
from store.interop.transfer import import_file
from store.interop.ralph import failure_title
from tui.app import MemdeckApp
from tui.testing import DEMO_NOW, settle
from tui.widgets.memory_list import MemoryList
from tests.data_support import ROOT

EXAMPLE = ROOT / "examples" / "ralph-memories.md"


def test_a_failure_record_is_titled_by_its_error_and_its_lesson():
    content = ("failure: cmd=rg --line-number \"setSystemTime\\(|useFakeTimers\\(\" apps packages, exit=1, "
               "error=no matches found, next=do direct Bun API check + implement deterministic clock mock in spec")
    assert failure_title(content) == ("rg: no matches found → do direct Bun API check + implement "
                                      "deterministic clock mock in spec")
    assert failure_title("failure: cmd=git rev-parse a b, exit=128, error='fatal: Needed a single revision', "
                         "next=resolve each ref") == "git: fatal: Needed a single revision → resolve each ref"
    assert failure_title("expected RED: cmd=pnpm test, exit=1, error=missing owner, next=add it") == \
        "expected RED: pnpm: missing owner → add it"
    long = failure_title("failure: cmd=x, exit=1, error=" + "e" * 200 + ", next=n")
    assert len(long) == 100 and long.endswith("…")
    assert failure_title("Plate plugins: configure() stores overrides") is None


def test_importing_the_example_ralph_file_titles_its_failures(tmp_path):
    with Store.open(tmp_path / "s.db", project="plate", config=Config.defaults()) as store:
        import_file(store, str(EXAMPLE))
        everything = MemoryFilter(statuses=("pending", "active", "inactive"))
        titles = sorted(m.title for m in list_memories(store, everything, limit=None))
    assert titles == [
        "Plate plugins: configure() stores overrides in __configuration({}), not plugin.override directly",
        "SuggestionLeafDocx tests: needed React import for Bun JSX",
        "bun: ReferenceError React is not defined + strict rgb assertion mismatch → import React in spec and…",
        "rg: no matches found → do direct Bun API check + implement deterministic clock mock in spec",
        "yarn: www#build exited 129 during Next production build → retry focused build to classify infra-vs-…",
    ]


@pilot_test
async def test_columns_no_row_fills_give_their_width_to_the_title(tmp_path):
    path = tmp_path / "s.db"
    with Store.open(path, project="plate", config=Config.defaults()) as store:
        import_file(store, str(EXAMPLE))
    app = MemdeckApp(path, project="plate", clock=FrozenClock(DEMO_NOW), config=Config.defaults(),
                     live=False, still=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        layout = shown._layout(shown.scrollable_content_region.width)
        names = [name for name, _, _ in layout]
        assert "hat" not in names and "scope" not in names and "used" not in names
        # Before, at 100 columns the empty hat, scope and used columns pushed the tags out and
        # left the title 37 cells; their 23 cells now go to the title and the tags.
        assert "tags" in names  # Ralph memories have tags
        assert dict((n, w) for n, _, w in layout)["title"] >= 46
