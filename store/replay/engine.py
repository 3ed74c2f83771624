"""`memdeck replay`: the sessions of a history, in time order, through what the hooks would have
done, into a store of their own (a scratch store unless the caller hands it the user's).

For each session, on the history's clock (a `FrozenClock` moved to each turn's time, so decay,
recency and "how long ago" follow the sessions' dates): decay and the session-start block (the
`session-start` hook), then at each user prompt the block the `user-prompt-submit` hook would
inject given the session so far, then at its end what the `stop` hook captures (the session as a
Claude Code transcript through ingest), and the review policy: `all` accepts every candidate,
`none` leaves them in the inbox. Everything each step injected, and each memory's words after
each session, are kept for the report and the labelled scoring (`store.evaluation.replay_eval`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from store.capture.ingest.history import HistorySession, transcript_lines, turn_times
from store.engine.clock import FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.engine.ids import counted_memory_ids
from store.engine.records import InjectionContext
from store.replay.reteaching import find

REVIEWS = ("all", "none")
MEMORY_STATUSES = ("active", "pending", "inactive")


@dataclass(frozen=True)
class Block:
    """One injected block: at session start (`prompt` None) or at a prompt (its index)."""

    prompt: int | None
    tokens: int
    ids: tuple[str, ...]


@dataclass
class PromptStep:
    index: int  # in the session's prompts
    text: str
    at: float
    line: int  # the prompt's line in the session as a transcript
    tokens: int = 0
    ids: tuple[str, ...] = ()  # injected with this prompt
    verdicts: dict[str, str] = field(default_factory=dict)  # memory id -> why it was out


@dataclass
class SessionReplay:
    index: int
    session_id: str
    name: str
    fmt: str
    title: str
    started_at: float
    ended_at: float
    start: Block
    prompts: list[PromptStep]
    candidates: list[str] = field(default_factory=list)  # proposed by capture (new or reinforced)
    created: list[str] = field(default_factory=list)  # memories new in this session
    accepted: list[str] = field(default_factory=list)
    reteachings: list = field(default_factory=list)  # `reteaching.Reteaching`, found at its end

    def injected_before(self, prompt: int) -> set[str]:
        """Memories in a block of this session before prompt `prompt` (session start included)."""
        ids = set(self.start.ids)
        for step in self.prompts[:prompt]:
            ids.update(step.ids)
        return ids


@dataclass(frozen=True)
class MemoryText:
    title: str
    content: str
    status: str
    type: str


@dataclass
class Replay:
    project: str
    review: str
    sessions: list[SessionReplay]
    # After each session (by index): every memory of the project then, with its words.
    after: list[dict[str, MemoryText]]
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def memory_before(self, session: int) -> dict[str, MemoryText]:
        """The memories there were when session `session` started."""
        return self.after[session - 1] if session > 0 else {}

    @property
    def prompts(self) -> int:
        return sum(len(s.prompts) for s in self.sessions)


def _snapshot(store: Store) -> dict[str, MemoryText]:
    from store.browse.search import MemoryFilter, list_memories

    flt = MemoryFilter(statuses=MEMORY_STATUSES)
    return {m.id: MemoryText(m.title, m.content, m.status, m.type)
            for m in list_memories(store, flt, sort="created", limit=None)}


def open_scratch(folder: Path, project: str, config: Config | None = None) -> Store:
    """A new store in `folder` for the replay, on a frozen clock, drawing its memories' ids in
    order: with random ids a replay's figures changed from run to run (the history's clock gives
    many memories one second, and a ranking breaks a tie by id), 13 or 18 repeats prevented of
    the same 127."""
    store = Store.open(folder / "replay.db", project=project, config=config or Config.defaults(),
                       clock=FrozenClock(0.0), project_root=folder)
    store.new_id = counted_memory_ids()
    return store


def replay(store: Store, sessions: list[HistorySession], *, review: str = "all",
           progress: Callable[[int, int, str], None] | None = None) -> Replay:
    """Run `sessions` (in time order) through the hooks into `store`, whose clock is replaced
    by the history's. See the module's docstring."""
    from store.capture.ingest.pipeline import IngestOptions, Ingestion
    from store.capture.ingest.sources import Line
    from store.engine.lifecycle import run_decay
    from store.retrieval.injection import prime_for_prompt, prime_session_start

    if review not in REVIEWS:
        raise InvalidInput(f"unknown review policy {review!r}; one of {', '.join(REVIEWS)}")
    clock = FrozenClock(sessions[0].started_at if sessions else 0.0)
    store.clock = clock
    result = Replay(project=store.project, review=review, sessions=[], after=[])
    floor = -math.inf
    for index, session in enumerate(sessions):
        if progress:
            progress(index, len(sessions), session.name)
        ceiling = sessions[index + 1].started_at if index + 1 < len(sessions) else math.inf
        times = turn_times(session, floor, ceiling)
        start_at = max(floor, session.started_at)
        clock.at = start_at
        run_decay(store, actor="replay")
        context = InjectionContext(session_id=session.session_id)
        store.sessions.ensure(session.session_id, agent=session.fmt, started_at=start_at,
                             source_path=session.source, meta={"via": "replay", "title": session.title})
        started = prime_session_start(store, context, record=True)
        lines, prompt_lines = transcript_lines(session, times)
        steps: list[PromptStep] = []
        prompt_times = [at for turn, at in zip(session.turns, times) if turn.role == "user"]
        for number, (turn, at) in enumerate(zip(session.prompts, prompt_times)):
            clock.at = at
            block = prime_for_prompt(store, InjectionContext(task=turn.text, session_id=session.session_id),
                                     record=True)
            steps.append(PromptStep(
                number, turn.text, at, prompt_lines[number] if number < len(prompt_lines) else 0, block.tokens,
                tuple(r.memory.id for r in block.included),
                {r.memory.id: r.reason for r in block.excluded}))
        ended = times[-1] if times else start_at
        clock.at = ended
        run = Ingestion(store, IngestOptions(format="transcript", session_id=session.session_id), "transcript",
                        session.session_id, session.source, source_key=f"replay:{session.source}#{session.session_id}")
        run.start(started_at=start_at, meta={}, source_path=session.source, agent=session.fmt)
        offset = 0
        numbered = []
        for number, data in enumerate(lines, 1):
            offset += len(data) + 1
            numbered.append(Line(number, data, offset))
        report = run.consume(iter([numbered]))
        before = result.after[-1] if result.after else {}
        replayed = SessionReplay(index, session.session_id, session.name, session.fmt, session.title, start_at,
                                 ended, Block(None, started.tokens, tuple(r.memory.id for r in started.included)),
                                 steps, list(dict.fromkeys(report.candidates)))
        replayed.reteachings = find(store, replayed, before, prompt_lines)
        if review == "all" and replayed.candidates:
            pending = [m.id for m in store.get_many(replayed.candidates) if m.status == "pending"]
            if pending:
                store.set_status(pending, "active", actor="replay")
            replayed.accepted = pending
        after = _snapshot(store)
        replayed.created = [i for i in after if i not in before]
        result.sessions.append(replayed)
        result.after.append(after)
        floor = ended
    if progress:
        progress(len(sessions), len(sessions), "")
    return result
