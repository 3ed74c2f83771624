"""The workbench's live check of the team store (docs/team.md, docs/workbench.md): a change
another member makes there shows in the merged list at once, not at the next reload.

The team store is a layer read beside your own (`tui.layer_view`); its change counter
(`Store.data_version`: `memdeck_changes()` on PostgreSQL, a sequence every write of a memory,
event or project moves) is read every `LIVE_CHECK_SECONDS` on a thread of its own (its own
connection; never the UI thread), as the own store's SQLite watcher reads `PRAGMA data_version`.
When it moved, `on_change()` is called on that thread (the app posts a message that reloads the
screens). A write of the app's own to the team store (`S` shares) is reloaded for by the write:
`expect()` before it holds the watcher's reports (a check between the commit and `seen()` would
reload a second time), and `seen()` after it has the watcher take the version then as seen; a
change another member made meanwhile is in what the write's reload reads. A team server that stops answering
is read again at the next check; the watcher ends with the app (`stop()`).
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable

_STOP = object()


class LayerWatch:
    """Polls one layer's store for changes made by other connections."""

    def __init__(self, store: Any, on_change: Callable[[], None], every: float) -> None:
        self.store = store
        self.on_change = on_change
        self.every = every
        self._asks: queue.Queue = queue.Queue()
        self._own_write = threading.Event()  # set from `expect()` until `seen()`
        self._thread = threading.Thread(target=self._run, name="memdeck-team-live", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._asks.put(_STOP)  # ends now, not at its next check

    def expect(self) -> None:
        """A write of this app's own to the layer's store is about to start: report no change
        until `seen()`."""
        self._own_write.set()

    def seen(self, wait: float) -> None:
        """A write of this app's own to the layer's store committed: take the version after it as
        seen (waits up to `wait` seconds for the watcher's answer)."""
        if not self._thread.is_alive():
            self._own_write.clear()
            return
        taken = threading.Event()
        self._asks.put(taken)
        taken.wait(wait)

    def _version(self) -> int | None:
        try:
            return self.store.data_version()
        except Exception:  # the server is gone for now, or the store closed as the app ends
            return None

    def _run(self) -> None:
        seen = self._version()
        try:
            while True:
                try:
                    asked = self._asks.get(timeout=self.every)
                except queue.Empty:
                    asked = None
                if asked is _STOP:
                    return
                version = self._version()
                if asked is not None:
                    seen = version if version is not None else seen
                    self._own_write.clear()
                    asked.set()
                elif version is not None and version != seen and not self._own_write.is_set():
                    if seen is not None:  # else the first answer since the server came back
                        self.on_change()
                    seen = version
        finally:
            try:
                self.store.db.close()  # this thread's connection
            except Exception:
                pass
