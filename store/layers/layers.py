"""Memory in layers: the person's own store, the team store (setting `team.db`) and the
repository's read-only team file (setting `team.file`), read together (docs/team.md).

`Layers` holds the open stores and is the one read path over them: `get`, `list`, `count`,
`search` and `candidates` (the prime's ranked candidates) read each layer and merge, every
`Memory` carrying the layer it came from (`Memory.layer`). Each layer is ranked in its own store,
with that store's statistics, so a layer never changes how another's memories score. A memory
in two layers (shared from the own store to the team's, same id) is shown once: the own copy,
the one its owner edits; prime takes the first copy still in, in the same order.
`listing_keys` gives the workbench one layer's ids and sort keys, for the listing it merges
(`tui.layer_view`).

Writes never go through here: add, captured candidates and an agent's remember go to the own
store; `memdeck share` copies to the team store (`store.interop.sharing`); feedback on a team
memory (its use by a prime, an agent's verdict) goes to the team store
(`store.layers.feedback`).

A team URL from a repository's `.memdeck.yml` is a stranger's: only a PostgreSQL URL, and none
whose parameters name files on this machine (`checked_team_url`). The team file must lie inside
the project root.
"""

from __future__ import annotations

import builtins  # `Layers.list` hides the built-in inside the class
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from store.backends import layer_rows
from store.engine.config import PROJECT_CONFIG_NAME
from store.engine.errors import ConfigError, MemdeckError, NotFound
from store.engine.records import Event, Memory
from store.layers.prime import precedence

if TYPE_CHECKING:
    from store.browse.search import MemoryFilter, SearchHit
    from store.engine.core import Store
    from store.engine.records import InjectionContext

LAYER_NAMES = ("own", "team", "file")
# The columns a listing of several layers is ordered by (those of `store.browse.search.SORTS`),
# read with each id by `listing_keys`: the layers' rows are merged in Python on them.
SORT_COLUMNS = ("updated_at", "created_at", "confidence", "use_count", "type", "title", "hat", "scope", "status")
# The list sorts of `store.browse.search.SORTS`, in Python: (key, descending).
_SORT_KEYS = {
    "updated": (lambda m: (m.updated_at, m.id), True),
    "created": (lambda m: (m.created_at, m.id), True),
    "confidence": (lambda m: (m.confidence, m.id), True),
    "used": (lambda m: (m.use_count, m.id), True),
    "type": (lambda m: (m.type, -m.confidence), False),
    "title": (lambda m: (m.title.casefold(), m.id), False),
    "hat": (lambda m: (m.hat or "", -m.confidence), False),
    "scope": (lambda m: (m.scope or "", -m.confidence), False),
    "status": (lambda m: (m.status, -m.confidence), False),
}


def from_project_file(config, key: str) -> bool:
    """Whether the setting `key` came from a repository's `.memdeck.yml` (a stranger's file)."""
    return Path(config.source(key)).name == PROJECT_CONFIG_NAME


def checked_team_url(config) -> str | None:
    """The team store's URL (setting `team.db`), or None when none is set. A value that is no
    PostgreSQL URL is refused; from a repository's `.memdeck.yml`, so is one whose parameters
    could name a file on this machine (passfile, sslkey, service, a socket folder...)."""
    from store.backends.postgres import team_url_problem

    url = str(config.team.db).strip()
    if not url:
        return None
    from_repository = from_project_file(config, "team.db")
    problem = team_url_problem(url, from_repository=from_repository)
    if problem is not None:
        raise ConfigError(f"{config.source('team.db')}: team.db {problem}")
    if from_repository:
        from store.backends.postgres import url_server

        server = url_server(url)
        allowed = {name if ":" in name else f"{name}:5432"
                   for name in str(config.team.servers).replace(",", " ").lower().split()}
        if server not in allowed:
            raise ConfigError(f"{config.source('team.db')}: team.db names the server {server}, which your own "
                              "config does not allow (team.servers); not connected")
    return url


def team_file_location(config, project_root: Path | None) -> Path | None:
    """Where the team file (setting `team.file`) is, inside the project root, whether it exists
    or not; a path that leaves the root (`..`, an absolute path, a link out of it) is refused."""
    name = str(config.team.file).strip()
    if not name or project_root is None:
        return None
    root = project_root.resolve()
    path = (root / name).resolve()
    if Path(name).is_absolute() or not path.is_relative_to(root):
        raise ConfigError(f"{config.source('team.file')}: team.file {name!r} is outside the project "
                          f"{root}; it must be a file in the repository")
    return path


