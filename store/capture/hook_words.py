"""What a hook said in a session: Claude Code writes a blocking hook's output into the session
(`Stop hook feedback:`, `PreToolUse:Bash hook blocking error from command:`, or a refused tool
call's `Bash operation blocked by hook:`). Its complaint, the rule it states, whether it says
what to do instead, and the candidate's content for it (`store.capture.heuristics`)."""

from __future__ import annotations

import re
from typing import Any

# Claude Code writes hook output into the session as `Stop hook feedback:\n…` or
# `PreToolUse:Bash hook blocking error from command: "cmd": …`, sometimes in a system reminder.
_HOOK = re.compile(
    r"^\s*(?:<system-reminder>\s*)?((?:Stop|SubagentStop|PreToolUse|PostToolUse|UserPromptSubmit)(?::\w+)?)"
    r" hook (?:feedback|blocking error from command(?: \"[^\"\n]*\")?)\s*:\s*", re.I)
_HOOK_COMMAND = re.compile(r'^"[^"\n]*"\s*:\s*')
_HOOK_NOISE = re.compile(r"^(?:\[[^\]\n]*\]:\s*)?#*\s*(?:Running .*checks?\.*|---+|No stderr output)\s*$", re.I)
_HOOK_RULE = re.compile(r"\b(?:cannot|can't|must|not allowed|refuse[sd]?|blocked|required|forbidden)\b", re.I)
_HOOK_FAILURE = re.compile(r"\bfail", re.I)


def bare_result(output: str) -> str:
    """A tool result without Claude Code's `<tool_use_error>` wrapper and leading space."""
    text = output.lstrip()
    return text[len("<tool_use_error>"):].lstrip() if text.startswith("<tool_use_error>") else text


# Claude Code's result for a tool call a PreToolUse hook refused: `Bash operation blocked by hook:`
# then `- [hook command]: its message` lines.
_BLOCKED = re.compile(r"^(\w+) operation blocked by hook:\s*")
_BLOCKED_LINE = re.compile(r"^-\s*\[[^\]\n]*\]:\s*")


def hook_feedback(text: str, tool: str | None = None) -> tuple[str, str] | None:
    """(hook name, its complaint) for text a blocking hook wrote into the session, or None.
    The complaint keeps the lines that say what is wrong and what to do, without banners. With
    `tool` (the text is that tool call's result), a PreToolUse hook must name that tool: a
    WebFetch result that starts `PreToolUse:Bash hook…` is the fetched page, not a hook."""
    text = bare_result(text) if tool else text
    blocked = _BLOCKED.match(text) if tool else None
    if blocked is not None:
        if blocked.group(1) != tool:
            return None
        name = f"PreToolUse:{tool}"
        body = "\n".join(_BLOCKED_LINE.sub("", line) for line in text[blocked.end():].splitlines())
    else:
        found = _HOOK.match(text)
        if found is None:
            return None
        name = found.group(1)
        if tool and (":" not in name or name.split(":", 1)[1].lower() != tool.lower()):
            return None
        body = _HOOK_COMMAND.sub("", text[found.end():].replace("</system-reminder>", ""), count=1)
    kept: list[str] = []
    for raw in body.splitlines():
        line = raw.strip().replace("</tool_use_error>", "").strip()
        if not line or _HOOK_NOISE.match(line):
            continue
        if line.startswith("If you've hit a problem"):
            break
        kept.append(line.lstrip("#").strip())
    return name, "\n".join(kept[:12])


_HOOK_ADVICE = re.compile(r"\b(?:use|instead|open|run|please|should|must|try|create|ask)\b", re.I)


def hook_advises(complaint: str) -> bool:
    """The hook says what to do instead ("Open a pull request from a branch")."""
    return bool(_HOOK_ADVICE.search(complaint))


def hook_lesson(complaint: str) -> str:
    """The sentences of a hook's complaint that state the rule (the first one, and any line
    that says what to do), for the title and the key of its candidate."""
    lines = [line for line in complaint.splitlines() if line]
    if not lines:
        return ""
    for rule in (_HOOK_RULE, _HOOK_FAILURE):
        for line in lines:
            if rule.search(line):
                return line
    return lines[0]


def went_around(signal: dict[str, Any]) -> bool:
    """A hook blocked a call without saying what to do instead, and the agent went on with other
    calls: a way around the hook, which is worth knowing before the next session tries it."""
    return bool(signal.get("after")) and not hook_advises(signal["words"])


def hook_content(signal: dict[str, Any]) -> str:
    """The hook's rule first, then the rest of what it said."""
    statement = hook_lesson(signal["words"])
    rest = [line for line in signal["words"].splitlines() if line and line != statement]
    blocked = f" from running {signal['blocked']}" if signal.get("blocked") else ""
    parts = [f"A {signal['hook']} hook blocked the agent{blocked}: {statement}", *rest[:8]]
    if went_around(signal):
        parts.append("The agent then went around it with: " + "; then ".join(signal["after"]))
    return "\n".join(parts)
