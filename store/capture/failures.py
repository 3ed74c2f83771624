"""What a tool failing again and again taught, read from what the session does next (issue 28):
the agent saying why it fails or what it must do (`cause`), or a call doing the same work that
then works (`same_work`). A failure the agent only retried or left teaches nothing a person keeps.
"""

from __future__ import annotations

import re
from typing import Any

from store.capture import phrasing, wording
from store.capture.candidates import SHELL_TOOLS, Candidate, Settings, digest, evidence

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP = re.compile(r"\*\*|__|`|^\s*(?:[-*•]|\d+[.)])\s+")
# Words that say why something fails, or what it takes.
_CAUSE = re.compile(
    r"\b(?:because|since|means|due to|caused by|related to|not installed|isn'?t installed|(?:is|are) not (?:found|available|set)|"
    r"not found|(?:is|are) missing|doesn'?t exist|does not exist|need to|needs to|have to|has to|must|instead|"
    r"the (?:issue|problem|reason|cause) (?:is|was)|not an? \w+ (?:issue|problem|error)|"
    r"porque|hay que|tengo que|no está instalad[oa])\b", re.I)
# Words of an error or a command that name nothing in particular.
_GENERIC = frozenset(
    "error errors failed failing fails fail exit code command line with found from this that file files near "
    "token unexpected could cannot will have been were there when what into make sure please the and for not "
    "run runs running test tests npm npx node python bash true false none null".split())
_WORDS = re.compile(r"[a-z][a-z0-9_-]{3,}")


def cause(text: str, about: str) -> str | None:
    """The sentence of the agent's words that names something of the failure (`about`: its error
    line and call) and says why it fails or what it takes ("basedpyright is not installed in
    the shell"), without markup; None when no sentence does."""
    if not _CAUSE.search(text[:2000]):
        return None
    names = {w for w in _WORDS.findall(about.lower()) if w not in _GENERIC}
    if not names:
        return None
    for sentence in _SENTENCE.split(text[:2000]):
        plain = _MARKUP.sub("", sentence).strip()
        if plain and not plain.endswith("?") and _CAUSE.search(plain) and names & set(_WORDS.findall(plain.lower())):
            return plain[:200]
    return None


def _words(command: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9_]+", command)


def same_work(tool: str, failed: str, now: str) -> bool:
    """A call that does the work a failed one tried: the same file for a file tool; for a shell
    command the same program (`.venv/bin/pip` is `pip`) with a word of the failed command's
    arguments past its subcommand ("npm run test:unit" → "npm test"; "git checkout main" →
    "git checkout -f main", not "git status")."""
    if tool != "Bash":
        return bool(failed) and failed == now
    program = _program(failed)
    if not program or program != _program(now):
        return False
    wanted = {w.lower() for w in _words(failed)[2:]} - {program.lower()}
    return bool(wanted & {w.lower() for w in _words(now)[1:]})


def watch(state: dict[str, Any], key: str, command: str | None, kept, repeated: int) -> None:
    """A failure came (`key`, of `command`; `kept` redacts what is saved): the agent's next words
    may say why it fails, and once it came `repeated` - 1 times a later call may be its way out
    (at most 8 failures watched)."""
    seen = state["errors"][key]
    if command and "cmd" not in seen:
        seen["cmd"] = kept(command[:300])
    watching = state.setdefault("watching", [])  # [key, tool, program], cheap to pass over on every call
    if not seen.get("way") and seen["count"] >= repeated - 1 and all(w[0] != key for w in watching):  # it may come again
        watching.append([key, seen["tool"], _program(seen.get("cmd") or "") if seen["tool"] in SHELL_TOOLS else ""])
        del watching[:-8]
    state["explaining"] = [key, 1]


def called(state: dict[str, Any]) -> None:
    """The agent made a call: its words about a failure come before its second call after it."""
    if state.get("explaining"):
        state["explaining"][1] -= 1
        if state["explaining"][1] < 0:
            state["explaining"] = None


def ways_out(state: dict[str, Any], tool: str | None, target: str | None, before) -> list[str]:
    """The failures watched (`state["watching"]`) that a call which just worked is the way out
    of: a shell command doing the same work differently, or the same file call working after
    another call (`before()`: the call that worked before this one, shown). Returns their keys;
    each is watched no more."""
    learned: list[str] = []
    if not tool or not any(w[1] == tool for w in state["watching"]):
        return learned
    program = _program(target or "") if tool in SHELL_TOOLS else ""
    for watched in list(state["watching"]):
        key, _, wanted = watched
        seen = state["errors"].get(key)
        if seen is not None and watched[1] == tool and wanted == program and same_work(tool, seen.get("cmd") or "", target or ""):
            if tool in SHELL_TOOLS and target != seen.get("cmd"):
                seen["way"] = f"`{wording.title_of(target or '', 80)}`"
            elif tool not in SHELL_TOOLS and (shown := before()):
                seen["way"] = f"{shown} first"  # the same call worked after this one
            learned += [key] if seen.get("way") else []
        if seen is None or seen.get("way"):
            state["watching"].remove(watched)
    return learned


def _program(command: str) -> str:
    """A command's program, without its folder (`.venv/bin/pip` is `pip`)."""
    first = command.split(maxsplit=1)
    return first[0].rsplit("/", 1)[-1] if first else ""


def explained(state: dict[str, Any], text: str, kept) -> None:
    """The agent's words after a failure (`state["explaining"]`: its key, while the agent has
    made at most one more call): a sentence saying why it fails is kept on it (`kept` redacts)."""
    key = (state.get("explaining") or (None,))[0]
    seen = state["errors"].get(key) if key else None
    if seen is not None and not seen.get("cause") and (found := cause(text, f"{seen['example']} {seen.get('cmd') or ''}")):
        seen["cause"] = kept(found)


def pitfall(key: str, seen: dict[str, Any], settings: Settings) -> Candidate:
    """The pitfall a repeated failure taught, titled with why it fails or the way out, the error
    and where it first came from in the content."""
    tool = seen["tool"]
    failing = f"`{wording.title_of(seen['cmd'], 60)}`" if seen.get("cmd") and tool in SHELL_TOOLS else \
        (seen.get("call") or tool)
    if seen.get("cause"):
        title = phrasing.cap(f"{failing} fails: {seen['cause']}")
    else:
        title = phrasing.cap(f"{failing} fails; {seen['way']} works instead")
    scores = settings.scores
    return Candidate(
        key=f"pitfall:{digest(key)}", type="pitfall", title=title,
        content="\n".join(filter(None, [
            f"{tool} failed {seen['count']} times in one session with the same error: {seen['example']}",
            f"The agent found: {seen['cause']}" if seen.get("cause") else "",
            f"What worked: {seen['way']}" if seen.get("way") and not seen.get("cause") else "",
            f"First seen running {seen['call']}." if seen.get("call") and seen["call"] != tool else "",
            f"The output began: {seen['opening']}" if seen.get("opening") else "",
            *(f"Each time it also warned: {text}" for count, text in (seen.get("warnings") or {}).values()
              if count >= 2 and text != seen.get("opening"))][:6])),
        tags=("heuristic", "repeated-error", tool.lower()),
        confidence=min(scores["cap.repeated_error"], scores["start.repeated_error"]
                       + scores["step.error_repeat"] * (seen["count"] - settings.repeated_error)),
        evidence=tuple(evidence(n, t, "tool_error", f"{tool}: {seen['example']}") for n, t in seen["lines"]),
    )
