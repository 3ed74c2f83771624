"""`memdeck` with no command opens the workbench; `memdeck demo` builds (or reuses) the demo
store and opens it. Textual is imported inside the handlers only: the rest of the command
line must stay quick. While it is imported (about 0.2 s), a thread reads the first screen of
the list, so the workbench opens with its rows drawn."""

from __future__ import annotations

import argparse
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from store.api import Store, default_db_path
from tui.cli.output import info, out
from store.api import environment

if TYPE_CHECKING:
    from store.api import Loaded



def demo_now(at: float) -> float:
    """The demo store's "now": the current minute. (Today at noon put every time of the last
    hours in the future for whoever ran it in the morning.)"""
    return at // 60 * 60

def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="open the workbench on a demo store",
                       description="Build a demo store (three projects, months of history, sessions, "
                                   "pending candidates, a few memories in the trash, two memories "
                                   "anchored to code it writes beside the store in demo-code/) and open "
                                   "it. It is kept beside the default store as demo.db and reused.")
    p.add_argument("--path", type=Path, default=None,
                   help="where the demo store lives (default: demo.db beside the default store)")
    p.add_argument("--rebuild", action="store_true", help="build it again from scratch")
    p.add_argument("--no-open", action="store_true", help="build it, print its path, do not open it")
    p.set_defaults(handler=cmd_demo)


def open_workbench(ctx, project: str | None = None) -> int:
    store = Store.open(ctx.args.db, project=project or ctx.args.project)
    first_read = read_first_screen(store)
    from tui.app import MemdeckApp

    MemdeckApp(store=store, first_read=first_read).run()
    return 0


def read_first_screen(store: Store) -> Future[Loaded]:
    """The main screen's first listing, read on a thread with a connection of its own. A failure
    is left to the main screen, which then reads again and reports it."""
    from store.api import ListQuery, read_head

    future: Future[Loaded] = Future()

    def read() -> None:
        try:
            with store.db.connection_context():
                future.set_result(read_head(store, ListQuery(), with_counts=True))
        except Exception as exc:
            future.set_exception(exc)

    threading.Thread(target=read, name="first-screen", daemon=True).start()
    return future


def demo_path(args) -> Path:
    if args.path is not None:
        return args.path.expanduser()
    default = default_db_path()
    if isinstance(default, str):  # MEMDECK_DB names a server: the demo is a file of its own
        return environment.data_home() / "memdeck" / "demo.db"
    return default.with_name("demo.db")


def cmd_demo(ctx) -> int:
    from store.api import MAIN_PROJECT, build_demo

    path = demo_path(ctx.args)
    if ctx.args.rebuild:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    if not path.exists():
        build_demo(path, now=demo_now(time.time()))
        info(f"built the demo store at {path}")
    if ctx.args.no_open:
        out(str(path))
        return 0
    ctx.args.db = path
    return open_workbench(ctx, project=ctx.args.project or MAIN_PROJECT)


