"""What was found by trying the workbench as a person would, on the demo store through Textual's
Pilot: the session log opens at its newest entry, `j`/`k` move in every list, `o`/`O` sort both
ways, a project opens at its first row, help groups are named for people, and each screen's
panes reflow to the terminal's size."""

from __future__ import annotations

from textual.widgets._footer import FooterKey
from ui_support import demo_db, demo_template, pilot_test  # noqa: F401 (fixtures)

from store import Config, FrozenClock, Store
from store.demo import MAIN_PROJECT
from tui.screens.help import binding_table
from tui.screens.main import SORT_ORDER
from tui.screens.sessions import SessionsScreen, SessionTable
from tui.testing import DEMO_NOW, demo_app, settle
from tui.widgets.activity_log import ActivityLog
from tui.widgets.detail import DetailPane
from tui.widgets.footer import KeyFooter
from tui.widgets.memory_list import MemoryList
from tui.widgets.memory_table import MemoryTable
from tui.widgets.score_table import ScoreTable

LONG_SESSION = "10n9-session"


async def press(pilot, *keys: str) -> None:
    """Press `keys`, then wait until the app has done what they started."""
    await pilot.press(*keys)
    await settle(pilot)


def add_long_session(path, entries: int = 150) -> None:
    start = DEMO_NOW - 3 * 3600
    with Store.open(path, project=MAIN_PROJECT, clock=FrozenClock(start), config=Config.defaults()) as store:
        store.sessions.ensure(LONG_SESSION, agent="claude-code", hat="critic", task="A long review",
                             started_at=start)
        for seq in range(entries):
            store.sessions.append_activity(LONG_SESSION, "tool_use", f"step {seq}", at=start + seq * 10, seq=seq)


@pilot_test
async def test_the_session_log_opens_following_at_its_newest_entry(demo_db):
    add_long_session(demo_db)
    app = demo_app(demo_db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_sessions(LONG_SESSION)
        await settle(pilot)
        await pilot.pause()
        log = app.screen.query_one(ActivityLog)
        height = log.scrollable_content_region.height
        assert log.follow and log.cursor == 149 and log.border_subtitle == "following"
        assert log.scroll_offset.y <= 149 < log.scroll_offset.y + height  # the newest entry is in view
        assert log.scroll_offset.y == 150 - height  # and the view ends with it


@pilot_test
async def test_j_and_k_move_in_the_session_list(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await press(pilot, "s")
        table = app.screen.query_one(SessionTable)
        table.focus()
        await press(pilot, "j", "j")
        assert table.cursor_row == 2
        opened = app.screen.session_id
        assert opened == str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        await press(pilot, "k")
        assert table.cursor_row == 1 and app.screen.session_id != opened


@pilot_test
async def test_o_sorts_by_the_next_column_and_shift_o_by_the_one_before(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        assert app.screen.query_state.sort == SORT_ORDER[0]
        await press(pilot, "o", "o")
        assert app.screen.query_state.sort == SORT_ORDER[2]
        await press(pilot, "O", "O", "O")
        assert app.screen.query_state.sort == SORT_ORDER[-1]
        assert app.screen.query_one(MemoryList).border_subtitle == f"by {SORT_ORDER[-1]}"


@pilot_test
async def test_switching_project_puts_the_cursor_on_the_first_row(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await press(pilot, *"jjjjj")
        memories = app.screen.query_one(MemoryList)
        assert memories.cursor == 5
        app.switch_project("ledger-api")
        await settle(pilot)
        assert memories.cursor == 0 and memories.scroll_offset.y == 0
        assert memories.cursor_id == memories.listing.ids[0]
        assert {m.project for m in app.store.get_many(memories.listing.ids[:1])} == {"ledger-api"}


@pilot_test
async def test_help_names_its_groups_for_people_and_describes_every_key(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        groups, rows = help_of(app.screen)
        assert groups == ["Everywhere", "Memories", "Search box", "Memory list"]
        described = {key: tooltip for key, _, tooltip in rows}
        assert described["e"] and described["n"] and described["O"] and described["v"]
        await press(pilot, "s")
        groups, _ = help_of(app.screen)
        assert groups == ["Everywhere", "Session log", "Sessions", "Activity"]


def help_of(screen) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The help table's group titles, and its key rows (key, description, tooltip)."""
    table = binding_table(screen)
    cells = [[str(c) for c in column.cells] for column in table.columns]
    groups, rows = [], []
    for key, description, tooltip in zip(*cells):
        if key and not description:
            groups.append(key)
        elif key:
            rows.append((key, description, tooltip))
    return groups, rows


@pilot_test
async def test_below_120_columns_the_detail_pane_stacks_under_the_list_and_v_hides_it(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        memories, detail = app.screen.query_one(MemoryList), app.screen.query_one(DetailPane)
        assert memories.region.width == detail.region.width == 100
        assert detail.region.y >= memories.region.bottom
        title = next(w for name, _, w in memories._layout(memories.scrollable_content_region.width)
                     if name == "title")
        assert title >= 34
        await press(pilot, "v")
        assert not detail.display and memories.region.height > 20
        await press(pilot, "v")
        assert detail.display
    app = demo_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        memories, detail = app.screen.query_one(MemoryList), app.screen.query_one(DetailPane)
        assert detail.region.x >= memories.region.right and detail.region.y == memories.region.y


@pilot_test
async def test_tables_drop_their_least_useful_columns_first_never_the_title(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "T")
        narrow = [str(c.key.value) for c in app.screen.query_one(MemoryTable).columns.values()]
        assert "title" in narrow and "source" not in narrow
        await press(pilot, "escape", "i")
        why = [str(c.key.value) for c in app.screen.query_one(ScoreTable).columns.values()]
        assert {"title", "score", "reason", "text"} <= set(why) and "critical" not in why
    app = demo_app(demo_db)
    async with app.run_test(size=(240, 60)) as pilot:
        await settle(pilot)
        await press(pilot, "T")
        wide = [str(c.key.value) for c in app.screen.query_one(MemoryTable).columns.values()]
        assert wide == ["mark", "type", "title", "conf", "hat", "source", "when"]


@pilot_test
async def test_the_footer_keeps_help_and_quit_at_any_width(demo_db):
    app = demo_app(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for keys in ((), ("s",), ("escape", "T"), ("escape", "t")):
            await press(pilot, *keys)
            footer = app.screen.query_one(KeyFooter)
            pinned = footer.query_one(".footer--pinned")
            assert [k.action for k in pinned.children][:2] == ["help", "quit"]
            assert pinned.region.right <= 80 and pinned.region.width > 0
            first = footer.query(FooterKey).first()  # on a second line too when they need two
            assert first.action in {b.action for b in type(app.screen).BINDINGS}  # the screen's own keys first
            if keys == ("s",):
                assert isinstance(app.screen, SessionsScreen)
