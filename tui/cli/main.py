"""`memdeck`: the command line's entry point; the command line itself is `tui.cli.program` (the
parser, the commands, the exit codes).

This module imports only the standard library's quickest parts: it is what every `memdeck`
process loads first.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # `typing` is not imported: a few ms of every hook
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """`memdeck ARGV` (default: this process's arguments)."""
    from tui.cli.program import main as run

    return run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
