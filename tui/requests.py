"""Numbering a screen's requests of one kind, so that only the newest one's answer is shown.

A thread worker cannot be stopped once it runs: `exclusive=True` cancels the older worker of a
group, but one already reading still finishes and posts its answer, which on a loaded machine can
arrive after the newer one's (a session list's counts from before a write, shown over the counts
after it). So the request's number travels with the worker and back in its message, and the
handler drops an answer whose number is not the latest (docs/development.md, "Workers")."""

from __future__ import annotations


class Requests:
    """The requests of one kind, numbered on the UI thread as they are made."""

    def __init__(self) -> None:
        self.latest = 0

    def new(self) -> int:
        """A new request's number: answers to every earlier one are stale from now on."""
        self.latest += 1
        return self.latest

    def is_latest(self, asked: int) -> bool:
        return asked == self.latest
