"""The workbench and the layers (docs/team.md): the share key (`S`) copies the cursor's memory to a
real PostgreSQL team store, and a role that may not add shows the team store's one-line refusal
and nothing changes; the main list shows every layer merged, each row marked, `L` filters by
layer, and a team or file memory refuses every write with one line."""

from __future__ import annotations

from team_support import as_member, team  # noqa: F401 (fixtures)
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from postgres_server import dump
from store.engine.config import Config
from store.engine.core import Store
from tui.app import MemdeckApp
from tui.testing import DEMO_NOW, MAIN_PROJECT, SIZE, settle
from tui.widgets.memory_list import MemoryList
from store.engine.clock import FrozenClock


def _app(demo_db, url: str) -> MemdeckApp:
    config = Config.defaults().with_overrides({"team.db": url})
    return MemdeckApp(demo_db, project=MAIN_PROJECT, clock=FrozenClock(DEMO_NOW), config=config,
                      live=False, still=True)


@pilot_test
async def test_s_shares_the_cursors_memory_with_the_team(demo_db, team):
    app = _app(demo_db, as_member(team, "bo"))
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
    app = _app(demo_db, as_member(team, "ana"))
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


def _file_layer_app(demo_db, tmp_path, monkeypatch, *, live: bool = False) -> MemdeckApp:
    """The demo store with a real team file (`.memdeck/team.yaml`) in the project's root."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    (root / ".memdeck").mkdir(parents=True)
    (root / ".memdeck" / "team.yaml").write_text(TEAM_YAML, encoding="utf-8")
    store = Store.open(demo_db, project=MAIN_PROJECT, clock=FrozenClock(DEMO_NOW), project_root=root,
                       config=Config.load(root))
    return MemdeckApp(store=store, live=live, still=True)


def _notices(app) -> list[str]:
    return [n.message for n in app._notifications]


@pilot_test
async def test_the_list_shows_every_layer_merged_in_its_sort_each_row_marked(demo_db, tmp_path, monkeypatch):
    from store.browse.search import MemoryFilter
    from store.layers.layers import Layers
    from tui.widgets.detail import DetailPane
    from tui.widgets.filter_bar import FilterChips

    app = _file_layer_app(demo_db, tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        with Layers.open(app.store) as layers:
            expected = [m.id for m in layers.list(MemoryFilter(), sort="updated")]
        assert list(shown.listing.ids) == expected and len(expected) == 34
        assert {"team-deploys", "team-staging"} <= set(expected)
        assert shown.show_layers and "layer" in [name for name, _, _ in shown._layout(shown.size.width)]
        assert "all layers" in str(shown.border_title)
        assert app.screen.query_one(FilterChips).layer_filter == "all"
        # The rows say their layer, and so does the detail pane.
        assert shown.move_to("team-deploys")
        await settle(pilot)
        assert shown.cursor_memory.layer == "file"
        assert app.screen.query_one(DetailPane).detail.memory.layer == "file"
        assert "layer: file" in str(app.screen.query_one("#detail-meta").render())
        assert "file" in "".join(s.text for s in shown.render_line(shown.cursor - shown.scroll_offset.y + 1))
        # Another sort: merged in it too (`o` steps from updated to confidence).
        await pilot.press("o")
        await settle(pilot)
        with Layers.open(app.store) as layers:
            by_confidence = [m.id for m in layers.list(MemoryFilter(), sort="confidence")]
        assert list(app.screen.query_one(MemoryList).listing.ids) == by_confidence


@pilot_test
async def test_actions_on_a_file_memory_in_the_merged_list_refuse_with_one_line(demo_db, tmp_path, monkeypatch):
    app = _file_layer_app(demo_db, tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        trash_before = app.screen._counts.trash
        assert shown.move_to("team-deploys")
        await settle(pilot)
        for key in ("d", "e", "S", "b", "a"):
            app._notifications.clear()
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is not None and type(app.screen).__name__ == "MainScreen", key
            refused = [m for m in _notices(app) if "read-only" in m]
            assert len(refused) == 1 and "\n" not in refused[0] and "file layer" in refused[0], (key, _notices(app))
        # A selection mixing an own memory and a file one: refused as a whole, nothing deleted.
        own_id = next(i for i in shown.listing.ids if not i.startswith("team-"))
        shown.selected = {own_id, "team-staging"}
        app._notifications.clear()
        await pilot.press("d")
        await settle(pilot)
        assert any("1 of the 2 chosen are in the file layer" in m for m in _notices(app)), _notices(app)
        assert app.store.get(own_id).status != "deleted"
        assert app.screen._counts.trash == trash_before
        # An own memory in the same list is still edited and deleted as before.
        shown.selected = set()
        assert shown.move_to(own_id)
        await pilot.press("d")
        await settle(pilot)
        assert app.store.get(own_id).status == "deleted"


@pilot_test
async def test_l_cycles_the_layer_filter_all_own_file_all_and_x_clears_it(demo_db, tmp_path, monkeypatch):
    from tui.widgets.filter_bar import FilterChips

    app = _file_layer_app(demo_db, tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        every = set(app.screen.query_one(MemoryList).listing.ids)
        assert len(every) == 34
        await pilot.press("L")  # own
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        assert len(shown.listing.ids) == 32 and not {"team-deploys", "team-staging"} & set(shown.listing.ids)
        assert "own layer" in str(shown.border_title) and "read-only" not in str(shown.border_title)
        assert app.screen.query_one(FilterChips).layer_filter == "own"
        assert "layer: own" in str(app.screen.query_one(FilterChips).render())
        await pilot.press("L")  # file
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        assert set(shown.listing.ids) == {"team-deploys", "team-staging"}
        assert "file layer, read-only" in str(shown.border_title)
        assert shown.cursor_memory.layer == "file"
        await pilot.press("d")  # read-only: nothing moves to the trash
        await settle(pilot)
        assert any("read-only" in m for m in _notices(app))
        await pilot.press("L")  # every layer again
        await settle(pilot)
        assert set(app.screen.query_one(MemoryList).listing.ids) == every
        assert "all layers" in str(app.screen.query_one(MemoryList).border_title)
        await pilot.press("L", "L")  # the file layer; x clears every filter, the layer's too
        await settle(pilot)
        assert app.layer.name == "file"
        await pilot.press("x")
        await settle(pilot)
        assert app.layer.name == "all" and set(app.screen.query_one(MemoryList).listing.ids) == every
        assert app.screen.query_one(FilterChips).layer_filter == "all"


@pilot_test
async def test_with_one_store_the_list_has_no_layer_column(demo_db):
    app = MemdeckApp(demo_db, project=MAIN_PROJECT, clock=FrozenClock(DEMO_NOW), config=Config.defaults(),
                     live=False, still=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        assert not shown.show_layers and app.layer.names == ("own",)
        assert "layer" not in [name for name, _, _ in shown._layout(shown.size.width)]
        assert "layers" not in str(shown.border_title) and "layer" not in str(shown.border_title)
        await pilot.press("L")
        await settle(pilot)
        assert any("Only your own memories" in m for m in _notices(app))
        assert app.layer.name == "all" and len(shown.listing.ids) == 32


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


def test_the_merged_list_fits_80x24_with_its_layer_column(snap_compare, demo_db, tmp_path, monkeypatch):
    """Every layer at 80×24: the layer column beside the type, the file's memories (newest) on
    top, the detail pane saying the cursor's layer."""
    app = _file_layer_app(demo_db, tmp_path, monkeypatch)

    async def run_before(pilot):
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@pilot_test
async def test_the_merged_list_follows_another_process_writing_to_the_own_store(
        demo_db, tmp_path, monkeypatch, run_cli_process):
    """The live check still reloads the merged list, and every merged read runs off the UI thread."""
    import threading

    from test_ui_live_check import wait_until
    from tui.layer_view import LayerView

    read_on: list[str] = []
    real_merged = LayerView._merged

    def merged(self, query, limit):
        read_on.append(threading.current_thread().name)
        return real_merged(self, query, limit)

    monkeypatch.setattr(LayerView, "_merged", merged)
    app = _file_layer_app(demo_db, tmp_path, monkeypatch, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: len(app.screen.query_one(MemoryList).listing) == 34)
        before = set(app.screen.query_one(MemoryList).listing.ids)
        result = run_cli_process("add", "Killmail ids above 2^53 need BigInt", "--type", "pitfall",
                         env={"MEMDECK_DB": str(demo_db), "MEMDECK_PROJECT": MAIN_PROJECT})
        assert result.returncode == 0, result.stderr
        await wait_until(pilot, lambda: len(app.screen.query_one(MemoryList).listing) == 35)
        shown = app.screen.query_one(MemoryList)
        assert {"team-deploys", "team-staging"} <= set(shown.listing.ids)
        added = app.fetch_memories(sorted(set(shown.listing.ids) - before))
        assert len(added) == 1 and added[0].layer == "own" and added[0].title.startswith("Killmail ids")
    assert read_on and threading.main_thread().name not in read_on


