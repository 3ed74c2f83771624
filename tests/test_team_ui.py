"""The workbench's share key (`S`): the cursor's memory copied to a real PostgreSQL team store;
a role that may not add shows the team store's one-line refusal and nothing changes."""

from __future__ import annotations

import pytest
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from postgres_server import dump
from store.backends import postgres_roles
from store.engine.config import Config
from store.engine.core import Store
from store.engine.database import connect
from tui.app import MemdeckApp
from tui.testing import DEMO_NOW, MAIN_PROJECT, SIZE, settle
from tui.widgets.memory_list import MemoryList
from store.engine.clock import FrozenClock


@pytest.fixture
def team(postgres_server):
    owner = postgres_server.fresh_database()
    db, _ = connect(owner)
    try:
        postgres_roles.install(db)
        postgres_roles.grant(db, "ana", "reader")
        postgres_roles.grant(db, "bo", "writer")
    finally:
        db.close()
    return owner


def _app(demo_db, url: str) -> MemdeckApp:
    config = Config.defaults().with_overrides({"team.db": url})
    return MemdeckApp(demo_db, project=MAIN_PROJECT, clock=FrozenClock(DEMO_NOW), config=config,
                      live=False, still=True)


@pilot_test
async def test_s_shares_the_cursors_memory_with_the_team(demo_db, team):
    app = _app(demo_db, team.replace("postgres@", "bo@", 1))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memory = app.screen.query_one(MemoryList).cursor_memory
        await pilot.press("S")
        await app.workers.wait_for_complete()
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert "Shared 1 with the team" in messages, messages
    with Store.open(team, project=MAIN_PROJECT, config=Config.defaults()) as shared:
        copy = shared.get(memory.id)
        assert copy.title == memory.title and copy.meta["shared"]["by"] == "bo"
        assert [e.kind for e in shared.events(memory.id)][-1] == "shared"


@pilot_test
async def test_a_reader_pressing_s_sees_the_one_line_refusal_and_nothing_changes(demo_db, team):
    before = dump(team)
    app = _app(demo_db, team.replace("postgres@", "ana@", 1))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        memory = app.screen.query_one(MemoryList).cursor_memory
        events_before = app.store.events(memory.id)
        await pilot.press("S")
        await app.workers.wait_for_complete()
        await settle(pilot)
        refused = [n for n in app._notifications if n.message.startswith("refused:")]
        assert len(refused) == 1 and refused[0].severity == "error"
        assert "ana is a reader" in refused[0].message and "nothing was changed" in refused[0].message
        assert "\n" not in refused[0].message
        assert app.store.events(memory.id) == events_before
    assert dump(team) == before


TEAM_YAML = """\
format: memdeck
version: 1
memories:
- id: team-deploys
  type: convention
  title: Deploy window
  content: Deploys happen on Tuesday mornings only.
- id: team-staging
  type: pitfall
  content: The staging database resets every night.
"""


@pilot_test
async def test_l_steps_the_list_through_the_layers_and_other_layers_are_read_only(demo_db, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    (root / ".memdeck").mkdir(parents=True)
    (root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    store = Store.open(demo_db, project=MAIN_PROJECT, clock=FrozenClock(DEMO_NOW), project_root=root,
                       config=Config.load(root))
    app = MemdeckApp(store=store, live=False, still=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        own_ids = set(shown.listing.ids)
        assert len(own_ids) == 32
        await pilot.press("L")
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        assert set(shown.listing.ids) == {"team-deploys", "team-staging"}
        assert "file layer, read-only" in str(shown.border_title)
        assert shown.cursor_memory.layer == "file"
        from tui.widgets.detail import DetailPane

        assert app.screen.query_one(DetailPane).detail.memory.layer == "file"
        await pilot.press("d")  # read-only: nothing moves to the trash
        await settle(pilot)
        assert any("read-only" in n.message for n in app._notifications)
        assert "team-deploys" in {m.id for m in app.layer.store.found(["team-deploys"]).values()}
        await pilot.press("L")  # back to the own store
        await settle(pilot)
        assert set(app.screen.query_one(MemoryList).listing.ids) == own_ids
        assert "read-only" not in str(app.screen.query_one(MemoryList).border_title)


@pilot_test
async def test_the_inject_preview_ranks_every_layer(demo_db, tmp_path, monkeypatch):
    from textual.widgets import Input

    from tui.screens.preview import DEBOUNCE_SECONDS, PreviewScreen

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    (root / ".memdeck").mkdir(parents=True)
    (root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    store = Store.open(demo_db, project=MAIN_PROJECT, clock=FrozenClock(DEMO_NOW), project_root=root,
                       config=Config.load(root))
    app = MemdeckApp(store=store, live=False, still=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, PreviewScreen)
        app.screen.query_one("#task", Input).value = "when do deploys happen, tuesday mornings"
        await pilot.pause(DEBOUNCE_SECONDS + 0.1)
        await settle(pilot)
        included = {r.memory.id: r.memory.layer for r in app.screen.result.included}
        assert included.get("team-deploys") == "file", included
