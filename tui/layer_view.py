"""Which layers the workbench's main list shows (docs/team.md, docs/workbench.md).

By default every layer together: your own store, the team store (setting `team.db`) and the
repository's team file (`team.file`), merged in the list's sort, each row marked with its layer
(the marks show only when more than one layer is configured: with one store nothing changes).
`L` cycles a filter: all → own → team → file → all. Memories of the team and file layers are
read-only here. The layers are opened once, on a worker thread, after the first screen is drawn
(the first listing reads your own store only).

A merged listing is ordered like `store.browse.search.SORTS` in each store, then merged in
Python on the same keys; a search's full-text hits of each layer are interleaved rank by rank
(BM25 scores of different stores do not compare). A memory in two layers (shared from your own
store, same id) is shown once: your own copy, the one you edit.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, Sequence

from store.api import (
    paging, Counts, Listing, ListQuery, Loaded, count_memories, Memory, SORT_COLUMNS, listing_keys,
)

ALL = "all"
# The orders of `store.browse.search.SORTS` on the columns a merged listing reads with each id
# (`SORT_COLUMNS`): (column, descending) pairs, most significant first.
_ORDER = {
    "updated": (("updated_at", True), ("id", True)),
    "created": (("created_at", True), ("id", True)),
    "confidence": (("confidence", True), ("id", True)),
    "used": (("use_count", True), ("id", True)),
    "type": (("type", False), ("confidence", True), ("id", True)),
    "title": (("title", False), ("id", False)),
    "hat": (("hat", False), ("confidence", True), ("id", True)),
    "scope": (("scope", False), ("confidence", True), ("id", True)),
    "status": (("status", False), ("confidence", True), ("id", True)),
}


class LayerView:
    """The app's layer filter (`name`: "all", or one layer) and the open layers
    (`store.layers.layers.Layers`, None until `open`)."""

    def __init__(self, own) -> None:
        self.own = own
        self.name = ALL
        self.layers: Any = None
        self._lock = threading.Lock()
        # The layer of each id a merged listing showed that is not your own (team or file):
        # what the page reads and the read-only checks go by.
        self._origin: dict[str, str] = {}

    def open(self) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
        """(the layers there are, the configured ones that cannot be read); on a worker thread."""
        from store.api import Layers

        with self._lock:
            if self.layers is None:
                self.layers = Layers.open(self.own)
            return self.layers.names, list(self.layers.problems)

    @property
    def names(self) -> tuple[str, ...]:
        return self.layers.names if self.layers is not None else ("own",)

    @property
    def several(self) -> bool:
        """More than one layer is configured and read: the list marks each row's layer."""
        return len(self.names) > 1

    @property
    def merged(self) -> bool:
        return self.name == ALL and self.several

    def next(self, names: Sequence[str]) -> str:
        """The filter after this one: all → own → team → file → all (the layers there are)."""
        cycle = (ALL, *names)
        return cycle[(cycle.index(self.name) + 1) % len(cycle)] if self.name in cycle else ALL

    def store_of(self, layer: str):
        if layer == "own" or self.layers is None:
            return self.own
        return self.layers.store(layer) or self.own

    @property
    def store(self):
        """The store a one-layer list reads (your own while every layer is shown)."""
        return self.own if self.name == ALL else self.store_of(self.name)

    @property
    def read_only(self) -> bool:
        """The list shows one layer that is not your own."""
        return self.name not in (ALL, "own")

    def layer_of(self, memory_id: str) -> str:
        """The layer the list shows `memory_id` from."""
        if self.name != ALL:
            return self.name
        with self._lock:
            return self._origin.get(memory_id, "own")

    def not_own(self, ids: Sequence[str]) -> dict[str, str]:
        """Of `ids`, those the list shows from a layer that is not your own, with their layer."""
        return {i: layer for i in ids if (layer := self.layer_of(i)) != "own"}

    def _chosen(self) -> list[tuple[str, Any]]:
        """The layers the list shows; a layer without this project has nothing to show, and is
        not read (a read would add the project's row to the team store)."""
        if self.layers is None:
            return [("own", self.own)]
        for _, store in self.layers.others:  # the project the workbench shows now (`p`)
            if store.project != self.own.project:
                store.project = self.own.project
        return [(n, s) for n, s in self.layers.each()
                if (self.name == ALL or n == self.name) and (n == "own" or _has_project(s))]

    # -- reading, on worker threads ---------------------------------------------------------------

    def fetch(self, ids: Sequence[str]) -> list[Memory]:
        if not self.merged:
            memories = paging.fetch(self.store, ids)
            return memories if self.name in (ALL, "own") else [replace(m, layer=self.name) for m in memories]
        by_layer: dict[str, list[str]] = {}
        for memory_id in ids:
            by_layer.setdefault(self.layer_of(memory_id), []).append(memory_id)
        found: dict[str, Memory] = {}
        for layer, wanted in by_layer.items():
            found.update((m.id, replace(m, layer=layer)) for m in paging.fetch(self.store_of(layer), wanted))
        return [found[i] for i in ids if i in found]

    def read_head(self, query: ListQuery, *, with_counts: bool) -> Loaded:
        """`paging.read_head` on the chosen layer (its first page marked with the layer), or the
        head of every layer merged."""
        if self.merged:
            return self._merged_head(query, with_counts)
        store, name = self.store, self.name
        if not self._chosen():  # a layer without this project
            return Loaded(Listing(query, ()), self.counts() if with_counts else None, ())
        loaded = paging.read_head(store, query, with_counts=with_counts)
        if name not in (ALL, "own") and loaded.first_page is not None:
            loaded = replace(loaded, first_page=tuple(replace(m, layer=name) for m in loaded.first_page))
        return loaded

    def read_rest(self, first: Listing) -> Loaded:
        """The whole listing whose head `first` is, and the counts."""
        if self.merged:
            whole = first if first.complete else self._merged(first.query, None)
            return Loaded(whole, self.counts())
        store = self.store
        whole = first if first.complete or not self._chosen() else paging.listing(store, first.query)
        return Loaded(whole, self.counts())

    def counts(self) -> Counts:
        """The project's counts: with every layer shown, the total is the memories they hold together (pending
        and trash are your own store's: the inbox and the trash are yours)."""
        own = paging.counts(self.own)
        if not self.merged:
            if self.name in (ALL, "own"):
                return own
            return paging.counts(self.store) if self._chosen() else replace(own, total=0, pending=0, trash=0)
        # A memory in two layers (yours, shared to the team's) is listed once, so counted once.
        shown: set[str] = set()
        for _, store in self._chosen():
            shown.update(paging.listing(store, ListQuery()).ids)
        return replace(own, total=len(shown))

    def _merged_head(self, query: ListQuery, with_counts: bool) -> Loaded:
        first = self._merged(query, paging.PAGE_SIZE)
        return Loaded(first, self.counts() if with_counts else None,
                      tuple(self.fetch(first.ids[:paging.HEAD_ROWS])))

    def _merged(self, query: ListQuery, limit: int | None) -> Listing:
        """Every chosen layer's listing of `query` merged (its first `limit` ids and the size of
        the whole, or all of it); a memory in two layers once, from the first."""
        parts = [(name, self._part(store, query, limit)) for name, store in self._chosen()]
        if query.searching:
            ranked = [(name, row) for rank in range(max((len(p[0]) for _, p in parts), default=0))
                      for name, (rows, _, _) in parts if rank < len(rows) for row in [rows[rank]]]
        else:
            ranked = [(name, row) for name, (rows, _, _) in parts for row in rows]
            for column, descending in reversed(_ORDER[query.sort]):
                index = ("id", *SORT_COLUMNS).index(column)
                ranked.sort(key=lambda item: _key(item[1][index], column), reverse=descending)
        ids: list[str] = []
        origin: dict[str, str] = {}
        for name, row in ranked:
            if row[0] not in origin:
                origin[row[0]] = name
                ids.append(row[0])
        with self._lock:
            for memory_id, name in origin.items():
                if name == "own":
                    self._origin.pop(memory_id, None)
                else:
                    self._origin[memory_id] = name
        whole = all(size is None for _, (_, size, _) in parts)
        size = None if whole else sum(len(rows) if size is None else size for _, (rows, size, _) in parts)
        if limit is not None:
            ids = ids[:limit]
        if size is not None and size <= len(ids):
            size = None
        return Listing(query, tuple(ids), tuple(paging.typed_terms(query.text)) if query.searching else (),
                       size=size, more=any(more for _, (_, _, more) in parts))

    @staticmethod
    def _part(store, query: ListQuery, limit: int | None) -> tuple[list[tuple], int | None, bool]:
        """One layer's rows of a listing (a search's: `(id,)` in rank order; else the id and the
        sort's columns), the size of the whole when these are its head, and whether more."""
        if query.searching:
            found = paging.head(store, query, limit) if limit is not None else paging.listing(store, query)
            if limit is not None and paging.needs_fuzzy(found):
                found = paging.listing(store, query)
            size = found.size if found.size is not None and found.size > len(found.ids) else None
            return [(i,) for i in found.ids], size, found.more
        # One row past the head: only a listing longer than its head is counted.
        rows = listing_keys(store, query.filter, query.sort, None if limit is None else limit + 1)
        if limit is not None and len(rows) > limit:
            return rows[:limit], count_memories(store, query.filter), False
        return rows, None, False

    def close(self) -> None:
        with self._lock:
            if self.layers is not None:
                self.layers.close()
                self.layers = None


def _has_project(store) -> bool:
    from store.api import NotFound

    try:
        store.project_id(create=False)
    except NotFound:
        return False
    return True


def _key(value, column: str):
    if column == "title":
        return (value or "").casefold()
    if value is None:  # no hat, no scope: first, as SQLite sorts them
        return ""
    return value