@pilot_test
async def test_a_postgres_team_memory_shows_in_the_merged_list_marked_team_and_read_only(demo_db, team):
    from store.engine.records import Memory  # noqa: F401 (the layer field is on every record)

    with Store.open(team, project=MAIN_PROJECT, config=Config.defaults(), clock=FrozenClock(DEMO_NOW)) as shared:
        shared.add("Release notes go in CHANGES.md, newest first.", type="convention",
                   title="Release notes", memory_id="team-release-notes")
    before = dump(team)
    app = _app(demo_db, as_member(team, "bo"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        assert app.layer.names == ("own", "team") and shown.show_layers
        assert "team-release-notes" in shown.listing.ids and len(shown.listing.ids) == 33
        assert shown.move_to("team-release-notes")
        await settle(pilot)
        assert shown.cursor_memory.layer == "team" and shown.cursor_memory.title == "Release notes"
        app._notifications.clear()
        await pilot.press("d")
        await settle(pilot)
        assert [m for m in _notices(app) if "team layer, read-only" in m], _notices(app)
        await pilot.press("L", "L")  # own, then the team store alone
        await settle(pilot)
        assert app.screen.query_one(MemoryList).listing.ids == ("team-release-notes",)
    assert dump(team) == before


@pilot_test
async def test_a_search_finds_every_layer_and_another_project_shows_none_of_the_files(
        demo_db, tmp_path, monkeypatch):
    from textual.widgets import Input

    app = _file_layer_app(demo_db, tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#search", Input).value = "deploys tuesday"
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        assert "team-deploys" in shown.listing.ids, shown.listing.ids
        assert shown.move_to("team-deploys")
        await settle(pilot)
        assert shown.cursor_memory.layer == "file"
        await pilot.press("escape")  # the search box: clears
        await settle(pilot)
        # The file belongs to the repository's project: another project lists none of it.
        app.switch_project("ledger-api")
        await settle(pilot)
        ids = set(app.screen.query_one(MemoryList).listing.ids)
        assert ids and not {"team-deploys", "team-staging"} & ids
        app.switch_project(MAIN_PROJECT)
        await settle(pilot)
        assert {"team-deploys", "team-staging"} <= set(app.screen.query_one(MemoryList).listing.ids)


@pilot_test
async def test_a_memory_in_two_layers_is_counted_once_as_it_is_shown_once(demo_db, tmp_path, monkeypatch):
    """Issue 43 item 11: "Memories 3 of 4 · all layers" with no filter, a shared memory counted in
    both layers and shown once."""
    with Store.open(demo_db, project=MAIN_PROJECT, config=Config.defaults()) as own:
        from store.browse.search import MemoryFilter, list_memories

        shared = list_memories(own, MemoryFilter(), limit=1)[0]
    app = _file_layer_app(demo_db, tmp_path, monkeypatch)
    team_file = tmp_path / "repo" / ".memdeck" / "team.yaml"
    team_file.write_text(TEAM_YAML + f"- id: {shared.id}\n  type: {shared.type}\n  content: {shared.title}\n",
                         encoding="utf-8")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.screen.query_one(MemoryList)
        assert len(shown.listing.ids) == len(set(shown.listing.ids)) == 34
        assert str(shown.border_title).startswith("Memories 34 of 34 · all layers")
