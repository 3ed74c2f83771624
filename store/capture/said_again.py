"""A sentence said again: what the user told the agent in an earlier session and tells it again.

Most of what users teach is not worded as a rule: "Read @TODO.md and in @PROGRESS.md make a
simple `- [ ]` items list", "make sure to reuse code", "Use uv pip". Read once, it is the task in
hand; said again in a later session, it is how the user wants the project worked, whatever its
words. This is the lesson a person had to teach twice, and the second time is the last: the
sentence becomes a candidate (a `convention`), with both turns as its evidence, and the
re-teaching check of every candidate (`store.capture.retaught`) makes a third saying reinforce it.
A sentence a memory already says in other words (an update of it, by sameness) is left to that
memory: it is no new lesson to propose.

Which sentences: the user's own (typed, not pasted, no hook's feedback), no question, 12 to 240
characters, no URL, log line, report of what happened or words of a rule that make none ("don't
worry"); and either an instruction (a rule's imperative at its start, "make sure", "I want to
avoid", "you must") or a step of how the user works that names a file of the project ("Read
@TODO.md and mark @PROGRESS.md": a step's verb at its start and an `@file`, a `code span` or a
file name). Two are one said again when they share `capture.said_again.min_shared` content words
and those make up `capture.said_again.overlap` of the shorter one's. The earlier sentences come
from the session log (each prompt's `activity` entry, its first 200 characters) of the project's
other sessions, read once per session: `memdeck ingest --follow` compares a live session with the
sessions that were in the store when it started.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from store.backends import activity_rows
from store.capture import hook_words, phrasing, wording
from store.capture.candidates import Candidate
from store.capture.retaught import earlier_lesson

if TYPE_CHECKING:
    from store.engine.core import Store

_STOP = frozenset(
    "the a an and or but to of in on for with this that these those it its is are be was were i you we our my "
    "your me us they them do does did not no yes so as at by from if then than there here what which who when "
    "how why can could would should will just also all any some more most very please let lets let's ok okay "
    "now again still only sure make like want need have has had get got go going one into out about over "
    "el la los las un una y o de del en con por para que es son no si lo le se".split())
_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-/@]*[a-z0-9]|[a-z0-9]")
# An instruction: a rule's imperative at the sentence's start, or a wish to keep doing something.
_LEAD = r"^(?:(?:please|and|also|then|now|so|ok(?:ay)?|just)[,]?\s+)*"
_INSTRUCTION = re.compile(
    _LEAD + r"(?:don'?t|do not|never|always|make sure|remember|keep|avoid|stop|use|only|reuse|stick to|ensure|"
    r"nunca|siempre|usa|recuerda|asegúrate)\b|"
    r"\b(?:i want|i'd like|i would like|we need|we want)(?: you)? to (?:avoid|keep|always|never|use|stick|be|make sure|"
    r"follow)\b|\b(?:you should|you must|should not|shouldn't|must not|must)\b", re.I)
# Or a step of how the user works, naming a file of the project: "Read @TODO.md and mark @PROGRESS.md".
_NAMES = re.compile(r"@[\w./-]+|`[^`]+`|\b[\w-]+\.(?:md|py|js|ts|tsx|json|ya?ml|toml|txt|html|css|sh|rb|go|rs)\b", re.I)
_STEP = re.compile(_LEAD + r"(?:read|update|mark|keep|use|follow|check|track|record|note|write|add|document|fix|"
                   r"run|extend|plan|describe|list)\b", re.I)
# Not the user's words about the work: a URL, a log line (a clock time, `file.js:20`, a level), a
# report of what happened ("I'm getting…", "when I run…", "Problem:").
_NOT_SAID = re.compile(r"https?://|\b\d{1,2}:\d{2}\b|\w\.\w+:\d+|\b(?:INFO|ERROR|WARN(?:ING)?|DEBUG)\b|"
                       r"^(?:ok(?:ay)?,?\s+)?(?:i'?m|i am|i get|i got|i see|i ran|when i|problem:|error)\b", re.I)
# A question, as the rules read one (`wording.QUESTION_OPENING`), or asking what can be or what is.
_QUESTION_START = re.compile(wording.QUESTION_OPENING + r"|^(?:can|could|would|may) (?:there|we|you|i|it|this|that|they)\b"
                             r"|^(?:what|which|where|when|who|why|how)\b", re.I)


def sentences(text: str) -> list[str]:
    """The sentences of a user's message that could be a standing instruction."""
    found = []
    for part in wording.split_sentences(text):
        part = part.strip(" -*>\t")
        if not 12 <= len(part) <= 240 or part.endswith("?") or _QUESTION_START.search(part):
            continue
        if _NOT_SAID.search(part) or wording.no_rule(part):
            continue
        if _INSTRUCTION.search(part) or (_NAMES.search(part) and _STEP.search(part)):
            found.append(part)
    return found


