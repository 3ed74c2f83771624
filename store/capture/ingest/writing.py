"""What ingest writes to the store: a marker's memory (or the memory it repeats), a heuristic's
candidate in the inbox (or the memory it strengthens, with its evidence). `Writer` is the ingest
pipeline's (store/capture/ingest/pipeline.py) collaborator for it: built with what it writes
with, and told at each call which session is being read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from store.anchors.anchoring import AnchorSpec, anchor_memory, project_root
from store.capture.heuristics import Candidate
from store.capture.ingest.anchoring import cited
from store.capture.ingest.entries import Entry
from store.capture.retaught import earlier_lesson, record_reteaching
from store.capture.markers import Marker, scan
from store.engine.redaction import clean, clean_field, summary_line
from store.engine.errors import NotFound
from store.engine.limits import fit_field, fit_list

if TYPE_CHECKING:
    from store.capture.heuristics import Tracker
    from store.capture.ingest.activity_log import ActivityLog
    from store.capture.ingest.anchoring import RecentEdits
    from store.capture.ingest.run import IngestOptions, IngestReport
    from store.engine.core import Store


def _clean_all(values) -> tuple[str, ...]:
    return tuple(filter(None, map(clean_field, values)))


class Writer:
    """Writes one ingest run's memories and candidates, and says so in the session log."""

    def __init__(self, store: "Store", options: "IngestOptions", report: "IngestReport", log: "ActivityLog",
                 recent_edits: "RecentEdits", session_id: str) -> None:
        self.store = store
        self.options = options
        self.report = report
        self.log = log
        self.recent_edits = recent_edits
        self.session_id = session_id  # the run's own session: a marker's memory is its
        self.max_length = int(store.config.ingest.max_length)
        self.marker_status = store.config.ingest.marker_status
        self.max_evidence = int(store.config.capture.max_evidence)
        self._changes = None  # the earlier memory the candidate being written changes, if any

    def markers(self, entry: Entry, number: int, at: float | None, *,
                 text_lines_are_absolute: bool = False) -> None:
        found = scan(entry.text, first_line=number if text_lines_are_absolute else 1)
        where = (lambda n: {"line": n}) if text_lines_are_absolute else (lambda n: {"line": number, "text_line": n})
        if not entry.own:
            quoted = len(found.markers) + len(found.rejected) + len(found.quoted)
            if quoted:
                self.report.quoted += quoted
                self.log.add("note", f"{quoted} marker(s) quoted in a {entry.kind}: not memories, "
                                  "only the agent's own text counts", at, {"line": number, "quoted": quoted})
            return
        if found.quoted:
            self.report.quoted += len(found.quoted)
            self.log.add("note", f"{len(found.quoted)} marker(s) inside a code block: quoted examples, not memories",
                      at, {"line": number, "text_lines": found.quoted})
        for rejected in found.rejected:
            source = summary_line(rejected.source_line, 160)
            self.report.rejected.append({**where(rejected.line), "reason": rejected.reason, "source": source})
            self.log.add("marker_rejected", f"{rejected.reason}: {source}", at,
                      {**where(rejected.line), "reason": rejected.reason, "source": source})
        edits = self.recent_edits.take(project_root(self.store)) if found.markers else []
        for marker in found.markers:
            self.memory(marker, at, where(marker.line), edits)

    def memory(self, marker: Marker, at: float | None, where: dict[str, Any],
                edits: Sequence[AnchorSpec] = ()) -> None:
        self.report.markers += 1
        resolution = self.store.vocabulary.resolve_type(marker.word)
        cleaned = clean(marker.text, self.max_length)
        scope = fit_field("scope", clean_field(marker.scope))
        head = f"[{resolution.type}{':' + scope if scope else ''}]"
        marker_detail = {**where, "word": marker.word, "type": resolution.type, "scope": scope,
                         "grammar": marker.grammar}
        self.log.add("marker", f"{head} {summary_line(cleaned.text, 160)}", at, marker_detail)
        if not cleaned.text.strip():
            self.report.rejected.append({**where, "reason": "no text left after cleaning", "source": head})
            self.log.add("marker_rejected", f"no text left after cleaning: {head}", at, {**where, "reason": "empty"})
            return
        tags = () if resolution.known else fit_list("tags", filter(None, [clean_field(marker.word.lower())]))
        meta = {"marker": {"word": marker.word, "grammar": marker.grammar}, **cleaned.meta()}
        result = self.store.add(
            cleaned.text, type=resolution.type, scope=scope, tags=tags, hat=self.options.hat,
            task=self.options.task, source="explicit", status=self.marker_status,
            session_id=self.session_id, actor="ingest", meta=meta)
        memory = result.memory
        (self.report.created if result.created else self.report.reinforced).append(memory.id)
        if anchors := [*edits, *cited(cleaned.text)]:
            anchor_memory(self.store, memory.id, anchors, actor="ingest", strict=False, session_id=self.session_id)
        kind = "memory_created" if result.created else "memory_reinforced"
        self.log.add(kind, f"{memory.id} {memory.type}: {summary_line(memory.title, 120)} "
                        f"(confidence {memory.confidence:.2f})", at,
                  {**where, **cleaned.meta()}, memory_id=memory.id, clean_summary=False)
        if not resolution.known:
            if memory.id not in {f["memory_id"] for f in self.report.fallback}:
                self.report.fallback.append({"word": marker.word, "memory_id": memory.id})
            self.log.add("note", f"unknown type {marker.word!r} kept as {resolution.type} with tag "
                              f"{marker.word.lower()!r}", at, {**where, "word": marker.word},
                      memory_id=memory.id)
        if cleaned.redactions:
            self.report.redacted += 1
            kinds = ", ".join(f"{k} ×{n}" for k, n in cleaned.redactions.items())
            self.log.add("note", f"secret redacted before storing {memory.id}: {kinds}", at,
                      {**where, "redactions": cleaned.redactions}, memory_id=memory.id)
        if cleaned.cut_from is not None:
            self.report.cut += 1
            self.log.add("note", f"{memory.id} cut to {self.max_length} characters (from {cleaned.cut_from})",
                      at, {**where, "cut_from": cleaned.cut_from}, memory_id=memory.id)

    def candidate(self, candidate: Candidate, at: float | None, number: int | None, *,
                  session: str, tracker: "Tracker") -> None:
        """Store a candidate of `session` (whose heuristics are `tracker`) in the inbox, or
        strengthen the memory it repeats (an earlier candidate of the session, or a memory it is
        similar to), adding its evidence."""
        evidence = [{**item, "session": session,
                     "text": clean(item["text"], self.max_length).text} for item in candidate.evidence]
        memories = tracker.state.setdefault("memories", {})
        earlier = memories.get(candidate.repeats) if candidate.repeats else None
        if earlier is not None:
            try:
                memory = self.store.get(earlier)
            except NotFound:  # purged since: the repeat is a candidate of its own
                memory = None
            if memory is None or memory.status == "deleted":
                return  # a person rejected it: a repeat does not bring it back
            result = self.store.add(memory.content, type=memory.type, scope=memory.scope, source="automatic",
                                    status="pending", session_id=session, actor="ingest")
        elif candidate.rule == "hook" and self._said_before(candidate, session):
            return  # a hook says the same in every session: the user did not teach it again
        elif (retaught := self._retaught(candidate, evidence, session, memories)) is not None:
            memory = retaught
            self.report.candidates.append(memory.id)
            self.log.add("candidate", f"{candidate.type} candidate retaught {memory.id}: "
                                   f"{summary_line(memory.title, 120)}", at,
                         {"line": number, "rule": candidate.rule, "action": "retaught",
                          "confidence": candidate.confidence},
                         memory_id=memory.id, clean_summary=False)
            return
        else:
            cleaned = clean(candidate.content, self.max_length)
            result = self.store.add(
                cleaned.text, type=candidate.type, title=summary_line(candidate.title, 100),
                tags=fit_list("tags", _clean_all(candidate.tags)),
                file_refs=fit_list("file_refs", _clean_all(candidate.file_refs)), hat=self.options.hat,
                task=self.options.task,
                confidence=candidate.confidence, source="automatic", status="pending", session_id=session,
                actor="ingest", meta={"heuristic": candidate.rule, "evidence": evidence, **cleaned.meta()})
            memories[candidate.key] = result.memory.id
            if not result.created and result.memory.session_id != session:  # the store found it the same
                self.store.record_event(result.memory.id, "retaught", before=None, after=result.memory.confidence,
                                        actor="ingest", session_id=session,
                                        detail={"title": summary_line(candidate.title, 100)})
            self._propose_change(candidate, result, session)
        if not result.created:
            self.add_evidence(result.memory, evidence)
        self.report.candidates.append(result.memory.id)
        if result.created:
            self.report.new_candidates.append(result.memory.id)
        line = number if number is not None else (evidence[-1]["line"] if evidence else None)
        verb = "" if result.created else " reinforced"
        self.log.add("candidate", f"{candidate.type} candidate {result.memory.id}{verb}: "
                               f"{summary_line(result.memory.title, 120)}", at,
                  {"line": line, "rule": candidate.rule, "action": result.action,
                   "confidence": candidate.confidence},
                  memory_id=result.memory.id, clean_summary=False)

    def _said_before(self, candidate: Candidate, session: str) -> bool:
        """A hook's feedback an earlier session's memory already states: text the user did not
        type is not the user teaching, so it neither re-teaches nor reinforces that memory."""
        earlier = earlier_lesson(self.store, summary_line(candidate.title, 100), session)
        if earlier is not None and earlier.verdict.kind == "same":
            return True
        found = self.store.relations.find_similar(self.store.project_id(), candidate.type, None,
                                                  clean(candidate.content, self.max_length).text)
        return found is not None and found[0].session_id != session

    def _retaught(self, candidate: Candidate, evidence: list[dict[str, Any]], session: str,
                  memories: dict[str, str]):
        """The memory of an earlier session that `candidate` states again, reinforced with a
        `retaught` event and this session's evidence (`store.capture.retaught`); None when the
        candidate is no such re-teaching."""
        earlier = earlier_lesson(self.store, summary_line(candidate.title, 100), session)
        if earlier is None or earlier.verdict.kind != "same":
            self._changes = earlier
            return None
        self._changes = None
        memory = record_reteaching(self.store, earlier, summary_line(candidate.title, 100),
                                   candidate.confidence, session, self.store.now())
        self.add_evidence(memory, evidence)
        memories[candidate.key] = memory.id
        return memory

    def _propose_change(self, candidate: Candidate, result, session: str) -> None:
        """A new candidate that changes an earlier session's memory (an update or contradiction
        of its title) is proposed as such, unless the store already made it a proposal."""
        earlier, self._changes = self._changes, None
        if earlier is None or not result.created or result.memory.meta.get("proposal"):
            return
        self.store.relations.propose(result.memory.id, earlier.memory.id, earlier.verdict, actor="ingest")

    def add_evidence(self, memory, evidence: list[dict[str, Any]]) -> None:
        """A repeat's evidence joins the memory's, up to `capture.max_evidence` lines (the latest)."""
        self.store.append_evidence(memory.id, evidence, keep=self.max_evidence)
