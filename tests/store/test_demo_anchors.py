"""The demo's main project has code beside the store, and two memories anchored to it: one whose
lines hold, one whose lines changed after it was anchored (the anchors view's story). The demo
never writes into a folder it did not make."""

from __future__ import annotations

import pytest

from store.anchors.anchoring import anchors_of
from store.engine.config import Config
from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.demo import ANCHORED, MAIN_PROJECT, build_demo, code_folder
from tui.testing import DEMO_NOW


def test_the_demo_anchors_two_memories_one_of_them_stale(tmp_path):
    path = build_demo(tmp_path / "demo.db", now=DEMO_NOW)
    code = code_folder(path)
    assert (code / "src/esi/client.ts").is_file() and (code / "src/enrich/cache.ts").is_file()
    with Store.open(path, project=MAIN_PROJECT, config=Config.defaults()) as store:
        ids = dict(store.db.execute_sql("SELECT title, id FROM memory").fetchall())
        statuses = {title: [a.status for a in anchors_of(store, ids[title])] for title, _ in ANCHORED}
        assert statuses == {"ESI rate limit returns 420, not 429": ["changed"],
                            "Cache ESI names by id forever, prices for an hour": ["fresh"]}
        assert store.get(ids["ESI rate limit returns 420, not 429"]).stale
        kinds = [e.kind for e in store.events(ids["ESI rate limit returns 420, not 429"])]
        assert "anchored" in kinds
        assert max(e.at for e in store.events(ids["ESI rate limit returns 420, not 429"])) <= DEMO_NOW


def test_a_rebuild_writes_its_own_code_folder_again(tmp_path):
    path = build_demo(tmp_path / "demo.db", now=DEMO_NOW)
    path.unlink()
    build_demo(path, now=DEMO_NOW)  # as `memdeck demo --rebuild` does
    assert (code_folder(path) / "src/esi/client.ts").read_text().count("429") == 1


def test_a_folder_the_demo_did_not_make_is_never_written(tmp_path):
    mine = tmp_path / "demo-code"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(InvalidInput, match="not a demo's code folder"):
        build_demo(tmp_path / "demo.db", now=DEMO_NOW)
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    assert not (tmp_path / "demo.db").exists()
