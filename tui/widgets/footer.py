"""The footer every screen shows: Textual's, with the keys that matter most first. The screen's
own keys come first (what this screen is for), then the app's ways to other screens (project,
trash, inbox), then the focused pane's, then the rest of the app's; help and quit are pinned at
the right edge. The footer is one line: when the keys do not fit (80 or 100 columns), the least
important ones are left out, never a part of one (the ways to other screens are kept before the
screen's own later keys); `?` lists every key of the screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# App actions kept at the right edge, in this order, before the palette's key.
PINNED = ("help", "quit")
# The app's ways to the other screens, shown right after the screen's own keys (before the
# focused pane's, which the help screen lists): a narrow terminal must still show them.
NAVIGATION = ("projects", "trash", "inbox")
# Below this width the keys lose their padding, so more of them fit.
COMPACT_BELOW = 120


def key_width(key: FooterKey, compact: bool) -> int:
    """The cells a key takes in the footer: its key, its description and their spacing."""
    return len(key.key_display) + len(key.description) + (2 if compact else 3)


class KeyFooter(Footer):
    composed_for: frozenset[str] = frozenset()

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
        width = self.size.width or app.size.width
        compact = width < COMPACT_BELOW
        active = screen.active_bindings
        # The shown keys' actions this footer was composed from (`tui.testing.settle` compares).
        self.composed_for = frozenset(binding.action for _, binding, _, _ in active.values() if binding.show)
        by_action: dict[str, tuple[int, int, FooterKey]] = {}
        for order, (node, binding, enabled, tooltip) in enumerate(active.values()):
            if not binding.show or binding.action in by_action:
                continue
            rank = (0 if node is screen else 1 if node is app and binding.action in NAVIGATION
                    else 3 if node is app else 2)
            key = FooterKey(binding.key, app.get_key_display(binding), binding.description, binding.action,
                            disabled=not enabled, tooltip=tooltip or binding.description)
            by_action[binding.action] = (rank, order, key.data_bind(compact=Footer.compact))
        pinned = [by_action.pop(action) for action in PINNED
                  if action in by_action and by_action[action][0] == 3]
        ordered = [key for _, _, key in sorted(by_action.values(), key=lambda item: item[:2])]
        keys = [key for _, _, key in pinned]
        palette = active.get(app.COMMAND_PALETTE_BINDING) if self.show_command_palette else None
        if palette is not None and app.ENABLE_COMMAND_PALETTE:
            _, binding, enabled, _ = palette
            keys.append(FooterKey(binding.key, app.get_key_display(binding), binding.description, binding.action,
                                  disabled=not enabled, tooltip=binding.tooltip or binding.description
                                  ).data_bind(compact=Footer.compact))
        room = width - (sum(key_width(k, compact) for k in keys) + 1 if keys else 0)
        # The keys that fit beside the pinned ones, in order of importance: the ways to the other
        # screens first (a narrow terminal must still show them), then the screen's own keys in
        # their order, then the rest; the others are left out whole (the help lists them), so the
        # footer never takes a second line over the screen. They show in the footer's order.
        importance = sorted(by_action.values(), key=lambda item: (item[0] != 1, item[0], item[1]))
        chosen, used = set(), 0
        for _, _, key in importance:
            if used + key_width(key, compact) > room:
                break
            chosen.add(id(key))
            used += key_width(key, compact)
        yield from (key for key in ordered if id(key) in chosen)
        if keys:  # a dialog has neither: its own keys are all it takes
            with HorizontalGroup(classes="footer--pinned"):
                yield from keys

    def on_resize(self) -> None:
        compact = self.size.width < COMPACT_BELOW
        if compact != self.compact:
            self.compact = compact
        if self._bindings_ready:
            self.call_later(self.recompose)  # more or fewer keys fit now
