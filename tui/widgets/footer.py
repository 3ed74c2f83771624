"""The footer every screen shows: Textual's, with the keys that matter most first. The screen's
own keys come first (what this screen is for), then the focused pane's, then the app's; help,
quit and the command palette are pinned at the right edge, so a narrow terminal cuts the least
important keys in the middle, never `?` or `q`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# App actions kept at the right edge, in this order, before the palette's key.
PINNED = ("help", "quit")
# Below this width the keys lose their padding, so more of them fit.
COMPACT_BELOW = 120


class KeyFooter(Footer):
    DEFAULT_CSS = """
    KeyFooter > .footer--pinned {
        dock: right;
        width: auto;
        height: 1;
        background: $footer-background;
        border-left: vkey $foreground 20%;
    }
    """

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        screen, app = self.screen, self.app
        active = screen.active_bindings
        by_action: dict[str, tuple[int, int, FooterKey]] = {}
        for order, (node, binding, enabled, tooltip) in enumerate(active.values()):
            if not binding.show or binding.action in by_action:
                continue
            rank = 0 if node is screen else 2 if node is app else 1
            key = FooterKey(binding.key, app.get_key_display(binding), binding.description, binding.action,
                            disabled=not enabled, tooltip=tooltip or binding.description)
            by_action[binding.action] = (rank, order, key.data_bind(compact=Footer.compact))
        pinned = [by_action.pop(action) for action in PINNED
                  if action in by_action and by_action[action][0] == 2]
        for _, _, key in sorted(by_action.values(), key=lambda item: item[:2]):
            yield key
        keys = [key for _, _, key in pinned]
        palette = active.get(app.COMMAND_PALETTE_BINDING) if self.show_command_palette else None
        if palette is not None and app.ENABLE_COMMAND_PALETTE:
            _, binding, enabled, _ = palette
            keys.append(FooterKey(binding.key, app.get_key_display(binding), binding.description, binding.action,
                                  disabled=not enabled, tooltip=binding.tooltip or binding.description
                                  ).data_bind(compact=Footer.compact))
        if keys:  # a dialog has neither: its own keys are all it takes
            with HorizontalGroup(classes="footer--pinned"):
                yield from keys

    def on_resize(self) -> None:
        self.compact = self.size.width < COMPACT_BELOW
