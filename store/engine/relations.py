"""How a memory bears on the others (`store.relations`): the one a new text repeats, updates or
contradicts (same project, type and scope; decided by `store.engine.sameness`), for `Store.add`
to reinforce or propose; a memory superseded by its successor; the proposals a person decides."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from store.engine.ports import wired
from store.engine.text import quote_fts_term
from store.engine.confidence import reinforced_confidence, superseded_state
from store.engine.limits import fit_list
from store.engine.models import MemoryRow
from store.engine.records import AddResult, Memory
from store.engine.text import clean_list, content_hash, normalize_text

if TYPE_CHECKING:
    from store.engine.keeper import Keeper
    from store.engine.sameness import Sameness


# Which decision wins when several memories bear on a new text: repeating one beats the rest,
# and a contradiction is the one a person must see.
_PRIORITY = {"same": 3, "contradiction": 2, "update": 1}
RELATED_WORDS = 12  # the longest words of a new text, for the candidate query
RELATED_GROUPS = 4  # dealt into this many groups (of three): a candidate holds one group whole
RELATED_LIMIT = 60  # candidates read at most
COMPARED = 6  # of those, the ones sharing the most words are decided (`sameness.compare`)
_POLARITY_WORDS = frozenset({"never", "always", "not", "don't", "must", "should", "avoid", "without"})


class Relations:
    """A store's relations between memories: `store.relations`."""

    def __init__(self, store: "Keeper") -> None:
        self.store = store

    def find_similar(self, project_id: int, type: str, scope: str | None, content: str) -> tuple[Memory, float] | None:
        """An active or pending memory of the same project, type and scope that `content` states
        again (`decide` says "same"), with its similarity (rapidfuzz token_sort_ratio)."""
        found = self.decide(project_id, type, scope, content)
        if found is None or found[1].kind != "same":
            return None
        return found[0], float(found[1].signals.get("ratio", 100.0))

    def decide(self, project_id: int, type: str, scope: str | None,
               content: str) -> tuple[Memory, Sameness] | None:
        """The memory of the same project, type and scope (active or pending) that `content`
        bears on most, with the decision (`store.engine.sameness`): the same statement first
        (the closest), then a contradiction, then an update; None when every candidate is distinct.
        With `reinforcement.similarity` above 100, nothing is compared (every add is new)."""
        # Here, not at the top: a process that only reads (a prime in a hook) never loads it.
        from store.engine.sameness import Sameness, compare

        exact = self.store.backend.memory_table.same_text(project_id, content_hash(content), type, scope)
        if exact is not None:
            return self.store.get(exact), Sameness("same", True, 1.0, {"ratio": 100.0})
        if float(self.store.config.reinforcement.similarity) > 100:
            return None
        rows = self._related_rows(project_id, type, scope, content)
        if not rows:
            return None
        thresholds = self.store.config.sameness
        best: tuple[tuple[int, float, str, float], str, Sameness] | None = None
        for memory_id, text in closest(content, rows, COMPARED):
            verdict = compare(text, content, thresholds=thresholds)
            if verdict.kind == "distinct":
                continue
            # Among updates as close as each other, the newest: a value that changed again updates its
            # latest statement, so successive statements form a chain (ids sort by creation time).
            newest = memory_id if verdict.kind == "update" else ""
            key = (_PRIORITY[verdict.kind], round(verdict.overlap, 2), newest,
                   verdict.overlap + float(verdict.signals.get("ratio", 100)) / 1000)
            if best is None or key > best[0]:
                best = (key, memory_id, verdict)
        if best is None:
            return None
        _, memory_id, verdict = best
        if verdict.kind == "same":
            # The semantic signal, where the extra is installed: it can only send a "same" to review.
            texts = dict(rows)
            cosine = semantic_cosine(texts[memory_id], content)
            if cosine is not None:
                verdict = compare(texts[memory_id], content, thresholds=thresholds, semantic=cosine)
        return self.store.get(memory_id), verdict

    def _related_rows(self, project_id: int, type: str, scope: str | None, content: str) -> list[tuple[str, str]]:
        """Candidates sharing words with `content`: the full-text index proposes memories that
        hold every word of one of `RELATED_GROUPS` groups made of its longest words (dealt out in
        turn). A text that states the same, updates or contradicts `content` shares most of its
        subject: changing up to `RELATED_GROUPS - 1` of those words leaves a group whole. Any one
        word would match most of a large store."""
        words = [w for w in sorted(set(re.findall(r"\w{3,}", content.lower())), key=lambda w: (-len(w), w))
                 if w not in _POLARITY_WORDS][:RELATED_WORDS]
        if not words:
            return []
        step = max(1, min(RELATED_GROUPS, len(words) // 2))
        groups = [words[i::step] for i in range(step)]
        query = " OR ".join("(" + " AND ".join(quote_fts_term(w) for w in group) + ")" for group in groups)
        return self.store.backend.memory_table.related(project_id, type, scope, query, RELATED_LIMIT)

    def reinforce(self, row: Memory, incoming: float, tags: tuple[str, ...],
                  file_refs: tuple[str, ...], verdict: Sameness, text: str, session_id: str | None,
                  actor: str, now: float) -> Memory:
        """Only for the same statement. The event keeps the new wording when it differs, so a
        reinforcement never drops what was written."""
        before = row.confidence
        after = reinforced_confidence(self.store.config, before, incoming)
        # Within the limits an edit is held to (`store.engine.limits`): a memory reinforced many
        # times keeps its first tags and refs, so it stays editable; the event keeps the new text.
        merged_tags = fit_list("tags", clean_list([*row.tags, *tags]))
        merged_refs = fit_list("file_refs", clean_list([*row.file_refs, *file_refs]))
        # Under the write lock, from the row just read: only the fields a reinforcement owns.
        (MemoryRow.update(confidence=after, updated_at=now, decayed_at=None,
                          tags=json.dumps(list(merged_tags), ensure_ascii=False),
                          file_refs=json.dumps(list(merged_refs), ensure_ascii=False),
                          version=MemoryRow.version + 1)
         .where(MemoryRow.id == row.id).execute())
        from rapidfuzz import fuzz  # only adding needs it; `prime` and listings do not

        similarity = fuzz.token_sort_ratio(normalize_text(text), normalize_text(row.content))
        detail: dict[str, Any] = {"similarity": round(similarity, 1)}
        if content_hash(text) != content_hash(row.content):
            detail["text"] = text
            detail["why"] = verdict.explain()
        self.store.record_event(row.id, "reinforced", before=before, after=after, actor=actor,
                          session_id=session_id, at=now, detail=detail)
        return self.store.get(row.id)

    def route(self, decision: tuple[Memory, Sameness], status: str,
              meta: dict[str, Any] | None) -> tuple[str | None, str, dict[str, Any] | None]:
        """Where a new text that updates or contradicts a memory goes: (the memory it supersedes
        or None, its status, its meta). A sure update of an active memory by an active one
        supersedes it (unless `sameness.updates` is `propose`); anything else waits in the inbox
        (status pending) as a proposal naming the other memory."""
        row, verdict = decision
        if (verdict.kind == "update" and verdict.sure and status == "active"
                and self.store.config.sameness.updates == "supersede"):
            return row.id, status, meta
        return None, "pending", {**(meta or {}), "proposal": proposal_record(row.id, verdict, self.store.now())}

    def record_proposal(self, memory_id: str, decision: tuple[Memory, Sameness], actor: str,
                         session_id: str | None, at: float, chain: list[str] | None = None) -> None:
        """A `proposed` event in both memories' histories (of a chain: in every one's)."""
        row, verdict = decision
        why = verdict.explain()
        extra = {"chain": chain} if chain else {}
        self.store.record_event(memory_id, "proposed", before=None, after=None, actor=actor, session_id=session_id,
                          at=at, detail={"kind": verdict.kind, "other": row.id, "why": why, **extra})
        for older in [row.id, *(c for c in chain or () if c not in (row.id, memory_id))]:
            self.store.record_event(older, "proposed", before=None, after=None, actor=actor, session_id=session_id,
                                    at=at, detail={"kind": verdict.kind, "by": memory_id, "why": why, **extra})

    def propose(self, memory_id: str, other_id: str, verdict: Sameness, *, actor: str = "consolidate",
                expected_version: int | None = None, chain: list[str] | None = None) -> bool:
        """Put a proposal on an existing memory (consolidation): a compare-and-set of its meta at
        the version read (`expected_version`, else as it is now), with a `proposed` event in both
        histories. `chain`: the ids of a chain of updates this memory ends, oldest first (the
        proposal names them all, and each history records it). False when the memory changed
        meanwhile or already holds a proposal."""
        with self.store.db.atomic():
            memory = self.store.get(memory_id)
            if memory.meta.get("proposal") or (expected_version is not None and memory.version != expected_version):
                return False
            meta = {**memory.meta, "proposal": proposal_record(other_id, verdict, self.store.now(), chain)}
            written = (MemoryRow.update(meta=json.dumps(meta, ensure_ascii=False), version=MemoryRow.version + 1)
                       .where((MemoryRow.id == memory_id) & (MemoryRow.version == memory.version)).execute())
            if written != 1:
                return False
            self.record_proposal(memory_id, (self.store.get(other_id), verdict), actor, None, self.store.now(), chain)
        return True

    def proposals(self, project: str | None = None) -> list[tuple[Memory, Memory | None]]:
        """The open proposals of a project: each memory holding one (outside the trash), with
        the other memory (None if it was purged since), oldest first."""
        rows = (MemoryRow.select(MemoryRow.id)
                .where((MemoryRow.project == self.store.project_id(project)) & (MemoryRow.status != "deleted")
                       & (MemoryRow.meta.contains('"proposal"')))
                .order_by(MemoryRow.created_at, MemoryRow.id).tuples())
        found = []
        for (memory_id,) in rows:
            memory = self.store.get(memory_id)
            proposal = memory.meta.get("proposal")
            if not isinstance(proposal, dict):
                continue
            other = self.store.found([str(proposal.get("other"))]).get(str(proposal.get("other")))
            found.append((memory, other))
        return found

    def mark_superseded(self, old: Memory, new_id: str, actor: str, session_id: str | None,
                        note: str | None = None) -> None:
        """The old memory takes the supersede rule (`confidence.superseded_state`) and points at
        its successor."""
        lowered, status = superseded_state(self.store.config, old.confidence, old.status)
        meta = {**old.meta, "superseded_by": new_id}
        now = self.store.now()
        (MemoryRow.update(confidence=lowered, status=status, updated_at=now,
                          status_changed_at=now if status != old.status else MemoryRow.status_changed_at,
                          meta=json.dumps(meta, ensure_ascii=False), version=MemoryRow.version + 1)
         .where(MemoryRow.id == old.id).execute())
        self.store.record_event(old.id, "superseded", before=old.confidence, after=lowered, actor=actor,
                          session_id=session_id,
                          detail={"by": new_id, "status": status, **({"note": note} if note else {})})

    def supersede(self, old_id: str, content: str, *, actor: str = "cli", **fields: Any) -> AddResult:
        """Store `content` as the memory that replaces `old_id` (an explicit contradiction)."""
        old = self.store.get(old_id)
        fields.setdefault("type", old.type)
        fields.setdefault("scope", old.scope)
        fields.setdefault("project", old.project)
        return self.store.add(content, supersedes=old_id, actor=actor, **fields)


def proposal_record(other_id: str, verdict: Sameness, at: float, chain: list[str] | None = None) -> dict[str, Any]:
    """What a memory's meta holds while a person has not decided: the other memory, the kind of
    relation, how sure, and the signals behind it; for a chain of updates, its memories' ids,
    oldest first (this memory last)."""
    record = {"kind": verdict.kind, "other": other_id, "sure": verdict.sure, "why": verdict.explain(),
              "signals": verdict.signals, "at": at}
    if chain:
        record["chain"] = list(chain)
    return record


def decided_summary(decision: tuple[Memory, Sameness] | None, superseded: bool) -> dict[str, Any] | None:
    """`AddResult.decided`: what the decision said, for the CLI, MCP and ingest to report."""
    if decision is None:
        return None
    row, verdict = decision
    return {"kind": verdict.kind, "sure": verdict.sure, "other": row.id, "why": verdict.explain(),
            "superseded": superseded}


def closest(content: str, rows: list[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    """The `limit` rows whose text shares the largest part of its words with `content` (a cheap
    first cut before the decision reads each text closely)."""
    if len(rows) <= limit:
        return rows
    mine = set(re.findall(r"\w+", content.lower()))

    def share(row: tuple[str, str]) -> float:
        theirs = set(re.findall(r"\w+", row[1].lower()))
        return len(mine & theirs) / (min(len(mine), len(theirs)) or 1)

    return sorted(rows, key=share, reverse=True)[:limit]


def semantic_cosine(old: str, new: str) -> float | None:
    """The cosine of the two texts' vectors (`store.index.embedding`), or None without the
    semantic extra."""
    return wired().text_cosine(old, new)
