"""Reinforcement and supersession on add: finding the memory a new text repeats (same project,
type and scope; the same or a similar enough text), reinforcing it, and marking a memory
superseded by its successor. Mixed into `Store`."""

from __future__ import annotations

import json
import re
from typing import Any

from store.backends.base import quote_fts_term
from store.engine.models import MemoryRow
from store.engine.records import AddResult, Memory
from store.engine.text import clean_list, content_hash, normalize_text


class Similarity:
    """Mixed into `Store` (uses `db`, `config`, `now`, `get`, `add` and `record_event` of the store)."""

    def find_similar(self, project_id: int, type: str, scope: str | None, content: str) -> tuple[MemoryRow, float] | None:
        """An active or pending memory of the same project, type and scope whose text is the same
        or similar enough (rapidfuzz token_sort_ratio at or above `reinforcement.similarity`)."""
        p = self.backend.param
        same_scope = "memory.scope IS NULL" if scope is None else f"memory.scope = {p}"
        scope_args = () if scope is None else (scope,)
        exact = self.db.execute_sql(
            f"SELECT id FROM memory WHERE project_id = {p} AND content_hash = {p} AND type = {p} "
            f"AND {same_scope} AND status IN ('active', 'pending') LIMIT 1",
            (project_id, content_hash(content), type) + scope_args,
        ).fetchone()
        if exact is not None:
            return MemoryRow.get_by_id(exact[0]), 100.0
        threshold = float(self.config.get("reinforcement.similarity"))
        if threshold > 100:
            return None
        # Similar text shares words: the full-text index proposes candidates, fuzz decides. Any
        # one word matches most of a large store, so candidates must hold every word of one of a
        # few groups: a text similar enough to reinforce keeps at least one group whole.
        words = sorted(set(re.findall(r"\w{3,}", content.lower())), key=len, reverse=True)[:12]
        if not words:
            return None
        groups = [words[i::max(1, len(words) // 4)] for i in range(max(1, len(words) // 4))]
        query = " OR ".join("(" + " AND ".join(quote_fts_term(w) for w in group) + ")"
                            for group in groups)
        match = self.backend.fts_match(query)
        rows = self.db.execute_sql(
            # The full-text match first (SQLite would otherwise walk every memory of the type and
            # probe the index for each). No ranking: BM25 costs more than comparing the few
            # candidates that pass the filter.
            f"SELECT memory.id, memory.content FROM {self.backend.fts_source(matches_first=True)} "
            f"WHERE {match.sql} AND memory.project_id = {p} AND memory.type = {p} AND {same_scope} "
            "AND memory.status IN ('active', 'pending') LIMIT 200",
            (*match.params, project_id, type) + scope_args,
        ).fetchall()
        from rapidfuzz import fuzz  # only adding needs it; `prime` and listings do not

        wanted = normalize_text(content)
        best: tuple[str, float] | None = None
        for memory_id, text in rows:
            score = fuzz.token_sort_ratio(wanted, normalize_text(text))
            if score >= threshold and (best is None or score > best[1]):
                best = (memory_id, score)
        if best is None:
            return None
        return MemoryRow.get_by_id(best[0]), best[1]

    def _reinforce(self, row: MemoryRow, incoming: float, tags: tuple[str, ...],
                   file_refs: tuple[str, ...], similarity: float, session_id: str | None,
                   actor: str, now: float) -> Memory:
        from store.engine.lifecycle import reinforced_confidence

        before = row.confidence
        after = reinforced_confidence(self.config, before, incoming)
        merged_tags = clean_list([*json.loads(row.tags), *tags])
        merged_refs = clean_list([*json.loads(row.file_refs), *file_refs])
        # Under the write lock, from the row just read: only the fields a reinforcement owns.
        (MemoryRow.update(confidence=after, updated_at=now, decayed_at=None,
                          tags=json.dumps(list(merged_tags), ensure_ascii=False),
                          file_refs=json.dumps(list(merged_refs), ensure_ascii=False),
                          version=MemoryRow.version + 1)
         .where(MemoryRow.id == row.id).execute())
        self.record_event(row.id, "reinforced", before=before, after=after, actor=actor,
                          session_id=session_id, at=now, detail={"similarity": round(similarity, 1)})
        return self.get(row.id)

    def _mark_superseded(self, old: Memory, new_id: str, actor: str, session_id: str | None,
                         note: str | None = None) -> None:
        """The old memory takes the supersede rule (`lifecycle.superseded_state`) and points at
        its successor."""
        from store.engine.lifecycle import superseded_state

        lowered, status = superseded_state(self.config, old.confidence, old.status)
        meta = {**old.meta, "superseded_by": new_id}
        now = self.now()
        (MemoryRow.update(confidence=lowered, status=status, updated_at=now,
                          status_changed_at=now if status != old.status else MemoryRow.status_changed_at,
                          meta=json.dumps(meta, ensure_ascii=False), version=MemoryRow.version + 1)
         .where(MemoryRow.id == old.id).execute())
        self.record_event(old.id, "superseded", before=old.confidence, after=lowered, actor=actor,
                          session_id=session_id,
                          detail={"by": new_id, "status": status, **({"note": note} if note else {})})

    def supersede(self, old_id: str, content: str, *, actor: str = "cli", **fields: Any) -> AddResult:
        """Store `content` as the memory that replaces `old_id` (an explicit contradiction)."""
        old = self.get(old_id)
        fields.setdefault("type", old.type)
        fields.setdefault("scope", old.scope)
        fields.setdefault("project", old.project)
        return self.add(content, supersedes=old_id, actor=actor, **fields)
