"""The workbench's share key (`S`, in the list and the inbox): the cursor's memory (or the
selection) copied to the team store, as `memdeck share` does (docs/team.md)."""

from __future__ import annotations

from typing import Sequence

from store.api import InvalidInput, StoreError


def share_in_worker(app, ids: Sequence[str], watch=None, wait: float = 0.0) -> str:
    """Share `ids` from the app's store to the team store its config names, on a worker thread;
    what was done, in one line. No team store, or one that cannot be reached, is refused.
    `watch`: the team store's live check (`tui.team_live`), told of the write, which reloads the
    screens itself, so that the check does not reload them again."""
    if watch is not None:
        watch.expect()
    try:
        return _share(app, ids)  # committed (or refused) when it returns
    finally:
        if watch is not None:
            watch.seen(wait)


def _share(app, ids: Sequence[str]) -> str:
    from store.api import Layers, share

    with Layers.open(app.store, file=False) as layers:
        team = layers.store("team")
        if team is None:
            problem = dict(layers.problems).get("team")
            if problem:
                raise StoreError(f"cannot share: {problem}")
            raise InvalidInput("no team store to share with: set team.db in your config (docs/team.md)")
        done = share(app.store, team, ids, actor="ui")
    waiting = sum(1 for d in done if d.status == "pending" and not d.already)
    new = sum(1 for d in done if not d.already)
    said = f"Shared {new} with the team" if new else "Already in the team store"
    if waiting:
        said += f"; {waiting} wait{'s' if waiting == 1 else ''} for a reviewer"
    return said