def team_file_path(config, project_root: Path | None) -> Path | None:
    """The team file when it exists (`team_file_location`)."""
    path = team_file_location(config, project_root)
    return path if path is not None and path.is_file() else None


@dataclass
class Layers:
    """The own store and the layers read beside it (each a `Store`, by name)."""

    own: "Store"
    others: list[tuple[str, "Store"]] = field(default_factory=list)
    # Layers that are configured but could not be read: (name, the one-line reason).
    problems: list[tuple[str, str]] = field(default_factory=list)
    # Layers a prime's use could not be recorded in: (name, the one-line reason)
    # (store.layers.feedback.record_use).
    unrecorded: list[tuple[str, str]] = field(default_factory=list)
    # Layers that failed while a prime read them (a statement past its timeout): (name, reason).
    dropped: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def open(cls, own: "Store", *, team: bool = True, file: bool = True) -> "Layers":
        """The layers the own store's config names. One that cannot be opened is left out, with
        its reason in `problems` (a team server that is down never stops a prime or a hook)."""
        from store.engine.database import bind

        layers = cls(own)
        if team:
            try:
                url = checked_team_url(own.config)
                if url is not None and not _same_store(own, url):
                    layers.others.append(("team", _readable(own, url)))
            except MemdeckError as exc:
                layers.problems.append(("team", str(exc)))
        if file:
            try:
                path = team_file_path(own.config, own.project_root)
                if path is not None:
                    from store.layers.file_layer import file_store

                    layers.others.append(("file", file_store(own, path)))
            except MemdeckError as exc:
                layers.problems.append(("file", str(exc)))
            except OSError as exc:
                layers.problems.append(("file", f"{exc.filename}: cannot read: {exc.strerror}"))
        bind(own.db)  # the models write to the own store: every other layer is read in plain SQL
        return layers

    def close(self) -> None:
        for _, store in self.others:
            store.close()
        self.others.clear()

    def __enter__(self) -> "Layers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def each(self) -> Iterator[tuple[str, "Store"]]:
        yield "own", self.own
        yield from self.others

    def store(self, name: str) -> "Store | None":
        return dict(self.each()).get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.each())

    # -- reading ------------------------------------------------------------------------------------

    def locate(self, memory_id: str) -> tuple[str, "Store", Memory]:
        """The first layer holding `memory_id`, its store and the memory (marked with the layer)."""
        for name, store in sorted(self.each(), key=lambda each: precedence(each[0])):
            try:
                return name, store, replace(store.get(memory_id), layer=name)
            except NotFound:
                continue
        raise NotFound(f"no memory with id {memory_id!r}" + (f" in the layers {', '.join(self.names)}"
                                                              if self.others else ""))

    def get(self, memory_id: str) -> Memory:
        return self.locate(memory_id)[2]

    def events(self, memory_id: str) -> list[Event]:
        _, store, _ = self.locate(memory_id)
        return store.events(memory_id)

    def list(self, flt: "MemoryFilter", *, sort: str = "updated", limit: int | None = None,
             layers: tuple[str, ...] = ()) -> builtins.list[Memory]:
        """`store.browse.search.list_memories` over every layer (or those named), merged in the
        sort's order; a memory in two layers once."""
        from store.browse.search import list_memories

        key, descending = _SORT_KEYS[sort] if sort in _SORT_KEYS else (None, False)
        found = [replace(m, layer=name) for name, store in self._chosen(layers)
                 for m in list_memories(store, flt, sort=sort, limit=limit)]
        merged = _once(found)
        if len(self._chosen(layers)) > 1 and key is not None:
            merged.sort(key=key, reverse=descending)
        return merged[:limit] if limit is not None else merged

    def count(self, flt: "MemoryFilter", layers: tuple[str, ...] = ()) -> int:
        from store.browse.search import count_memories

        return sum(count_memories(store, flt) for _, store in self._chosen(layers))

    def search(self, text: str, flt: "MemoryFilter", *, limit: int = 50, fuzzy: bool = True,
               layers: tuple[str, ...] = ()) -> builtins.list["SearchHit"]:
        """`store.browse.search.search` over every layer: full-text hits first, best first, then
        fuzzy title matches; a memory in two layers once."""
        from store.browse.search import search

        hits = [replace(h, memory=replace(h.memory, layer=name)) for name, store in self._chosen(layers)
                for h in search(store, text, flt, limit=limit, fuzzy=fuzzy)]
        hits.sort(key=lambda h: (h.match != "text", -h.score))
        return _once(hits, lambda h: h.memory)[:limit]

    def candidates(self, store: "Store", context: "InjectionContext", save: bool):
        """The prime's ranked candidates over every layer (`store.retrieval.injection.candidates`
        in each layer's store), merged best first; a memory in two layers is in once."""
        from store.layers.prime import merged_candidates

        return merged_candidates(self, context, save)

    def record_use(self, used: Sequence[Memory], *, session_id: str | None) -> None:
        """The use of injected memories of the other layers, in their stores
        (`store.layers.feedback.record_use`): the prime, below this floor, calls it."""
        from store.layers.feedback import record_use

        record_use(self, used, session_id=session_id)

    def keep_listing(self, memory_id: str, key: str, task: str, session_id: str | None) -> bool:
        """What the agent did with a listed memory (`store.engine.openings`: `opened`, `unopened`)
        for `task`: on an own memory in its meta, on another layer's in the own store
        (`store.layers.judgments`), as a verdict is. False: no layer holds it any more."""
        from store.engine.feedback import keep_judgment
        from store.layers.judgments import keep

        try:
            name, _, memory = self.locate(memory_id)
        except NotFound:
            return False
        if name == "own":
            keep_judgment(self.own, memory, key, task, None, session_id)
        else:
            keep(self.own, memory, key, task, None, session_id)
        return True

    def _chosen(self, layers: tuple[str, ...]) -> builtins.list[tuple[str, "Store"]]:
        return [(name, store) for name, store in self.each() if not layers or name in layers]


