"""A check the concurrency and race tests share: a memory's history explains its confidence."""

from __future__ import annotations

from store import Store


def assert_history_explains_confidence(store: Store) -> None:
    """Each event starts from the confidence the one before it left, and the last one left the
    memory's confidence as it is: a write computed from a stale read would break that."""
    rows = store.db.execute_sql(
        "SELECT memory.id, memory.confidence, event.kind, event.confidence_before, event.confidence_after "
        "FROM memory JOIN event ON event.memory_id = memory.id ORDER BY memory.id, event.id").fetchall()
    last: dict[str, float] = {}
    final: dict[str, float] = {}
    for memory_id, confidence, kind, before, after in rows:
        final[memory_id] = confidence
        if before is not None and memory_id in last:
            assert abs(before - last[memory_id]) < 1e-9, (memory_id, kind, before, last[memory_id])
        if after is not None:
            last[memory_id] = after
    assert {m: round(c, 6) for m, c in final.items()} == {m: round(c, 6) for m, c in last.items()}
