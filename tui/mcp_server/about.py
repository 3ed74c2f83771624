"""What the MCP server says about itself: its instructions to the agent and its version. Apart
from the server and from the early `initialize` answer (`early.py`), which both give them."""

from __future__ import annotations

INSTRUCTIONS = (
    "memdeck is this project's long-term memory: what earlier sessions learned (fixes, pitfalls, "
    "decisions, conventions). Call `context` when you start or change task, `search` before "
    "guessing how something here works, `remember` what a future session should know, and "
    "`feedback` when a memory helped or misled you. The project is found from your working "
    "directory; pass `project` only to use another."
)


def package_version() -> str:
    """memdeck's version as installed (`serverInfo.version`)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memdeck")
    except PackageNotFoundError:
        return "0"