def listing_keys(store: "Store", flt: "MemoryFilter", sort: str, limit: int | None) -> builtins.list[tuple]:
    """(id, then `SORT_COLUMNS`) of the memories of one layer's `store` that `flt` selects, in the
    order of the list sort `sort` (`store.browse.search.SORTS`), the first `limit` (all with None):
    what the workbench merges a listing of several layers by (`tui.layer_view`)."""
    from store.browse.search import selection

    return layer_rows.listing_keys(store.backend, SORT_COLUMNS, selection(store, flt), sort, limit)


def _once(items: list, memory_of=lambda m: m) -> list:
    """Each memory once, where its first copy was, from the layer that comes first
    (`store.layers.prime.PRECEDENCE`: own, file, team)."""
    best: dict[str, object] = {}
    for item in items:
        memory = memory_of(item)
        if memory.id not in best or precedence(memory.layer) < precedence(memory_of(best[memory.id]).layer):
            best[memory.id] = item
    kept, seen = [], set()
    for item in items:
        memory_id = memory_of(item).id
        if memory_id not in seen:
            seen.add(memory_id)
            kept.append(best[memory_id])
    return kept


def _same_store(own: "Store", url: str) -> bool:
    from store.backends.choice import same_store

    return same_store(own.path, url)


def _readable(own: "Store", url: str) -> "Store":
    """The team store at `url`, once a first read shows this database user may read it; else
    (closed) its refusal (a user without a role in a team store) or trouble, as one line."""
    import peewee

    from store.backends.postgres_roles import refusal
    from store.engine.errors import StoreError

    store = None
    try:
        store = _open_beside(own, url)
        layer_rows.first_read(store.backend)
    except peewee.DatabaseError as exc:
        problem = refusal(exc, store.db if store is not None else None)
        if store is not None:
            store.close()
        raise (problem or StoreError(" ".join(str(exc).split()) or type(exc).__name__)) from None
    return store


def _open_beside(own: "Store", url: str) -> "Store":
    """A layer's store, opened for the own store's project, config and clock, without binding
    the models to it (they stay the own store's, on every thread)."""
    from store.engine.core import Store
    from store.backends.opening import open_backend

    from store.backends.postgres import with_team_timeouts

    backend, _ = open_backend(with_team_timeouts(url))
    store = Store(backend, url, own.config, own.clock, own.project, own.project_root)
    store.author = backend.database_user() or store.author
    return store
