"""Candidate memories derived from the signals a session carries, for the review inbox.

No model reads the session: the rules read what is already there.

- fail, edit, pass (seed 000's "quality gate passed after failure"): a check command (tests,
  build, lint, type check: `capture.check_commands`) that failed and later passed, with files
  edited in between, becomes a `fix` candidate naming those files;
- a repeated tool error (seed 003's learnFromFailure): the same error `ingest.repeated_error`
  times in one session becomes a `pitfall` candidate;
- a tool call the user rejected with a reason, a rule or correction in the user's own message,
  a choice the user states, a question about a bug the agent then agrees with, and feedback from
  a hook that blocked the agent (their wording is read by `store.capture.wording`). These stay open
  while the agent responds, so the candidate names the files it edited in response, and close
  at the user's next turn or when the ingest ends (`finish`).

Every candidate carries its evidence (the transcript lines, with line numbers and times) and a
confidence from the strength of its signal. Candidates below `capture.min_confidence` are
dropped, a session proposes at most `capture.max_per_session`, and one that repeats an earlier
candidate of the session (`capture.similarity`) strengthens that one instead, once per session.

The rules keep their state in a plain dict (`Tracker.state`) that the ingest pipeline saves on
the session, so a transcript ingested in pieces (a live session) finds a failure in one piece and
its fix in the next, and each candidate is proposed once per session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from store.capture import exchange, failures, hook_words, phrasing, wording
from store.capture.candidates import (  # noqa: F401 (re-exported: the tracker's vocabulary)
    ANSI, ANY_LINE, EVIDENCE_CHARS, TEST_FAILED, TOOL_ERROR_TAGS, Candidate, Settings, error_key, evidence,
    SHELL_TOOLS, first_error_line, relative_path,
)
from store.capture.candidates import digest as _digest, first_line as _first_line, shown_call as _shown_call
from store.capture.candidates import warning_line as _warning_line
from store.engine.redaction import redact

# Tools that change files, and the input field naming the file (Claude Code's tool names).
EDIT_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path",
              "NotebookEdit": "notebook_path"}
_TARGETS = ("file_path", "path", "pattern", "url", "query", "description")
_SPACE = re.compile(r"\s+")
TOOL_RULES = ("fix", "pitfall")  # the rules that read tools; the others read words
_WORD_RULES = {"rule", "correction", "rejection", "remember"}  # one lesson may come through any of them


@dataclass
class Tracker:
    """Watches one session's turns, tool calls and results, in order, and proposes candidates."""

    settings: Settings = field(default_factory=Settings.from_config)
    state: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state.setdefault("calls", {})  # tool_use_id -> [tool, command or file]
        self.state.setdefault("failing", {})  # command -> {"error": line, "edits": [files], "evidence": {...}}
        self.state.setdefault("errors", {})  # error key -> {"count": n, "tool": name, "example": line, "lines": [...]}
        self.state.setdefault("proposed", [])  # candidate keys already proposed in this session
        self.state.setdefault("open", [])  # signals from words, waiting for the agent's response
        self.state.setdefault("gists", {})  # proposed key -> its gist, to find repeats
        self.state.setdefault("stopped", None)  # the user stopped the agent: {"line", "at", "doing", "how"}
        self.state.setdefault("asked", None)  # the user's latest request, for a correction's context
        self.state.setdefault("opened", False)  # the opening prompt (the task) has been read
        self.state.setdefault("proposal", None)  # the agent's latest message, when it proposes
        self.state.setdefault("failed", False)  # the agent's latest call failed
        self._doing: tuple[str | None, str | None] = (None, None)  # the agent's latest call; not saved
        self._last_ok: tuple[str | None, str | None, str | None] = (None, None, None)  # the latest call that worked
        self._checks = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in self.settings.check_commands) + r")\b")

    # -- tool calls and results ------------------------------------------------------------

    def tool_call(self, tool_use_id: str | None, tool: str, tool_input: dict[str, Any]) -> str | None:
        """Remember a call until its result comes; returns the file it edits, if any."""
        target = None
        if tool in SHELL_TOOLS:
            target = str(tool_input.get("command") or "").strip()
        elif tool in EDIT_TOOLS:
            target = str(tool_input.get(EDIT_TOOLS[tool]) or "").strip()
        elif tool == "ExitPlanMode":  # the plan the user is asked to approve
            plan = tool_input.get("plan")
            target = str(plan)[:4000] if isinstance(plan, str) else None
        else:  # what a read, a search or a fetch is about, to say what the agent was doing
            target = next((str(tool_input[f]).strip() for f in _TARGETS if isinstance(tool_input.get(f), str)), None)
        if tool_use_id:
            self.state["calls"][tool_use_id] = [tool, target]
        self._doing = (tool, target)  # shown only when a stop needs it
        failures.called(self.state)
        if tool in SHELL_TOOLS and self.state.get("filing") and (folder := exchange.new_folder(self.state["filing"][0], target)):
            words, line, at = self.state.pop("filing")  # "move the done tickets to completed", then `mkdir …/completed`
            self._open(wording.Said("rule", "convention", f"{words}\n(`{folder}/` was created for it)",
                                    phrasing.cap(f"{phrasing.rule_title(words) or words}: `{folder}/`"),
                                    self.settings.scores["start.weak_rule"], ("user-rule", "filing")),
                       evidence(line, at, "prompt", words))
        for signal in self.state["open"]:
            if signal.get("blocked") and not signal.get("settled") and len(signal["after"]) < 3:
                # what the agent did next: a way around the hook?
                signal["after"].append(_shown_call(tool, target, self.state.get("cwd")))
        return target if tool in EDIT_TOOLS else None

    def tool_result(self, tool_use_id: str | None, is_error: bool, output: str, cwd: str | None = None,  # noqa: C901 (the rules for a tool's result, read top-down in the order they apply)
                    line: int | None = None, at: float | None = None, *,
                    whole: bool = True) -> tuple[str | None, list[Candidate]]:
        """Take a result into account. Returns (the file it edited if it was a successful edit,
        the candidates it completes). `whole` is False when the record's own structured result
        (Claude Code's `toolUseResult`) is not this text as a whole (a command's output with the
        words of a rejection inside): then it is only ever a tool's output."""
        tool, target = self.state["calls"].pop(tool_use_id, [None, None]) if tool_use_id else [None, None]
        if cwd and self.state.get("cwd") != cwd:
            self.state["cwd"] = cwd
        candidates: list[Candidate] = []
        edited = None
        if is_error:
            if whole and wording.declined(output):
                # The user stopped the call: no failure of the tool. Its reason, if any, is a lesson;
                # without one, the user's next message says what was wrong.
                reason = wording.rejection_reason(output)
                said = wording.read_rejection(reason, _shown_call(tool, target, cwd), scores=self.settings.scores) if reason else None
                if said is not None:
                    self._open(said, evidence(line, at, "rejection", reason))
                else:
                    self._stopped(line, at, _shown_call(tool, target, cwd), "rejected")
                return None, []
            hook = hook_words.hook_feedback(output, tool=tool or "tool") if whole else None
            if hook is not None:
                self._open_hook(hook, line, at, blocked=_shown_call(tool, target, cwd))
                return None, []
            self.state["failed"] = True
            example = first_error_line(output)
            candidates += self._error(tool or "tool", example, line, at, _shown_call(tool, target, cwd),
                                      _first_line(output), _warning_line(output), target or "")
            if tool in SHELL_TOOLS and target and target not in self.state["failing"] and self._checks.search(target):
                self.state["failing"][target] = {
                    "error": example, "edits": [], "evidence": evidence(line, at, "tool_error", f"{target}: {example}")}
            return None, candidates
        self.state["failed"] = False
        if self.state.get("watching"):  # a call that works after a failure it does the same work as: the way out
            candidates += [c for key in failures.ways_out(self.state, tool, target, lambda b=self._last_ok: _kept(
                _shown_call(*b)[:120])) for c in self._repeated(key)]
            self._last_ok = (tool, target, cwd)
        for signal in self.state["open"]:
            if signal.get("after"):
                signal["settled"] = True  # the way around the hook worked
        if tool in EDIT_TOOLS and target:
            edited = relative_path(target, cwd)
            for failure in self.state["failing"].values():
                if edited not in failure["edits"]:
                    failure["edits"].append(edited)
            for signal in self.state["open"]:
                if edited not in signal["files"] and len(signal["files"]) < self.settings.follow_files:
                    signal["files"].append(edited)
        elif tool in SHELL_TOOLS and target in self.state["failing"]:
            failure = self.state["failing"].pop(target)
            if failure["edits"]:
                passed = evidence(line, at, "tool_result", f"{target}: passed")
                candidates += self._propose(self._fix(target, failure, passed))
        elif tool == "ExitPlanMode" and target and wording.PLAN_APPROVED in output[:300]:
            decided = wording.plan_decision(target)
            if decided:
                title, content = decided
                self._open(wording.Said("approved", "decision", content, title,
                                        self.settings.scores["start.approved"], ("approved", "plan")),
                           evidence(line, at, "proposal", target))
        elif tool == "AskUserQuestion":
            said = wording.read_answers(output, scores=self.settings.scores)
            if said is not None:
                self._open(said, evidence(line, at, "answer", said.words))
        return edited, candidates

    def _error(self, tool: str, example: str, line: int | None, at: float | None, call: str = "",
               opening: str = "", warning: str = "", target: str = "") -> list[Candidate]:
        key = error_key(example)
        if not key or TEST_FAILED.match(example):
            # A test that fails while the agent works on it is the work (a red phase), not a
            # pitfall of the project: fail, edit, pass says what fixed it.
            return []
        seen = self.state["errors"].setdefault(key, {"count": 0, "tool": tool, "example": example, "lines": [],
                                                     "call": _kept(call[:160]),
                                                     "opening": _kept(opening if opening != example else "")})
        seen["count"] += 1
        failures.watch(self.state, key, target, _kept, self.settings.repeated_error)  # what the agent does next may teach
        if warning and warning != example:  # a warning the tool prints each time it fails is part of the lesson
            warned = seen.setdefault("warnings", {}).setdefault(error_key(warning), [0, _kept(warning)])
            warned[0] += 1
        if len(seen["lines"]) < 3:
            seen["lines"].append([line, at])
        return self._repeated(key)

    def _repeated(self, key: str) -> list[Candidate]:
        """A tool failing again and again is a pitfall once the session shows what was learned:
        why it fails (the agent says so) or the way out (a call doing the same work that then
        works). A failure the agent only retried, or left, is no lesson yet."""
        seen = self.state["errors"][key]
        learned = seen["count"] >= self.settings.repeated_error and (seen.get("cause") or seen.get("way")) \
            and len(self.state["proposed"]) < self.settings.max_per_session and f"pitfall:{_digest(key)}" not in self.state["proposed"]
        return self._propose(failures.pitfall(key, seen, self.settings)) if learned else []

    def explains(self, text: str) -> None:  # the agent's (or a subagent's) words after a failure: why it fails
        failures.explained(self.state, text, _kept)

    def _fix(self, command: str, failure: dict[str, Any], passed: dict[str, Any]) -> Candidate:
        files = tuple(failure["edits"])
        shown = command if len(command) <= 120 else command[:119] + "…"
        return Candidate(
            key=f"fix:{_digest(command)}:{_digest(failure['error'])}", type="fix",
            title=f"Fix for `{shown.splitlines()[0]}` failing",
            content=(f"`{shown}` failed with: {failure['error']}\n"
                     f"It passed after changes to: {', '.join(files)}."),
            tags=("heuristic", "fail-then-pass"), file_refs=files, confidence=self.settings.scores["start.fix"],
            evidence=(failure["evidence"], passed),
        )

    # -- the user's and the agent's words ---------------------------------------------------

    def user_text(self, text: str, line: int | None = None, at: float | None = None, *,  # noqa: C901 (the rules for the user's words, read top-down in the order they apply)
                  typed: bool = True) -> list[Candidate]:
        """A user turn: it closes the signals opened before it, and may open one. `typed` is
        False for text the client or a parent agent wrote (meta records, subagent prompts,
        compaction summaries): only a hook's feedback counts there.

        After the user stopped the agent (`[Request interrupted by user]`, or a call rejected
        with no reason) their next message is read as a correction of what the agent was doing;
        the opening prompt is the task, and only a rule inside it counts; a bare "yes" to the
        agent's proposal makes the proposal a decision."""
        hook = hook_words.hook_feedback(text)
        if hook is None and not typed and text.startswith("system:"):
            return self._close_all(waiting=True)  # a note that a hook ran: the answers awaited still come
        if typed and exchange.disagrees(text):  # "no, keep GraphQL": the agent's answer is turned down
            for signal in self.state["open"]:
                signal["agreed"] = None if signal["kind"] == "asked" else signal["agreed"]
        closed = self._close_all()
        if hook is not None:
            self._open_hook(hook, line, at)
            return closed
        if not typed:
            return closed
        if wording.new_task(text):
            self.new_task()
            return closed
        if wording.interrupted(text):
            self._stopped(line, at, self.doing, "interrupted")
            return closed
        if not wording.typed_by_user(text):
            return closed  # a command's echo or output: the stop and the proposal still wait
        stopped, self.state["stopped"] = self.state["stopped"], None
        proposal, self.state["proposal"] = self.state["proposal"], None
        checking, self.state["checking"] = self.state.get("checking"), None
        failed, self.state["failed"] = self.state.get("failed", False), False
        opening = not self.state["opened"]
        if not wording.is_chatter(text) or wording.approves(text):
            self.state["opened"] = True
        corrected = False
        if stopped is not None:
            said = wording.read_correction(text, failed=failed, scores=self.settings.scores)
            if said is None and (again := exchange.insists(text, stopped.get("asked"))):  # the user says it twice
                said = wording.Said("correction", "preference", text.strip(), again,
                                    self.settings.scores["start.correction"], ("correction", "said-twice"))
            said = said or exchange.said_again(text, self.settings.scores)  # "I told you, use pnpm"
            if said is not None:
                self._open(said, evidence(line, at, "correction", text), stopped=stopped)
                corrected = True  # the request before the next correction stays the task's
        elif proposal is not None and wording.approves(text):
            self._open(wording.Said("approved", "decision", proposal["text"], proposal["title"],
                                    self.settings.scores["start.approved"], ("approved",)),
                       evidence(proposal["line"], proposal["at"], "proposal", proposal["text"]))
            self.state["open"][-1]["evidence"].append(evidence(line, at, "prompt", text))
        elif checking is not None and exchange.confirmed(text):  # "The sandbox resets nightly, right?" "exactly"
            type_ = "context" if phrasing.states_fact(checking["title"]) else "decision"
            self._open(wording.Said("confirmed", type_, f'{checking["title"]}\nConfirmed: "{text.strip()}"', checking["title"],
                                    self.settings.scores["start.approved"], ("confirmed",)),
                       evidence(checking["line"], checking["at"], "assistant", checking["text"]))
            self.state["open"][-1]["evidence"].append(evidence(line, at, "prompt", text))
        else:
            said = wording.read_user_text(text, opening=opening, scores=self.settings.scores)
            if said is None and not opening:
                said = wording.read_statement(text, scores=self.settings.scores)
            said = said or (None if opening else exchange.said_again(text, self.settings.scores))
            if said is None and not opening and (asked := exchange.choice_question(text)):  # "do we want X?"
                said = wording.Said("asked", "decision", text.strip() if len(text) <= 400 else asked, phrasing.cap(asked),
                                    self.settings.scores["start.approved"], ("asked",))
            if said is not None:
                self._open(said, evidence(line, at, "prompt", text))
        if not wording.is_chatter(text) and not corrected:
            self.state["asked"] = _kept(wording.title_of(text, 160))
        self.state["filing"] = [_kept(text.strip()), line, at] if not opening and exchange.filing(text) else None
        return closed

    @property
    def doing(self) -> str | None:
        """The agent's latest tool call, shown ("Edit: web/a_pb2.py"), or None."""
        tool, target = self._doing
        return _shown_call(tool, target, self.state.get("cwd")) if tool else None

    def take_thread(self, other: "Tracker") -> None:
        """Continue `other`'s conversation: its open signals, a stop or a proposal waiting for an
        answer, the user's latest request."""
        if other is self:
            return
        self.state["open"] = other.state["open"] + self.state["open"]
        other.state["open"] = []
        for key in ("stopped", "proposal", "asked", "opened", "checking"):
            if other.state.get(key):
                self.state[key] = other.state[key]
                other.state[key] = None if key != "opened" else other.state[key]
        self._doing = other._doing if other._doing[0] else self._doing

    def new_task(self) -> None:
        """`/clear`, `/compact` or a compaction summary: what the user says next is a new task,
        not a correction of what the agent was doing before."""
        self.state.update(stopped=None, proposal=None, opened=False, checking=None)

    def _stopped(self, line: int | None, at: float | None, doing: str | None, how: str) -> None:
        if self.state["stopped"] is None:  # a rejection then its interrupt mark: one stop
            self.state["stopped"] = {"line": line, "at": at, "doing": _kept(doing), "how": how,
                                     "asked": self.state["asked"]}

    def assistant_text(self, text: str, line: int | None = None, at: float | None = None) -> None:
        """The agent's first words after a user's signal: agreeing that it was wrong makes the
        signal stronger (and a question about a bug counts only then). A message that ends by
        proposing waits for the user's answer."""
        if self.state.get("explaining"):
            self.explains(text)
        for signal in self.state["open"]:
            if signal.get("awaiting"):
                signal["awaiting"] = False
                confirmed = signal["kind"] == "question" and exchange.confirms(signal["words"], text)
                if wording.agrees(text) or confirmed:  # "You're right", or "X is ALREADY there" to "are you sure…?"
                    signal["agreed"] = wording.first_sentences(text, 2, 200) if not confirmed else exchange.gist(text)
                    signal["type"] = "context" if confirmed and not wording.agrees(text) else signal["type"]
                    # A doubt proved right: the title states the fact, not the user's question.
                    fact = exchange.confirmed_fact(signal["words"], text) if confirmed else None
                    signal["title"] = _kept(fact) if fact else signal["title"]
                    signal["rule"] = wording.agent_rule(text)
                    signal["confidence"] = round(min(self.settings.scores["cap.words"], signal["confidence"] + self.settings.scores["step.agreed"]), 2)
                    signal["evidence"].append(evidence(line, at, "assistant", text))
            elif signal["kind"] == "asked" and not signal["agreed"] and (found := exchange.verdict(signal["words"], text)):
                signal.update(agreed=_kept(exchange.gist(text)), title=_kept(found))  # the agent's verdict on the user's question
                signal["evidence"].append(evidence(line, at, "assistant", text))
        title = wording.proposal(text)
        self.state["proposal"] = ({"title": _kept(title), "text": _kept(wording.proposal_text(text)), "line": line, "at": at}
                                  if title else None)
        checked = exchange.checked(text)  # the agent asks to confirm what it understood
        self.state["checking"] = {"title": _kept(checked), "text": _kept(text[-600:]), "line": line, "at": at} if checked else None

    def finish(self) -> list[Candidate]:
        """The ingest ends: every open signal becomes a candidate now, and a repeated failure
        whose cause the agent stated after its last call."""
        return [c for watched in list(self.state.get("watching") or ()) for c in self._repeated(watched[0])] + self._close_all()

    def _open(self, said: wording.Said, first: dict[str, Any], stopped: dict[str, Any] | None = None) -> None:
        self.state["open"].append({
            "kind": said.kind, "type": said.type, "words": said.words, "title": said.title,
            "confidence": said.confidence, "tags": list(said.tags), "evidence": [first], "files": [],
            "awaiting": said.kind in ("rule", "question", "correction", "remember", "said"), "agreed": None,
            "stopped": stopped})

    def _open_hook(self, hook: tuple[str, str], line: int | None, at: float | None,
                   blocked: str | None = None) -> None:
        name, complaint = hook
        if not complaint:
            return
        statement = hook_words.hook_lesson(complaint)
        shown = _SHOUTED.sub("", statement) or statement  # "BLOCKED: Access to .env files…" → "Access to .env files…"
        title = wording.title_of(shown)
        if blocked:
            title = phrasing.cap(f"A {name.split(':')[0]} hook blocks `{wording.title_of(blocked, 60)}`: "
                                 f"{wording.title_of(shown, 100)}")
        self.state["open"].append({
            "kind": "hook", "type": "constraint", "words": complaint, "title": title,
            "confidence": self.settings.scores["start.hook"], "tags": ["hook", name.split(":")[0].lower()], "hook": name,
            "evidence": [evidence(line, at, "hook", f"{name} hook: {complaint}")], "files": [],
            "awaiting": False, "agreed": None, "blocked": blocked, "after": []})

    def _close_all(self, waiting: bool = False) -> list[Candidate]:
        """Every open signal becomes a candidate (or is dropped); with `waiting`, those still waiting
        for the agent's answer stay open."""
        kept = [s for s in self.state["open"] if s.get("awaiting") or (s["kind"] == "asked" and not s["agreed"])]
        signals = [s for s in self.state["open"] if not waiting or s not in kept]
        self.state["open"] = kept if waiting else []
        closed: list[Candidate] = []
        for signal in signals:
            if signal["kind"] in ("question", "said", "asked") and not signal["agreed"]:
                continue  # a question the agent did not take as pointing at a bug
            if (candidate := self._from_words(signal)) is not None:
                closed += self._propose(candidate)
        return closed

    def _from_words(self, signal: dict[str, Any]) -> Candidate | None:
        stopped = signal.get("stopped")
        # The title: the user's words phrased as a rule when they corrected the agent ("why are you
        # X-ing Y! do Z" → "Don't X Y; do Z"), else the rule the agent stated in agreeing, else
        # the user's words phrased (store.capture.phrasing).
        title = signal["title"] if phrasing.corrects(signal["words"]) else signal.get("rule") or signal["title"]
        if signal["kind"] in _WORD_RULES and phrasing.points_back(title):  # "you haven't fixed all the issues"
            if not (stopped and stopped.get("asked")):
                return None  # how much of the task to do: a lesson only with the task it was about
            title = phrasing.on_request(title, stopped["asked"])
        rule = title + ("" if title.endswith(("…", ".", "!", "?")) else ".")
        if signal["kind"] == "hook":
            parts = [hook_words.hook_content(signal)]
        elif stopped:
            doing = f" while it ran {stopped['doing']}" if stopped.get("doing") else ""
            how = "rejected the agent's call" if stopped["how"] == "rejected" else "stopped the agent"
            parts = [rule, f'The user {how}{doing} and said: "{signal["words"]}"']  # the lesson, then the why
            if stopped.get("asked") and stopped["asked"] != signal["words"] and phrasing.form(signal["words"]) != "challenge":
                # what "you haven't fixed all of it" refers to; "why are you editing X" says it itself
                parts.append(f'Their request before: "{stopped["asked"]}"')
        elif signal["kind"] == "asked":
            parts = exchange.parts(signal)
        elif phrasing.said_as(title, signal["words"]) or signal["kind"] not in _WORD_RULES | {"question", "said"}:
            parts = [signal["words"]]
        else:
            parts = [rule, f'The user said: "{signal["words"]}"']
        if signal["agreed"] and signal["kind"] != "asked":
            parts.append(f"The agent agreed: {signal['agreed']}")
        if signal["files"]:
            parts.append(f"Changed in response: {', '.join(signal['files'])}.")
            signal["confidence"] = min(self.settings.scores["cap.words"], signal["confidence"] + self.settings.scores["step.files"])
        key_text = hook_words.hook_lesson(signal["words"]) if signal["kind"] == "hook" else signal["words"]
        if hook_words.went_around(signal):
            type_ = "pitfall"
        else:
            type_ = signal["type"]
        return Candidate(
            key=f"{signal['kind']}:{_digest(_SPACE.sub(' ', key_text.lower()))}", type=type_,
            title=title, content="\n".join(parts), tags=("heuristic", *signal["tags"]),
            file_refs=tuple(signal["files"]), confidence=round(signal["confidence"], 2),
            evidence=tuple(signal["evidence"]))

    # -- proposing --------------------------------------------------------------------------

    def _propose(self, candidate: Candidate) -> list[Candidate]:
        """Once per key and session; a near-repeat of an earlier candidate strengthens it; weak
        ones and those past the session's limit are dropped."""
        if candidate.confidence < self.settings.min_confidence:
            return []
        if candidate.key in self.state["proposed"]:
            # A tool rule proposes once; words said again (a hook blocking twice) strengthen.
            return [] if candidate.rule in TOOL_RULES else self._repeat(candidate, candidate.key)
        earlier = self._similar(candidate)
        if earlier is not None:
            return self._repeat(candidate, earlier)
        if len(self.state["proposed"]) >= self.settings.max_per_session:
            return []
        self.state["proposed"].append(candidate.key)
        self.state["gists"][candidate.key] = _gist(candidate)
        return [candidate]

    def _repeat(self, candidate: Candidate, earlier: str) -> list[Candidate]:
        """The first repeat in a session strengthens the earlier candidate; later ones are only
        counted: a hook that blocks a hundred times in a loop is one lesson, not a hundred."""
        repeats = self.state.setdefault("repeats", {})
        repeats[earlier] = repeats.get(earlier, 0) + 1
        return [Candidate(**{**candidate.__dict__, "repeats": earlier})] if repeats[earlier] == 1 else []

    def _similar(self, candidate: Candidate) -> str | None:
        if not self.state["gists"] or self.settings.similarity > 100:
            return None
        from rapidfuzz import fuzz  # only when a session proposes a second candidate

        wanted = _gist(candidate)
        family = _WORD_RULES if candidate.rule in _WORD_RULES else {candidate.rule}
        for key, gist in self.state["gists"].items():
            if key.split(":")[0] not in family:
                continue
            if fuzz.token_sort_ratio(wanted, gist) >= self.settings.similarity:
                return key
            # The same lesson said again in other words: the same rule in the title (the agent's
            # statement of it), or the user's words much the same.
            title, words = wanted.split("\n", 1)[0], wanted.split("\n", 1)[-1]
            other_title, other_words = gist.split("\n", 1)[0], gist.split("\n", 1)[-1]
            if family is _WORD_RULES and (fuzz.ratio(title, other_title) >= 90
                                          or fuzz.token_sort_ratio(words, other_words) >= self.settings.similarity
                                          or phrasing.identifiers(words) & phrasing.identifiers(other_words)):
                return key
        return None


_SHOUTED = re.compile(r"^[\W_]*(?:BLOCKED|DENIED|ERROR|FORBIDDEN|REFUSED|NOT ALLOWED|STOP)\b[\s:!.\-–—]*")


def _gist(candidate: Candidate) -> str:
    """What two candidates are compared on: their lesson's first words, without the evidence
    (for a rule from words: its title, then the user's words)."""
    if candidate.rule in _WORD_RULES:
        said = candidate.evidence[0]["text"] if candidate.evidence else candidate.content
        return f"{candidate.title.lower()}\n{_SPACE.sub(' ', said.lower())[:300]}"
    return _SPACE.sub(" ", candidate.content.lower())[:300]


def _kept(text: str | None) -> str | None:
    """Text the tracker's state keeps (saved on the session): secrets redacted first."""
    return redact(text)[0] if text else text
