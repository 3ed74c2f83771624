"""`memdeck`: the command line's entry point. A prompt hook is first offered to the hook server
(`tui/cli/hook_wire.py`, before anything of the store is imported); everything else, and a hook
the server does not answer, runs in `tui.cli.program` (the parser, the commands, the exit codes).

This module imports only the standard library's quickest parts: it is what every `memdeck`
process loads first.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # `typing` is not imported: a few ms of every hook
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """`memdeck ARGV` (default: this process's arguments). Only a process's own command line is
    offered to the hook server: a call with `argv` (a test, the server itself) runs here."""
    if argv is None:
        argv = sys.argv[1:]
        from tui.cli import hook_wire

        code = hook_wire.answered(argv)
        if code is not None:
            return code
    from tui.cli.program import main as run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
