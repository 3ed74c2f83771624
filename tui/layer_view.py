"""Which layer the workbench's main list shows (docs/team.md): your own store by default; `L`
steps to the team store (setting `team.db`) and the repository's team file (`team.file`), each
read-only here, and back. The layers are opened once, on a worker thread, when `L` is first
pressed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from store.browse import paging
from store.engine.records import Memory


class LayerView:
    """The app's chosen layer and the open layers (`store.engine.layers.Layers`)."""

    def __init__(self, own) -> None:
        self.own = own
        self.name = "own"
        self.layers: Any = None

    def open(self) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
        """(the layers there are, the configured ones that cannot be read); on a worker thread."""
        from store.engine.layers import Layers

        if self.layers is None:
            self.layers = Layers.open(self.own)
        return self.layers.names, list(self.layers.problems)

    def next(self, names: Sequence[str]) -> str:
        return names[(names.index(self.name) + 1) % len(names)] if self.name in names else "own"

    @property
    def store(self):
        """The store the main list reads: the own store, or the chosen layer's."""
        if self.name == "own" or self.layers is None:
            return self.own
        return self.layers.store(self.name) or self.own

    @property
    def read_only(self) -> bool:
        return self.name != "own"

    def fetch(self, ids: Sequence[str]) -> list[Memory]:
        memories = paging.fetch(self.store, ids)
        return memories if self.name == "own" else [replace(m, layer=self.name) for m in memories]

    def read_head(self, query, *, with_counts: bool):
        """`paging.read_head` on the chosen layer, its first page marked with the layer."""
        store, name = self.store, self.name
        loaded = paging.read_head(store, query, with_counts=with_counts)
        if name != "own" and loaded.first_page is not None:
            loaded = replace(loaded, first_page=tuple(replace(m, layer=name) for m in loaded.first_page))
        return loaded

    def close(self) -> None:
        if self.layers is not None:
            self.layers.close()
            self.layers = None
