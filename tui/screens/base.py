"""What every screen that shows store data shares: the app reloads these when the store
changes (a write from this app, or another process committing)."""

from __future__ import annotations

from textual.binding import Binding
from textual.screen import Screen

# The app's one-key bindings (`MemdeckApp.BINDINGS`). A screen where the person types binds them
# to nothing (`TYPING_KEYS`), so a letter typed while a select or a table has focus neither quits
# the app nor opens another screen over what is being written; `escape` leaves the screen.
APP_LETTER_KEYS = ("q", "question_mark", "p", "T", "I", "t", "s", "i")
TYPING_KEYS = Binding(",".join(APP_LETTER_KEYS), "typed", "Type", show=False,
                      tooltip="Typed, not a command: the app's one-key commands are off here")


class StoreScreen(Screen):
    """A screen over store data. `reload` fetches again, keeping the cursor and selection."""

    stale = False  # the store changed while another screen hid this one

    def reload(self) -> None:
        """Fetch what the screen shows again (in a worker)."""

    def on_screen_resume(self) -> None:
        if self.stale:
            self.stale = False
            self.reload()
