"""Make the README's screenshots from the demo store: `.venv/bin/python screenshots/make_screenshots.py`.

Each screen is driven by keys like a person would, saved as SVG by Textual, then converted to
PNG with `rsvg-convert` when it is installed (`apt-get install librsvg2-bin`).
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui.testing import SIZE, demo_app, settle  # noqa: E402

HERE = Path(__file__).resolve().parent

# (name, keys pressed from the main screen)
SHOTS = (
    ("main", ()),
    ("search", ("slash", *"esi cache")),
    ("filters", ("f",)),
    ("edit", ("e",)),
    ("bulk", ("space", "space", "space", "b")),
    ("trash", ("T",)),
    ("inbox", ("I",)),
    ("projects", ("p",)),
    ("help", ("question_mark",)),
    # the insight views: a memory with a long history, its session's log, a preview for a critic
    ("timeline", ("j",) * 11 + ("t",)),
    ("sessions", ("s",)),
    # the demo's memory whose code changed after it was anchored (fifth by last update)
    ("anchors", ("j",) * 4 + ("a",)),
    ("preview", ("i", *"Review the websocket reconnect and retry backoff in the feed client before release", "shift+tab",
                 "shift+tab", "shift+tab", "enter", *"cri", "enter")),
)


async def shoot(db: Path, name: str, keys: tuple[str, ...]) -> Path:
    app = demo_app(db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        return Path(app.save_screenshot(f"{name}.svg", path=str(HERE)))


def _preserve_spaces(svg: Path) -> None:
    """rsvg-convert drops the leading spaces of each text run (a column after a coloured cell
    shifts left) unless the document asks for its spaces to be kept."""
    text = svg.read_text(encoding="utf-8")
    if 'xml:space="preserve"' not in text:
        svg.write_text(text.replace("<svg ", '<svg xml:space="preserve" ', 1), encoding="utf-8")


def main() -> int:
    converter = shutil.which("rsvg-convert")
    with tempfile.TemporaryDirectory() as folder:
        for name, keys in SHOTS:
            svg = asyncio.run(shoot(Path(folder) / f"{name}.db", name, keys))
            if converter:
                _preserve_spaces(svg)
                subprocess.run([converter, "-o", str(svg.with_suffix(".png")), str(svg)], check=True)
                svg.unlink()  # the PNG is what the README shows; the SVG was only the way there
            print(svg.with_suffix(".png" if converter else ".svg").relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
