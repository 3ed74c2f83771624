"""What every screen that shows store data shares: the app reloads these when the store
changes (a write from this app, or another process committing)."""

from __future__ import annotations

from textual.screen import Screen


class StoreScreen(Screen):
    """A screen over store data. `reload` fetches again, keeping the cursor and selection."""

    stale = False  # the store changed while another screen hid this one

    def reload(self) -> None:
        """Fetch what the screen shows again (in a worker)."""

    def on_screen_resume(self) -> None:
        if self.stale:
            self.stale = False
            self.reload()
