"""The workbench: a Textual app over one store, to review and curate memories by keyboard.

`MemdeckApp` opens the store once and owns what every screen shares: the store, the `Curator`
(bulk actions and their undo), the clock (frozen in tests), running store work off the UI
thread, and the live check that reloads the screens when another process writes.

Adding a view: put a screen in `tui/screens/`, push it from an `action_*` here or on the main
screen, and declare its key as a `Binding` with a description: the footer, the help screen and
the command palette all read the bindings, so nothing else needs to know about it.
"""

from __future__ import annotations

import asyncio
import gc
import queue
import threading
from dataclasses import dataclass
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import ModalScreen, Screen

from store.api import (
    paging, Clock, Config, Store, BulkResult, Curator, Conflict, MemdeckError, Memory, Project,
)
from tui.commands import GoToMemory
from tui.layer_view import LayerView
from tui.requests import Requests
from tui.screens.base import StoreScreen
from tui.screens.main import MainScreen

LIVE_CHECK_SECONDS = 0.5
_STOP = object()  # put on the SQLite watcher's queue: the app is ending


class MemdeckApp(App):
    """memdeck's workbench on the store at `path`, showing `project`."""

    TITLE = "memdeck"
    COMMANDS = App.COMMANDS | {GoToMemory}
    CSS_PATH = "app.tcss"
    # Classes every screen gets from its size, which the layout in app.tcss follows.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-normal"), (200, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", tooltip="Every key on this screen"),
        Binding("p", "projects", "Project", tooltip="Switch to another project"),
        Binding("T", "trash", "Trash", tooltip="Restore or purge deleted memories"),
        Binding("I", "inbox", "Inbox", tooltip="Accept or reject pending candidates"),
        Binding("t", "timeline", "Timeline", show=False, tooltip="Confidence over time of the chosen memories, and the project's spread of confidence"),
        Binding("s", "sessions", "Sessions", show=False, tooltip="Agent sessions and their live activity log"),
        Binding("i", "preview", "Inject", show=False, tooltip="Preview what prime would inject for a hat and a task"),
    ]

    def __init__(self, path: Path | str | None = None, *, project: str | None = None,
                 clock: Clock | None = None, config: Config | None = None,
                 live: bool = True, still: bool = False,
                 store: Store | None = None, first_read: Future[paging.Loaded] | None = None) -> None:
        """`store`: one already open (then `path`, `project`, `clock` and `config` are unused);
        `first_read`: the main screen's first listing, being read meanwhile (`tui.cli.ui`)."""
        super().__init__()
        self.still = still  # no cursor blink, no animation: for snapshots and screenshots
        if still:
            self.animation_level = "none"
        self.store = store or Store.open(path, project=project, clock=clock, config=config)
        self.first_read = first_read
        self.curator = Curator(self.store, actor="ui")
        self.layer = LayerView(self.store)  # the layer the main list shows (`L`; docs/team.md)
        self.live = live
        # The data version the screens were last reloaded at, on PostgreSQL (a server-wide
        # number: the same on every connection). On SQLite the watcher thread keeps its own
        # (`_watch_file`): `PRAGMA data_version` means something only on the connection read.
        self._data_version: int | None = None
        self._listening = False  # PostgreSQL tells this app of each commit
        self._watching = False  # an SQLite file is watched by `_watch_file`
        self._watcher_asks: queue.Queue = queue.Queue()
        self._team_watch: Any = None  # the team store's live check (`watch_layers`)
        # The projects with their counts, for the command palette, which asks at every key it
        # is given: read in a worker on start and after each change, never on the UI thread.
        self.projects: list[Project] = []
        self._project_reads = Requests()
        # The main list's quick reads (a keystroke's first rows) run on this one thread: its
        # connection keeps what searches reuse (`paging.scope`), and no other work queues there.
        self._listing_thread = ThreadPoolExecutor(1, thread_name_prefix="memdeck-listing")

    # -- store access, for screens and widgets ---------------------------------------------------

    def now(self) -> float:
        return self.store.now()

    def db_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run `fn(*args)` on this thread's own connection (workers run on their own threads).
        A worker thread keeps its connection for the next worker (it closes with the thread): a
        new one starts with a cold page cache, which made a search keystroke's first rows 2-4
        times slower."""
        if self.store.db.is_closed():
            self.store.db.connect()
        return fn(*args)

    def read_listing(self, fn: Callable[[], Any]) -> asyncio.Future:
        """Start `fn()` on the listing thread now; await the answer in an async worker. Started
        here rather than by the worker, it does not wait for the worker's first turn in the
        event loop (3-9 ms of a keystroke)."""
        return asyncio.wrap_future(self._listing_thread.submit(self.db_call, fn))

    _frozen = False  # see `started`

    def started(self) -> None:
        """The first whole listing is shown: collect the start's garbage once, then keep what
        survives (the app, its screens, Textual's and the store's caches) out of Python's
        cyclic garbage collector, whose full passes over it took 60-90 ms in the middle of a
        search keystroke at 100,000 memories. What is made later is still collected; what is
        kept goes back to the collector when the app ends (`on_unmount`)."""
        if not self._frozen:
            self._frozen = True
            gc.collect()
            gc.freeze()

    def share(self, ids: Sequence[str]) -> None:
        """`memdeck share`: copy these own memories to the team store (setting `team.db`), in a
        worker; a refusal is the team store's one line (docs/team.md)."""
        from tui.sharing import share_in_worker

        self.write(lambda: share_in_worker(self, ids, self._team_watch, 5 * LIVE_CHECK_SECONDS),
                   lambda said: self.notify(said, markup=False))

    def fetch_memories(self, ids: Sequence[str]) -> list[Memory]:
        return self.db_call(self.layer.fetch, ids)

    def write(self, fn: Callable[[], Any], done: Callable[[Any], None] | None = None,
              conflicted: Callable[[Conflict], None] | None = None) -> None:
        """Run a store write in a worker; report it, then reload every screen. A conflict goes to
        `conflicted` when given (else it is reported like any error)."""
        self._write(fn, done, conflicted)

    @dataclass
    class Written(Message, bubble=False):
        """A store write finished. `done(result)` is the caller's next step (a form closing, a
        notice): the one worker answer that carries a callable, since each write has its own."""

        result: Any
        done: Callable[[Any], None] | None
        version: int | None = None  # the store's data version after the write, on PostgreSQL

    @dataclass
    class WriteRefused(Message, bubble=False):
        """A store write was refused (nothing written): `conflicted` takes a conflict when given."""

        error: MemdeckError
        conflicted: Callable[[Conflict], None] | None

    @dataclass
    class ChangedElsewhere(Message, bubble=False):
        """Another connection committed to the store (PostgreSQL's notice, or SQLite's watcher
        thread): its data version now, as the connection that saw it reads it."""

        version: int

    @dataclass
    class ProjectsLoaded(Message, bubble=False):
        asked: int
        projects: list[Project]

    @work(thread=True, group="write")
    def _write(self, fn: Callable[[], Any], done: Callable[[Any], None] | None,
               conflicted: Callable[[Conflict], None] | None) -> None:
        import peewee

        from store.api import refusal

        try:
            result = self.db_call(fn)
        except MemdeckError as exc:
            self.post_message(self.WriteRefused(exc, conflicted))
            return
        except peewee.DatabaseError as exc:
            refused = refusal(exc, self.store.db)  # a team store's role may not: its one line
            if refused is None:
                raise
            self.post_message(self.WriteRefused(refused, None))
            return
        self.post_message(self.Written(result, done, self._seen_own_write()))

    def _seen_own_write(self) -> int | None:
        """On the write's thread, once it committed: tell the live check that this change is
        this app's own, which the screens reload for now, so it does not reload them again.
        PostgreSQL: the store's data version, read here (a round trip, off the UI thread).
        SQLite: the watcher takes its connection's version now, before the reload reads
        (a change by another process until then is in what the reload reads)."""
        if self._listening:
            return self.db_call(self.store.data_version)
        if self._watching:
            taken = threading.Event()
            self._watcher_asks.put(taken)
            taken.wait(5 * LIVE_CHECK_SECONDS)  # a moment; the app may be ending meanwhile
        return None

    def on_memdeck_app_write_refused(self, message: WriteRefused) -> None:
        if isinstance(message.error, Conflict) and message.conflicted is not None:
            message.conflicted(message.error)
        else:
            self.notify(str(message.error), title="Not done", severity="error", markup=False)

    def on_memdeck_app_written(self, message: Written) -> None:
        self._written(message.result, message.done, message.version)

    def _written(self, result: Any, done: Callable[[Any], None] | None, version: int | None = None) -> None:
        if isinstance(result, BulkResult):
            undo = " · u undoes" if self.curator.can_undo and not result.action.startswith("undid") else ""
            self.notify(result.summary + undo, markup=False)  # tags and types are user text
        if done is not None:
            done(result)
        self.reload_screens(version)

    def reload_screens(self, version: int | None = None) -> None:
        """Reload the screens on view now; those hidden under another full screen reload when
        they are shown again (re-reading a hidden 100,000-memory list at every write kept the
        UI thread from the screen on top). `version`: the store's data version (PostgreSQL's),
        when known; nothing is read here, on the UI thread."""
        if version is not None:
            self._data_version = version
        self.refresh_projects()
        shown = True
        for screen in reversed(self.screen_stack):
            if isinstance(screen, StoreScreen):
                if not (screen.is_mounted and screen.is_attached):
                    # Pushed but not composed yet (its mount reads the store, after this
                    # change), or being taken down as the app ends: it has no widgets to fill.
                    pass
                elif shown:
                    screen.reload()
                else:
                    screen.stale = True
            if not isinstance(screen, ModalScreen):
                shown = False  # a full screen hides everything under it

    # -- shared actions ------------------------------------------------------------------------

    def bulk(self, action: str, ids: Sequence[str], value: Any = None) -> None:
        """Run one of the `Curator`'s actions (`delete`, `merge`, `set_type`, ...) on `ids`."""
        method = getattr(self.curator, action)
        ids = list(ids)
        self.write(lambda: method(ids) if value is None else method(ids, value))

    def undo(self) -> None:
        if not self.curator.can_undo:
            self.notify("Nothing to undo", severity="warning")
            return
        self.write(self.curator.undo)

    def edit_memory(self, memory: Memory | None, anchors: Sequence[str] | None = ()) -> None:
        """Open the edit form on `memory` (None: a new memory). An existing memory's form saves
        itself through `save_edit`; a new one's fields are stored when the form returns them.
        `anchors`: its anchors' specs, shown in the form (None: not known, so not offered)."""
        from tui.screens.edit import EditScreen

        def save(fields: dict[str, Any] | None) -> None:
            if fields is not None and memory is None:
                self.write(lambda: self._create(fields),
                           lambda created: self.notify(f"Created {created.id}"))

        self.push_screen(EditScreen(memory, self.store.vocabulary, anchors=anchors), save)

    def save_edit(self, form: Any, read: Memory, changes: dict[str, Any]) -> None:
        """Save the fields a person changed in `form`, if the memory is still as `read`
        (undoable with `u`); on a conflict the form asks what to do."""
        def saved(edited: Memory) -> None:
            self.notify(f"Saved {edited.id} · u undoes", markup=False)
            form.saved(edited)

        self.write(lambda: self._save_edit(read, changes), saved,
                   lambda conflict: form.conflicted(conflict, changes))

    def _save_edit(self, read: Memory, changes: dict[str, Any]) -> Memory:
        """The fields and the anchors of the form in one transaction: the compare-and-set first,
        so a memory changed meanwhile gets neither; a bad anchor saves nothing."""
        from store.api import set_anchors

        fields = {name: value for name, value in changes.items() if name != "anchors"}
        with self.store.transaction():
            edited = self.curator.edit(read, **fields)
            if "anchors" in changes:
                set_anchors(self.store, read.id, changes["anchors"], actor="ui")
                edited = self.store.get(read.id)
        return edited

    def _create(self, fields: dict[str, Any]) -> Memory:
        from store.api import add_anchored

        fields = dict(fields)
        protected = fields.pop("protected", False)
        content = fields.pop("content")
        with self.store.transaction():
            memory = add_anchored(self.store, content, fields.pop("anchors", None) or (), source="operator",
                                  actor="ui", reinforce=False, file_refs=fields.pop("file_refs"), **fields)[0].memory
            if protected:
                memory = self.store.edit(memory.id, protected=True, actor="ui")
        return memory

    def switch_project(self, name: str) -> None:
        self.store.project = name
        self.curator = Curator(self.store, actor="ui")  # undo belongs to the project it ran in
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.project_changed()

    def go_to(self, memory_id: str) -> None:
        while not isinstance(self.screen, MainScreen) and len(self.screen_stack) > 1:
            self.pop_screen()
        self.screen.go_to(memory_id)

    # -- screens ---------------------------------------------------------------------------------

    def refresh_projects(self) -> None:
        self._read_projects(self._project_reads.new())

    @work(thread=True, exclusive=True, group="projects")
    def _read_projects(self, asked: int) -> None:
        self.post_message(self.ProjectsLoaded(asked, self.db_call(self.store.projects)))

    def on_memdeck_app_projects_loaded(self, message: ProjectsLoaded) -> None:
        if self._project_reads.is_latest(message.asked):  # else counts from before a newer write
            self.projects = message.projects

    def on_mount(self) -> None:
        self.push_screen(MainScreen())
        # After the first frame: counting every project's memories (0.1 s of CPU at a million)
        # would compete with the first listing for a core.
        self.call_after_refresh(self.refresh_projects)
        if self.live:
            # A PostgreSQL store tells of each commit (LISTEN/NOTIFY); an SQLite file is polled
            # on a thread of its own. Either posts `ChangedElsewhere`.
            self._stop_listening = self.store.listen(self._changed_elsewhere)
            self._listening = self._stop_listening is not None
            if not self._listening:
                self._watching = True
                threading.Thread(target=self._watch_file, name="memdeck-live", daemon=True).start()

    def _changed_elsewhere(self) -> None:
        """On the listener's thread, at another connection's notice: the version query is a round
        trip to the server, so it is made here, off the UI thread (docs/development.md, Workers)."""
        version = self.store.data_version()
        if version != self._data_version:
            self.post_message(self.ChangedElsewhere(version))

    def _watch_file(self) -> None:
        """SQLite's live check, on a thread of its own for as long as the app runs (as
        PostgreSQL's listener: not a Textual worker, which would never be done, so a test's wait
        for the workers would never end). `PRAGMA data_version` (a read of shared memory, no
        I/O) changes when another connection commits, and means something only on the
        connection read: this thread (its one connection) reads it every LIVE_CHECK_SECONDS and
        posts `ChangedElsewhere` when it changed. A write of this app's asks it
        (`_seen_own_write`) to take the version after that write as seen."""
        try:
            seen = self.db_call(self.store.data_version)
        except Exception:  # the store closed before the thread's first turn: the app is ending
            return
        while True:
            try:
                asked = self._watcher_asks.get(timeout=LIVE_CHECK_SECONDS)
            except queue.Empty:
                asked = None
            if asked is _STOP:
                return
            try:
                version = self.db_call(self.store.data_version)
            except Exception:  # the store closed under it: the app is ending
                return
            if asked is not None:  # this app's own write: its screens reload for it
                seen = version
                asked.set()
            elif version != seen:
                seen = version
                self.post_message(self.ChangedElsewhere(version))

    def watch_layers(self) -> None:
        """The layers are open: while the app is live, the team store's changes are watched too
        (`tui.team_live`), on a thread of its own; another member's write reloads the screens."""
        team = self.layer.layers.store("team") if self.layer.layers is not None else None
        if not self.live or team is None or self._team_watch is not None:
            return
        from tui.team_live import LayerWatch

        self._team_watch = LayerWatch(team, lambda: self.post_message(self.LayerChanged()), LIVE_CHECK_SECONDS)
        self._team_watch.start()

    class LayerChanged(Message, bubble=False):
        """Another connection committed to the team store (`tui.team_live`)."""

    def on_memdeck_app_layer_changed(self, message: LayerChanged) -> None:
        self.reload_screens()

    def on_memdeck_app_changed_elsewhere(self, message: ChangedElsewhere) -> None:
        # PostgreSQL's notice may be of this app's own write, already reloaded for; the SQLite
        # watcher posts only what it has not seen (and its numbers are its connection's own).
        if self._watching or message.version != self._data_version:
            self.reload_screens(None if self._watching else message.version)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if self.still and hasattr(event.widget, "cursor_blink"):
            event.widget.cursor_blink = False

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.screen))

    def action_projects(self) -> None:
        from tui.screens.projects import ProjectPicker

        def chosen(name: str | None) -> None:
            if name and name != self.store.project:
                self.switch_project(name)

        self.push_screen(ProjectPicker(self.store.project), chosen)

    def action_trash(self) -> None:
        from tui.screens.trash import TrashScreen

        if not isinstance(self.screen, TrashScreen):
            self.push_screen(TrashScreen())

    def action_inbox(self) -> None:
        from tui.screens.inbox import InboxScreen

        if not isinstance(self.screen, InboxScreen):
            self.push_screen(InboxScreen())

    # -- insight views: timeline, session log, injection preview ---------------------------------

    def _memory_list(self):
        """The main screen's memory list when it is the screen shown, else None."""
        from tui.widgets.memory_list import MemoryList

        return self.screen.query_one(MemoryList) if isinstance(self.screen, MainScreen) else None

    def action_timeline(self) -> None:
        from tui.screens.timeline import TimelineScreen

        if not isinstance(self.screen, TimelineScreen):
            memories = self._memory_list()
            self.push_screen(TimelineScreen(memories.chosen_ids() if memories else []))

    def action_sessions(self) -> None:
        """The session log, opened on the session the cursor's memory came from (if any)."""
        memories = self._memory_list()
        memory = memories.cursor_memory if memories else None
        self.open_sessions(memory.session_id if memory else None)

    def open_sessions(self, session_id: str | None = None) -> None:
        from tui.screens.sessions import SessionsScreen

        if isinstance(self.screen, SessionsScreen):
            if session_id:
                self.screen.show_session(session_id)
            return
        self.push_screen(SessionsScreen(session_id))

    def action_preview(self) -> None:
        from tui.screens.preview import PreviewScreen

        if not isinstance(self.screen, PreviewScreen):
            self.push_screen(PreviewScreen())

    # -- command palette ---------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        from tui.commands import binding_commands

        yield from binding_commands(self, screen)
        from tui.screens.replay import PALETTE_HELP, ask_replay

        yield SystemCommand("Replay a history", PALETTE_HELP, lambda: ask_replay(self))
        yield from super().get_system_commands(screen)

    def on_unmount(self) -> None:
        if getattr(self, "_stop_listening", None) is not None:
            self._stop_listening()
        self._watcher_asks.put(_STOP)  # the watcher ends now, not at its next check
        if self._team_watch is not None:
            self._team_watch.stop()
        self._listing_thread.shutdown(wait=False, cancel_futures=True)
        if self._frozen:
            gc.unfreeze()
        self.layer.close()
        self.store.close()
