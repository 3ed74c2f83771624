"""What a person's words in a session say: a rule, a correction, a choice, a question about a bug,
a hook's complaint, a rejected tool call's reason, or chatter that teaches nothing.

Pure functions on text, used by the heuristics (`store.capture.heuristics`) to turn a session's own
signals into inbox candidates without a model. Each reader returns None when the text is not
that signal, so a caller tries them in order and stops at the first that answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from store.engine.settings import CaptureConfidence

REJECTION = "The user provided the following reason for the rejection:"
DECLINED = "The user doesn't want to proceed with this tool use"
ANSWERED = "User has answered your questions:"

# Claude Code writes hook output into the session as `Stop hook feedback:\n…` or
# `PreToolUse:Bash hook blocking error from command: "cmd": …`, sometimes in a system reminder.
_HOOK = re.compile(
    r"^\s*(?:<system-reminder>\s*)?((?:Stop|SubagentStop|PreToolUse|PostToolUse|UserPromptSubmit)(?::\w+)?)"
    r" hook (?:feedback|blocking error from command(?: \"[^\"\n]*\")?)\s*:\s*", re.I)
_HOOK_COMMAND = re.compile(r'^"[^"\n]*"\s*:\s*')
_HOOK_NOISE = re.compile(r"^(?:\[[^\]\n]*\]:\s*)?#*\s*(?:Running .*checks?\.*|---+|No stderr output)\s*$", re.I)
_HOOK_RULE = re.compile(r"\b(?:cannot|can't|must|not allowed|refuse[sd]?|blocked|required|forbidden)\b", re.I)
_HOOK_FAILURE = re.compile(r"\bfail", re.I)

# Text a client wraps around what the user did not type: slash-command echoes, local command
# output, interruptions, reminders.
_NOT_TYPED = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>",
              "Caveat: The messages below", "[Request interrupted", "<system-reminder>", "<task-notification>",
              "This session is being continued from a previous conversation", "<bash-input>", "<bash-stdout>")

_CHATTER = re.compile(
    r"^(?:y|yes|yeah|yep|ok|okay|k|sure|no|nope|thanks?(?: you)?|thx|great|nice|cool|perfect|good|lgtm|done|"
    r"go|go on|go ahead|continue|proceed|keep going|do it|next|retry|try again|(?:can|could) you (?:retry|try again)|"
    r"sounds good|looks good|apply (?:phase|step|part) \w+|(?:start|begin|run) (?:phase|step) \w+|"
    r"commit(?: it| this)?|push(?: it)?|ship it)\W*$", re.I)

# A rule: an imperative near the start of a sentence, or words that only rules use.
_RULE_STRONG = re.compile(
    r"(?:^|[,;:—–(]\s*|\s-\s+|\b(?:please|and|but|so|also|then|just)\s+)"
    r"(?:never|always|don'?t|do not|dont|avoid|stop|make sure|be sure to|remember to|from now on|going forward|"
    r"mustn'?t|must not|must|no more)\b", re.I)
_RULE_WEAK = re.compile(
    r"\b(?:instead of|instead|rather than|should(?:n'?t| not)?|prefer|i(?:'d| would) rather|i want you to|"
    r"please use|use \S+(?: \S+){0,3} (?:not|instead)|not \S+(?: \S+){0,2} but)\b", re.I)
# "don't worry", "I don't know": the words of a rule, not a rule.
_NOT_RULE = re.compile(r"\b(?:don'?t|do not) (?:worry|know|think|see|understand|remember|get|mind|care)\b|"
                       r"\bi (?:don'?t|do not|never|always)\b(?! want| like| use)", re.I)
# Words that tie a remark to the task in hand, not to how work is done.
_TASK_LOCAL = re.compile(
    r"\b(?:for now|right now|this time|at the moment|for this (?:task|pr|file|one|session)|in (?:this|the next|another) "
    r"session|later|first,|yet)\b", re.I)
_CHOICE = re.compile(
    r"\b(?:i (?:choose|chose|pick|picked|prefer|decided|decide|went with)|we(?:'ll| will)? (?:go|went) with|"
    r"let'?s (?:go with|use|do|keep|stick with|pick)|i'?ll (?:go|take) with|(?:go|going) with (?:option|the|approach|plan|[ab12]\b)|"
    r"we (?:decided|chose|agreed)|decision:|option [a-d1-4] (?:please|it is)|stick with)\b", re.I)
_BUG_WORDS = re.compile(
    r"\b(?:bug|broken|wrong|incorrect|doesn'?t work|does not work|isn'?t working|not working|fails?|failing|crash\w*|"
    r"missing|forgot|forgotten|leak\w*|off[- ]by[- ]one|race|should(?:n'?t| not)? (?:be|have|it)|why (?:is|does|did|are)|"
    r"isn'?t (?:it|this|that)|aren'?t|wouldn'?t|won'?t)\b", re.I)
_AGREEMENT = re.compile(
    r"^\W*(?:you(?:'re| are) (?:absolutely |completely |totally )?(?:right|correct)|good (?:catch|point|eye)|"
    r"great (?:catch|point)|nice catch|(?:i )?apologi[sz]e|sorry|my (?:mistake|bad|apologies)|"
    r"that'?s (?:right|correct|a (?:good|great|fair) point)|indeed|ah,? (?:yes|right|i see)|oops|"
    r"(?:yes|right),? (?:that'?s|it'?s|this is) (?:a bug|wrong|incorrect)|understood)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SPACE = re.compile(r"\s+")
_SCORES = CaptureConfidence()  # the defaults of config `capture.confidence`


@dataclass(frozen=True)
class Said:
    """A signal read from words: its kind (rule, choice, question, rejection, hook), a type for
    the memory, the words that say the lesson, a title and a confidence from the wording."""

    kind: str
    type: str
    words: str
    title: str
    confidence: float
    tags: tuple[str, ...] = ()


def typed_by_user(text: str) -> bool:
    """False for text the client wrote into the user's turn (command echoes, reminders, ...)."""
    head = text.lstrip()[:200]
    return bool(head) and not any(mark in head for mark in _NOT_TYPED)


