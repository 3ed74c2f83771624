"""Accents in full-text search mean the same on both back-ends: `café` finds `cafe` and the
reverse (SQLite: FTS5's `remove_diacritics 2`; PostgreSQL: the `unaccent` dictionary in the
store's text search configuration, schema migration 11)."""

from __future__ import annotations

import pytest

from store.browse.search import search

pytestmark = pytest.mark.both_backends


def test_an_accented_search_finds_the_unaccented_memory_and_the_reverse(store):
    plain = store.add("The cafe menu service caches prices for an hour", type="fact").memory.id
    accented = store.add("Le résumé du déploiement part chaque mardi à l'équipe", type="convention").memory.id
    # Typed with accents, found without them; typed without, found with them.
    assert [h.memory.id for h in search(store, "café", fuzzy=False)] == [plain]
    assert [h.memory.id for h in search(store, "resume deploiement", fuzzy=False)] == [accented]
    assert [h.memory.id for h in search(store, "equipe", fuzzy=False)] == [accented]
    # Upper case and a prefix as typed fold too.
    assert [h.memory.id for h in search(store, "RÉSUM", fuzzy=False)] == [accented]
    assert [h.memory.id for h in search(store, "CAFÉ MENU", fuzzy=False)] == [plain]


def test_an_edited_memory_is_found_by_its_unaccented_words(store):
    memory = store.add("Restart the worker after a config change", type="pattern").memory
    store.update(memory.id, memory, content="Restart the naïve worker after a config change")
    assert [h.memory.id for h in search(store, "naive worker", fuzzy=False)] == [memory.id]