def _own(text: str) -> bool:
    """The user's own words: typed (no client's echo), not pasted, not a hook's feedback (a hook
    says the same in every session; the user did not)."""
    return wording.typed_by_user(text) and not wording.pasted(text) and hook_words.hook_feedback(text) is None


def content_words(sentence: str) -> frozenset[str]:
    return frozenset(w.strip(".-/@") for w in _WORD.findall(sentence.lower()) if w not in _STOP and len(w) >= 3)


@dataclass
class Earlier:
    """The project's earlier sentences, indexed by word."""

    said: list[tuple[str, str, frozenset[str]]] = field(default_factory=list)  # (session, sentence, words)
    by_word: dict[str, list[int]] = field(default_factory=dict)

    def add(self, session: str, sentence: str, words: frozenset[str]) -> None:
        for word in words:
            self.by_word.setdefault(word, []).append(len(self.said))
        self.said.append((session, sentence, words))

    def closest(self, words: frozenset[str], min_shared: int, overlap: float) -> tuple[str, str] | None:
        """(session, sentence) of the earlier sentence sharing the most of `words`, if enough."""
        counts: dict[int, int] = {}
        for word in words:
            for at in self.by_word.get(word, ()):
                counts[at] = counts.get(at, 0) + 1
        best: tuple[float, int] | None = None
        for at, shared in counts.items():
            if shared < min_shared:
                continue
            share = shared / min(len(words), len(self.said[at][2]))
            if share >= overlap and (best is None or share > best[0]):
                best = (share, at)
        return None if best is None else self.said[best[1]][:2]


class SaidAgain:
    """The ingest's collaborator for sentences said again: each session's earlier sentences are
    read once, at its first prompt."""

    def __init__(self, store: "Store") -> None:
        settings = store.config.capture.said_again
        self.store = store
        self.min_shared = int(settings.min_shared)
        self.overlap = float(settings.overlap)
        self.per_session = int(settings.per_session)
        self.limit = int(settings.earlier_prompts)
        self.confidence = float(store.config.capture.confidence.start_said_again)
        self._earlier: dict[str, Earlier] = {}

    def _of(self, session: str) -> Earlier:
        earlier = self._earlier.get(session)
        if earlier is None:
            earlier = self._earlier[session] = Earlier()
            rows = activity_rows.prompts_of_other_sessions(self.store.backend, self.store.project_id(), session, self.limit)
            for other, summary in rows:
                if _own(summary):
                    for sentence in sentences(summary):
                        words = content_words(sentence)
                        if len(words) >= self.min_shared:
                            earlier.add(other, sentence, words)
        return earlier

    def said(self, session: str, text: str, line: int | None, at: float | None,
             state: dict[str, Any]) -> list[Candidate]:
        """The candidates for the sentences of this user message said in an earlier session.
        `state` is the session's heuristics state (it keeps how many were proposed)."""
        if self.min_shared <= 0 or not _own(text):
            return []
        proposed = state.setdefault("said_again", [])
        found = []
        for sentence in sentences(text):
            if len(proposed) >= self.per_session:
                break
            words = content_words(sentence)
            if len(words) < self.min_shared:
                continue
            match = self._of(session).closest(words, self.min_shared, self.overlap)
            if match is None:
                continue
            other, before = match
            key = f"said_again:{' '.join(sorted(words))[:120]}"
            if key in proposed:
                continue
            title = phrasing.cap(phrasing.calm(wording.rule_of(wording.one_line(sentence))).rstrip(".!"), 100)
            known = earlier_lesson(self.store, title, session)
            if known is not None and known.verdict.kind != "same":
                continue  # a memory says it already, in other words: not a lesson to propose again
            proposed.append(key)
            content = (f"{title}.\nSaid in an earlier session too: \u201c{wording.one_line(before)}\u201d")
            found.append(Candidate(
                key=key, type="convention", title=title, content=content, tags=("said-again",),
                confidence=self.confidence,
                evidence=({"line": None, "at": None, "kind": "prompt", "text": before, "earlier_session": other},
                          {"line": line, "at": at, "kind": "prompt", "text": text})))
        return found