def is_chatter(text: str) -> bool:
    words = text.split()
    return len(words) < 3 or bool(_CHATTER.match(" ".join(words)))


def title_of(text: str, limit: int = 90) -> str:
    """The first sentence, on one line, at most `limit` characters."""
    first = _SENTENCE.split(text.strip(), maxsplit=1)[0]
    first = _SPACE.sub(" ", first).strip().rstrip(".:")
    if len(first) <= limit:
        return first
    cut = first[:limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut).rstrip(" ,;:—–-") + "…"


def one_line(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def rejection_reason(output: str) -> str | None:
    """The user's reason for rejecting a tool call, from its result, or None."""
    at = output.find(REJECTION)
    if at < 0:
        return None
    reason = output[at + len(REJECTION):].replace("</tool_use_error>", "").strip()
    return reason or None


def declined(output: str) -> bool:
    """A tool call the user stopped (with or without a reason): not a failure of the tool."""
    return DECLINED in output[:300] or output.lstrip().startswith(("Cancelled: parallel tool call",
                                                                   "<tool_use_error>Cancelled: parallel"))


def hook_feedback(text: str) -> tuple[str, str] | None:
    """(hook name, its complaint) for text a blocking hook wrote into the session, or None.
    The complaint keeps the lines that say what is wrong and what to do, without banners."""
    found = _HOOK.match(text)
    if found is None:
        return None
    body = _HOOK_COMMAND.sub("", text[found.end():].replace("</system-reminder>", ""), count=1)
    kept: list[str] = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line or _HOOK_NOISE.match(line):
            continue
        if line.startswith("If you've hit a problem"):
            break
        kept.append(line.lstrip("#").strip())
    return found.group(1), "\n".join(kept[:12])


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


def _rule_sentences(text: str) -> list[str]:
    sentences = [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]
    return [s for s in sentences if (_RULE_STRONG.search(s) or _RULE_WEAK.search(s)) and not _NOT_RULE.search(s)]


def _from_rule_words(sentence: str) -> str:
    """A sentence from where its rule starts ("The CSV has 1234.5 — never format money with
    floats" → "never format money with floats"), for a title."""
    found = _RULE_STRONG.search(sentence)
    if found is None or found.start() == 0:
        return sentence
    start = found.start() + len(found.group(0)) - len(found.group(0).lstrip(",;:—–( -"))
    rest = sentence[start:].strip()
    return rest[0].upper() + rest[1:] if rest else sentence


def read_rejection(reason: str, tool_text: str, scores: CaptureConfidence = _SCORES) -> Said | None:
    """A rejected tool call's reason: the user's preference or convention, in their words."""
    if is_chatter(reason):
        return None
    confidence = scores.rejection
    if _RULE_STRONG.search(reason) or _RULE_WEAK.search(reason):
        confidence += scores.rejection_rule_words
    if _TASK_LOCAL.search(reason):
        confidence -= scores.rejection_task_local
    if len(reason.split()) < 5:
        confidence -= scores.rejection_short
    kind = "convention" if _RULE_STRONG.search(reason) else "preference"
    words = reason if not tool_text else f"{reason}\n(said when rejecting {tool_text})"
    return Said("rejection", kind, words, title_of(reason), round(confidence, 2), ("rejection",))


def read_user_text(text: str, scores: CaptureConfidence = _SCORES) -> Said | None:
    """A user's own message: a rule or correction, a stated choice, or a question that points at
    a bug (which counts only if the agent then agrees). None for anything else."""
    if not typed_by_user(text) or is_chatter(text):
        return None
    short = len(text) <= 400
    rules = _rule_sentences(text)
    if _CHOICE.search(text) and not rules:
        sentence = next(s for s in (x.strip() for x in _SENTENCE.split(text)) if s and _CHOICE.search(s))
        words = text.strip() if short else sentence
        confidence = scores.choice - (scores.choice_task_local if _TASK_LOCAL.search(sentence) else 0.0)
        return Said("choice", "decision", words, title_of(sentence), round(confidence, 2), ("choice",))
    if rules:
        strong = any(_RULE_STRONG.search(s) for s in rules)
        words = text.strip() if short else " ".join(rules[:3])
        confidence = ((scores.rule_strong if strong else scores.rule_weak)
                      - (scores.rule_task_local if all(_TASK_LOCAL.search(s) for s in rules) else 0.0))
        if not short:
            confidence -= scores.rule_long  # a long message is more often a task's specification than a rule
        bug = bool(_BUG_WORDS.search(text))
        type_ = "pitfall" if bug and not strong else "convention"
        return Said("rule", type_, words, title_of(_from_rule_words(rules[0])), round(confidence, 2), ("user-rule",))
    if short and "?" in text and _BUG_WORDS.search(text):
        return Said("question", "pitfall", text.strip(), title_of(text), scores.bug_question, ("user-question",))
    return None


def agrees(text: str) -> bool:
    """The agent's reply opens by agreeing it was wrong ("You're right", "Good catch", ...)."""
    return bool(_AGREEMENT.match(text))


def read_answers(output: str, scores: CaptureConfidence = _SCORES) -> Said | None:
    """Answers to the agent's questions (Claude Code's AskUserQuestion): the choices made."""
    at = output.find(ANSWERED)
    if at < 0:
        return None
    pairs = re.findall(r'"([^"]+)"\s*=\s*"([^"]+)"', output[at:])
    if not pairs:
        return None
    words = "; ".join(f"{question} {answer}" for question, answer in pairs)
    return Said("choice", "decision", words, title_of(f"{pairs[0][1]} ({pairs[0][0]})"), scores.choice, ("choice",))
