"""What a person's words in a session say: a rule, a correction, a choice, a question about a bug,
a hook's complaint, a rejected tool call's reason, or chatter that teaches nothing.

Pure functions on text, used by the heuristics (`store.capture.heuristics`) to turn a session's own
signals into inbox candidates without a model. Each reader returns None when the text is not
that signal, so a caller tries them in order and stops at the first that answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from store.capture import phrasing
from store.capture.hook_words import bare_result
from store.engine.settings import CaptureConfidence

# Every confidence capture gives a candidate, and every step up or down, in one table: what a
# signal starts at (`start.*`), and what raises or lowers it (`step.*`, `cap.*`). The values are
# settings (config `capture.confidence.*`, store/engine/settings.py); this is their default table.
# Each reader takes the table in force as `scores`; the heuristics pass the store's.
CONFIDENCE: Mapping[str, float] = CaptureConfidence().table()

REJECTION = "The user provided the following reason for the rejection:"
DECLINED = "The user doesn't want to proceed with this tool use"
INTERRUPTED = "[Request interrupted by user"  # "…]" or "… for tool use]": the user stopped the agent
ANSWERED = "User has answered your questions:"
PLAN_APPROVED = "User has approved your plan"  # Claude Code's result of ExitPlanMode, approved

# Text a client wraps around what the user did not type: slash-command echoes, local command
# output, interruptions, reminders.
_NOT_TYPED = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>",
              "Caveat: The messages below", "[Request interrupted", "<system-reminder>", "<task-notification>",
              "This session is being continued from a previous conversation", "<bash-input>", "<bash-stdout>")

_CHATTER = re.compile(
    r"^(?:y|yes|yeah|yep|ok|okay|k|sure|no|nope|thanks?(?: you)?|thx|great|nice|cool|perfect|good|lgtm|done|"
    r"sí|si|vale|dale|gracias|listo|perfecto|bien|claro|continúa|continua|sigue|adelante|hazlo|"
    r"go|go on|go ahead|continue|proceed|keep going|do it|next|retry|try again|(?:can|could) you (?:retry|try again)|"
    r"sounds good|looks good|apply (?:phase|step|part) \w+|(?:start|begin|run) (?:phase|step) \w+|"
    r"commit(?: it| this)?|push(?: it)?|ship it)\W*$", re.I)

# A rule: an imperative near the start of a sentence, or words that only rules use.
_RULE_STRONG = re.compile(
    r"(?:^|[,;:—–(]\s*|\s-\s+|\b(?:please|and|but|so|also|then|just|i|should|must|"
    # a rule asked politely or said as a wish: "can you avoid X", "I want to avoid X", "I don't want X"
    r"(?:can|could|would) you(?: please)?|i(?:'d| would)? (?:like|want) (?:you )?to)\s+)"
    r"(?:never|always|don'?t|do not|dont|avoid|stop|make sure|be sure to|remember to|from now on|going forward|"
    r"be careful (?:not )?to|careful not to|"
    r"mustn'?t|must not|must|no more|no (?:new|extra|additional)(?! (?:errors?|warnings?|failures?|issues?|bugs?|problems?|regressions?|work)\b)|"
    # Spanish: "nunca", "siempre", "no uses / no toques", "asegúrate de", "a partir de ahora"
    r"nunca|siempre|no (?:uses|hagas|toques|edites|modifiques|borres|cambies|crees|pongas|agregues|añadas|"
    r"subas|ejecutes|instales|dejes|metas|mezcles|rompas|olvides|inventes)|asegúrate de|recuerda|a partir de ahora|"
    r"de ahora en adelante|jamás|evita|no vuelvas a|deja de)\b|"
    # the rest of the code is off limits: "…, nothing else must be touched"
    r"\bnothing else (?:must|should|may|can) (?:be )?(?:touched|changed|modified|edited)\b", re.I)
_RULE_WEAK = re.compile(
    r"\b(?:instead of|instead|rather than|should(?:n'?t| not)?|prefer|i(?:'d| would) rather|i want you to|"
    r"please use|use \S+(?: \S+){0,3} (?:not|instead)|not \S+(?: \S+){0,2} but|"
    r"(?:has|have) to be|(?:re)?use (?:the |our )?existing|reuse|reutiliza|usa (?:el|la|los|las) \S+ (?:que ya|existentes?)|"
    r"en (?:vez|lugar) de|prefiero|debes|deberías|tienes que|hay que|usa \S+ (?:y no|en vez)|no quiero que|"
    r"quiero que|tienen? que (?:ser|estar|ir|usar)|deben? (?:ser|estar|ir|usar))\b|"
    # a thing to use, named bare as the whole sentence ("Use uv pip", "use ruff format"; a single word,
    # "use pnpm", is still too vague a title for `read_user_text`), not an object of the task in hand
    # ("use the other file", "use a loop"), or said to hold everywhere
    r"^\W*(?:just |always |please )?use\s+(?!(?:a|an|the|this|that|these|those|it|them|another|other|some|one|my|"
    r"your|our|its|their|same|both|all|any|each|more|less|instead|option|approach|plan|step|phase|solution|version|"
    r"method|way|fix|case|variant|path|number|\d+)\b)[^\s,;:.!?]+(?:\s+[^\s,;:.!?]+)?\W*$|"
    r"\buse\b.{1,60}\b(?:everywhere|in all places|throughout the (?:code|project|repo))", re.I)
# Hedges, conditions and questions: a rule in weak words that is only a thought about the task.
# A sentence that opens as a question does ("Are there any tests we should…"), whatever its end.
QUESTION_OPENING = r"^(?:are|is|was|were|do|does|did|have|has|shall|should|will) (?:there|we|you|i|it|this|that|they)\b"
# A question is no rule: one that ends with "?", and one that opens as a question does, whatever
# its end ("Are there any tests we should run for D. Feature Verification?" splits at "D.").
_HEDGE = re.compile(r"\b(?:probably|maybe|perhaps|might|i think|i thought|if we|if you|quizás|tal vez|"
                    r"a lo mejor|si (?:vamos|usamos|hacemos))\b|\?\s*$|^¿|" + QUESTION_OPENING, re.I)
# "don't worry", "I don't know": the words of a rule, not a rule.
_NOT_RULE = re.compile(r"\b(?:don'?t|do not) (?:worry|know|think|see|understand|remember|get|mind|care)\b|"
                       r"\bi (?:don'?t|do not|never|always)\b(?! want| like| use)", re.I)
# Words that tie a remark to the task in hand, not to how work is done.
_TASK_LOCAL = re.compile(
    r"\b(?:for now|right now|this time|at the moment|for this (?:task|pr|file|one|session)|in (?:this|the next|another) "
    r"session|later|today|tonight|first,|yet|(?<!from )(?<!right )now(?! on\b)|por ahora|ahora mismo|esta vez|hoy)\b", re.I)
# A question that challenges what the agent did ("why are you…", "are you sure…"): a correction.
_CHALLENGE = re.compile(r"\bwhy (?:are|did|do|is|would)\b|\bare you sure\b|\byou (?:have not|haven'?t|didn'?t|did not|"
                        r"forgot|missed|broke)\b|\bnot\b|n't\b|\b(?:is|do|did|does|wo|ca|have|has|should|are|was|were|could|would)nt\b|"
                        r"\binstead\b|\bwrong\b|!|\bpor qué\b|"
                        r"\bestás seguro\b|\bno\b", re.I)
_LASTING = re.compile(r"\b(?:ever|anymore|any more|every time|each time|jamás|nunca más)\b", re.I)
_FENCED = re.compile(r"```.*?(?:```|$)", re.S)
_CHOICE = re.compile(
    r"\b(?:i (?:choose|chose|pick|picked|prefer|decided|decide|went with)|we(?:'ll| will)? (?:go|went) with|"
    r"let'?s (?:go with|use|do|keep|stick with|pick)|i'?ll (?:go|take) with|(?:go|going) with (?:option|the|approach|plan|[ab12]\b)|"
    r"we (?:decided|chose|agreed)|decision:|option [a-d1-4] (?:please|it is)|stick with|"
    # a default chosen: "make German the default language", "pnpm should be the default"
    r"make (?:\S+ ){1,3}the default|\S+ (?:should be|is going to be) the default)\b", re.I)
_BUG_WORDS = re.compile(
    r"\b(?:bug|broken|wrong|incorrect|doesn'?t work|does not work|isn'?t working|not working|fails?|failing|crash\w*|"
    r"missing|forgot|forgotten|leak\w*|off[- ]by[- ]one|race|should(?:n'?t| not)? (?:be|have|it)|why (?:is|does|did|are)|"
    r"isn'?t (?:it|this|that)|aren'?t|wouldn'?t|won'?t|"
    # questions that challenge the approach rather than the code: kept only if the agent agrees
    r"over-?engineer\w*|overdo\w*|overkill|over-?complicat\w*|too (?:complex|much)|unnecessar\w*|"
    r"are you sure|do we (?:really|even) need|already (?:have|done|exists?)|"
    r"no funciona|falla|roto|está mal|estás seguro|demasiado complejo|(?:te )?olvidaste|por qu[eé] (?:estás|está|es|hiciste|has))\b", re.I)
_AGREEMENT = re.compile(
    r"^\W*(?:you(?:'re| are) (?:absolutely |completely |totally )?(?:right|correct)|good (?:catch|point|eye)|"
    r"great (?:catch|point)|nice catch|(?:i )?apologi[sz]e|sorry|my (?:mistake|bad|apologies)|"
    r"that'?s (?:right|correct|a (?:good|great|fair) point)|indeed|ah,? (?:yes|right|i see)|oops|"
    r"(?:yes|right),? (?:that'?s|it'?s|this is) (?:a bug|wrong|incorrect)|understood|"
    r"tienes (?:toda la )?razón|perdón|lo siento|disculpa|mi error|correcto|buen punto|buena observación|"
    r"(?:es )?cierto|entendido|ah,? claro|"
    r"(?:ah,? )?i (?:understand|see) now|ah,? i (?:understand|see)|thanks for (?:the )?(?:clarification|correction|clarifying)|"
    r"ah,? (?:ya )?(?:entiendo|veo)|gracias por (?:la )?(?:aclaración|corrección))\b", re.I)
# The agent's own rules file: "update my cursor rules with…", "add to AGENTS.md that…".
_RULES_FILE = r"(?:update|add to) (?:my |the |our |your )?(?:cursor ?rules|\.cursorrules|agents\.md|rules file)|"
# The user asks the agent to keep something: "remember that", "update your memory", "add it to CLAUDE.md".
_REMEMBER = re.compile(
    r"\b(?:remember (?:that|this|to)|keep in mind|don'?t forget|note that|from now on|going forward|" + _RULES_FILE +
    r"update (?:\w+ )?(?:memory|memories|claude\.md)|(?:add|save|write|put) (?:this|that|it) (?:to|in|into) "
    r"(?:your |the )?(?:memory|memories|claude\.md)|recuerda que|ten en cuenta|no olvides|"
    r"actualiza (?:tu |la )?memoria)\b", re.I)
# What the opening prompt (the task) asks the agent to keep in mind: a fact, not a step of the task
# ("remember to…", "update CLAUDE.md" are the task's steps there).
_OPENING_NOTE = re.compile(r"\b(?:keep in mind(?: that)?|note that|remember that|fyi|ten en cuenta(?: que)?|recuerda que|"
                           r"ojo que)\b", re.I)
# The part of a request to remember that only asks for it ("update your memory accordingly").
_MEMORY_ASK = re.compile(r"\b(?:update (?:\w+ )?(?:memory|memories|claude\.md)|" + _RULES_FILE +
                         r"(?:add|save|write|put) (?:this|that|it) "
                         r"(?:to|in|into) (?:your |the )?(?:memory|memories|claude\.md)|actualiza (?:tu |la )?memoria)\b",
                         re.I)
# An agent's proposal or plan, waiting for the user's approval.
_PROPOSAL = re.compile(
    r"\b(?:propos(?:e|ed|al)|recommend(?:ed|ation)?|(?:implementation|the) plan|approach|solution|"
    r"would you like me to|shall i|should i (?:go ahead|proceed|implement)|want me to|propuesta|plan|"
    r"quieres que|te parece|procedo)\b", re.I)
_APPROVAL = re.compile(
    r"^\W*(?:y|yes|yeah|yep|ok|okay|sure|go|go ahead|do it|proceed|approved?|lgtm|sounds good|looks good|"
    r"perfect|great|implement it|ship it|sí|si|vale|dale|adelante|hazlo|de acuerdo|perfecto)"
    r"(?:[,.!]*\s*(?:please|go ahead|do it|proceed|implement it|thanks|let'?s do it|adelante|hazlo))?\W*$", re.I)
_PROPOSAL_HEAD = re.compile(r"^\s*#{1,6}\s*.*\b(?:propos|solution|plan|recommend|approach|soluci|propuest|recomend|"
                            r"enfoque)", re.I)
# "I shouldn't be editing X" in the agent's reply: the rule, said by the agent.
_AGENT_RULE = re.compile(
    r"(?:\bI (?:should(?:n'?t| not)|must(?:n'?t| not)|need to|should|must)|(?:^|,\s*|\by\s+)(?:no )?(?:debo|debería))"
    r"(?: have| be)?\s+(.+)", re.I)
_SENTENCE = re.compile(r"(?<![\s(]e\.g\.)(?<![\s(]i\.e\.)(?<=[.!?])\s+|\n+")
_SPACE = re.compile(r"\s+")


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


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, as the rules read them (an "e.g." or "i.e." ends none)."""
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def one_line(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def rejection_reason(output: str) -> str | None:
    """The user's reason for rejecting a tool call, from its result, or None. Only a result that
    is Claude Code's rejection as a whole counts (`declined`), never the sentence inside a tool's
    output."""
    if not declined(output):
        return None
    at = output.find(REJECTION)
    if at < 0:
        return None
    reason = output[at + len(REJECTION):].replace("</tool_use_error>", "").strip()
    return reason or None


def declined(output: str) -> bool:
    """A tool call the user stopped (with or without a reason): not a failure of the tool. The
    result must be Claude Code's own: it starts with the rejection, not merely contains it."""
    return bare_result(output).startswith((DECLINED, "Cancelled: parallel tool call", INTERRUPTED))


_NEW_TASK = re.compile(r"^\s*<command-name>/(?:clear|compact|new|reset)</command-name>")


def new_task(text: str) -> bool:
    """`/clear` or `/compact`: the conversation starts again."""
    return bool(_NEW_TASK.match(text))


def interrupted(text: str) -> bool:
    """Claude Code's mark that the user stopped the agent: `[Request interrupted by user…]`."""
    return text.lstrip().startswith(INTERRUPTED)


def _rule_sentences(text: str, *, strong_only: bool = False) -> list[str]:
    """The sentences of `text` that state a rule. A rule in weak words ("should", "instead")
    counts only when it is not hedged, conditional or a question."""
    sentences = [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]
    found = []
    for sentence in sentences:
        if _NOT_RULE.search(sentence):
            continue
        if _RULE_STRONG.search(sentence) and not sentence.rstrip().endswith("?"):
            found.append(sentence)
        elif not strong_only and _RULE_WEAK.search(sentence) and not _HEDGE.search(sentence):
            found.append(sentence)
    return found


def _from_rule_words(sentence: str) -> str:
    """A sentence from where its rule starts ("The CSV has 1234.5 — never format money with
    floats" → "never format money with floats"), for a title."""
    found = _RULE_STRONG.search(sentence)
    if found is None:
        return sentence
    if found.start() == 0 or re.match(r"(?:should|must)\b", found.group(0).lstrip(",;:—–( -"), re.I):
        # "Tests must always pass": the rule is the whole sentence, its subject included
        said = _as_said_to_agent(sentence.strip())
        return said[0].upper() + said[1:] if said else sentence
    start = found.start() + len(found.group(0)) - len(found.group(0).lstrip(",;:—–( -"))
    rest = _as_said_to_agent(sentence[start:].strip())
    return rest[0].upper() + rest[1:] if rest else sentence


# A rule asked politely or said as a wish, and a warning, in the words of a rule: "can you avoid
# X" → "avoid X", "I don't want to X" → "don't X", "be careful to not X" → "don't X".
_WISH = re.compile(r"^(?:(?:can|could|would) you(?: please)?|i(?:'d| would)? (?:like|want) (?:you )?to|i|"
                   r"(?:you )?(?:should|must)(?= (?:always|never)))\s+(?=\S)", re.I)
_WARY = re.compile(r"^(?:be )?careful (?:to not|not to|to never|never to)\s+", re.I)
_UNWANTED = re.compile(r"^(?:don'?t|do not) want (?:you )?to\s+", re.I)


def _as_said_to_agent(rule: str) -> str:
    rule = _WISH.sub("", rule)
    return _UNWANTED.sub("don't ", _WARY.sub("don't ", rule))


# Agreeing with the agent, and a choice whose object is only a pronoun: they choose what the agent
# proposed (an approved proposal is read from the proposal), never a memory in their own words.
_AGREEING = re.compile(r"^\W*(?:i (?:fully |totally |completely )?agree|agreed|sounds good|makes sense|de acuerdo|"
                       r"estoy de acuerdo)\b", re.I)
_CHOSEN_PRONOUN = re.compile(r"\blet'?s (?:do|use|keep|go with|stick with|pick) (?:it|them|that|this|those|these|all(?: of them)?|"
                             r"both|the following|(?:with )?option \w+|(?:going|working|debugging)\b.*)\W*$", re.I)
_WARNS = re.compile(r"\b(?:be careful|careful not to|watch out|beware)\b", re.I)  # a warning of a failure: a pitfall


# "Let's update the plan", "Awesome, let's get started on X": a step proposed for the work in hand,
# not a rule, unless it says the rule lasts ("let's always…", "from now on let's…").
_SUGGESTS = re.compile(r"^\W*(?:\w+[,!]\s*)?let'?s\b(?! not\b)(?!.*\b(?:always|never|from now on|going forward|every time)\b)",
                       re.I)


def _conf(*keys: str, scores: Mapping[str, float] = CONFIDENCE) -> float:
    return round(sum(scores[key] for key in keys), 2)


def read_rejection(reason: str, tool_text: str, *, scores: Mapping[str, float] = CONFIDENCE) -> Said | None:
    """A rejected tool call's reason: the user's preference or convention, in their words."""
    if is_chatter(reason) or asks(reason) or phrasing.one_off(reason) or phrasing.vague(_title(reason)):
        return None  # "do it in the other file", "what does this do?": about this call only
    steps = ["start.rejection"]
    if _RULE_STRONG.search(reason) or _RULE_WEAK.search(reason):
        steps.append("step.rule_words")
    if _TASK_LOCAL.search(reason):
        steps.append("step.task_local")
    if len(reason.split()) < 5:
        steps.append("step.short")
    kind = "convention" if _RULE_STRONG.search(reason) else "preference"
    words = reason if not tool_text else f"{reason}\n(said when rejecting {tool_text})"
    return Said("rejection", kind, words, _title(reason), _conf(*steps, scores=scores), ("rejection",))


def _title(text: str) -> str:
    """The user's words phrased as the memory they teach (`store.capture.phrasing`)."""
    return phrasing.rule_title(text) or phrasing.calm(title_of(text))


def no_rule(sentence: str) -> bool:
    """The words of a rule that make none: "don't worry", "I don't know", "I always forget"."""
    return bool(_NOT_RULE.search(sentence))


def rule_of(sentence: str) -> str:
    """A sentence that states a rule, as the memory's title: from where its rule starts, a wish
    said as the rule ("I'd like to avoid X" → "Avoid X"), without shouting."""
    return _title(_from_rule_words(sentence))


_WH_QUESTION = re.compile(r"^\W*(?:what|which|where|when|who|whom|whose|how|is there|are there|do we have|does it|"
                          r"qué|que|cuál|cual|dónde|donde|cuándo|cuando|quién|cómo|como)\b", re.I)


def asks(text: str) -> bool:
    """A question that asks for information ("what should be X?", "where is the config?"), not one
    that challenges what the agent did ("why are you…?", "isn't this overkill?")."""
    parts = phrasing.clauses(text)
    stripped = text.strip()
    if not parts or not (stripped.endswith("?") or stripped.startswith("¿")):
        return False
    if len(parts) > 1 and any(_DOUBT.search(part) for part in parts[1:]):
        return False  # "what about issue 12? and are you sure we don't already have X?": the doubt counts
    return bool(_WH_QUESTION.match(parts[0])) or not (_CHALLENGE.search(text) or _BUG_WORDS.search(text))


# A question that doubts what the agent said or did, wherever it stands in the message.
_DOUBT = re.compile(r"\b(?:are you sure|do we (?:really|even) need|(?:don'?t|do not) we already|isn'?t (?:this|that|it) "
                    r"(?:overkill|overdoing|already)|why (?:are|did) you|estás seguro)\b", re.I)


def read_user_text(text: str, *, opening: bool = False, scores: Mapping[str, float] = CONFIDENCE) -> Said | None:  # noqa: C901 (the kinds of sentence, tried in order, each one branch)
    """A user's own message: a request to remember, a rule or correction, a stated choice, or a
    question that points at a bug (which counts only if the agent then agrees). None for
    anything else. The `opening` prompt is the session's task: only a rule in strong words
    inside it counts ("…; don't create new cards, reuse the /menu ones"), never the task."""
    if not typed_by_user(text) or is_chatter(text):
        return None
    if pasted(text):
        return None
    short = len(text) <= 400
    remember = _REMEMBER.search(text)
    if remember is not None and not opening:
        sentence = next((s for s in (x.strip() for x in _SENTENCE.split(text)) if s and _REMEMBER.search(s)), text)
        words = text.strip() if short else sentence
        if _MEMORY_ASK.search(sentence):  # "X. Update your memory.": the lesson is the rest
            kept = [s for s in (x.strip() for x in _SENTENCE.split(text)) if s and not _MEMORY_ASK.search(s)]
            title = _title("\n".join(kept) if kept else sentence)
        else:  # "Let's start on X. Also, keep in mind Y": the lesson is Y, not the task before it
            title = _title(sentence)
        type_ = "context" if phrasing.states_fact(title) and not _RULE_STRONG.search(title) else "convention"
        return Said("remember", type_, words, title, _conf("start.remember", scores=scores), ("user-rule",))
    if opening and (noted := _OPENING_NOTE.search(text)):  # "Add a logout button. Keep in mind that X": a fact
        sentence = next((s for s in (x.strip() for x in _SENTENCE.split(text)) if _OPENING_NOTE.search(s)), "")
        if sentence == text.strip():  # "Add the endpoint, FYI the sandbox answers in XML": the note after the task
            sentence = text[noted.start():].strip() if noted.start() > 0 else ""
        title = _title(sentence) if sentence and not asks(sentence) else None
        if title and len(title.split()) >= 3:  # a note is a fact, unless it tells the agent what to do
            type_ = "convention" if _RULE_STRONG.search(title) or phrasing.as_rule(title)[1] != "said" \
                or phrasing.imperative(title) else "context"
            return Said("remember", type_, sentence, title, _conf("start.opening_rule", scores=scores), ("user-rule", "opening"))
    if asks(text) or (phrasing.one_off(text) and not opening):
        return None  # a question for information, or an instruction about the work in hand
    rules = [r for r in _rule_sentences(text, strong_only=opening)
             if not phrasing.one_off(_from_rule_words(r)) and not phrasing.vague(_title(_from_rule_words(r)))
             and not _SUGGESTS.match(r)]
    if opening:
        if not rules:
            return None
        words = " ".join(rules[:3])
        return Said("rule", "convention", words, _title(_from_rule_words(rules[0])),
                    _conf("start.opening_rule", scores=scores), ("user-rule", "opening"))
    if _CHOICE.search(text) and not rules:
        sentence = next(s for s in (x.strip() for x in _SENTENCE.split(text)) if s and _CHOICE.search(s))
        if _HEDGE.search(sentence) or _AGREEING.search(sentence) or _CHOSEN_PRONOUN.search(sentence):
            return None  # "I agree with these three, let's do them": the agent's proposal accepted, if any
        words = text.strip() if short else sentence
        steps = ["start.choice"] + (["step.choice_task_local"] if _TASK_LOCAL.search(sentence) else [])
        return Said("choice", "decision", words, _title(sentence), _conf(*steps, scores=scores), ("choice",))
    if rules:
        strong = any(_RULE_STRONG.search(s) for s in rules)
        words = text.strip() if short else " ".join(rules[:3])
        steps = ["start.rule" if strong else "start.weak_rule"]
        if all(_TASK_LOCAL.search(s) for s in rules):
            steps.append("step.task_local")
        if not short:
            steps.append("step.long")  # a long message is more often a task's specification than a rule
        bug = bool(_BUG_WORDS.search(text))
        type_ = "pitfall" if (bug and not strong) or _WARNS.search(rules[0]) else "convention"
        return Said("rule", type_, words, _title(_from_rule_words(rules[0])), _conf(*steps, scores=scores), ("user-rule",))
    if short and "?" in text and _BUG_WORDS.search(text):
        # the question that doubts, of several ("what about X? and are you sure we don't already have Y?")
        sentences = [s for s in _SENTENCE.split(text) if s and s.strip()]
        first = next(iter(phrasing.clauses(sentences[0])), "")
        asked = next((s for s in sentences if _BUG_WORDS.search(s)), text) if _WH_QUESTION.match(first) else text
        title = phrasing.rule_title(asked) or title_of(asked)  # "can you check whether X?" → "Check whether X"
        challenge = phrasing.form(asked) == "challenge"  # "why did you replace X?": the rule, "Don't replace X"
        if not challenge and not title.startswith("Check whether") and _SENTENCE.split(asked.strip(), maxsplit=1)[0].endswith("?"):
            title = phrasing.cap(title_of(phrasing.plain(asked), 100))  # the question, as asked
            if asked != text.strip() and phrasing.clauses(asked):  # "and are you sure…?" → "Are you sure…?"
                title = phrasing.cap(phrasing.clauses(asked)[0], 99) + "?"
            title = title[:1].upper() + title[1:]
        # A challenge the agent agrees with is a standing rule, as when said with "!" (a convention).
        return Said("question", "convention" if challenge else "pitfall", text.strip(), title,
                    _conf("start.question", scores=scores), ("user-question",))
    return None


def read_statement(text: str, *, scores: Mapping[str, float] = CONFIDENCE) -> Said | None:
    """Anything else the user tells the agent ("x is forked from y", "that was only one of
    them"): a lesson only if the agent's reply opens by owning a mistake or a misunderstanding,
    which the caller checks. None for questions, hedged or task-local remarks, pasted text."""
    if (not typed_by_user(text) or is_chatter(text) or len(text) > 400 or "?" in text or pasted(text)
            or _HEDGE.search(text) or _TASK_LOCAL.search(text) or _NOT_RULE.search(text) or phrasing.one_off(text)):
        return None
    type_ = "pitfall" if _BUG_WORDS.search(text) else "context"
    return Said("said", type_, text.strip(), _title(text), _conf("start.said", scores=scores), ("user-said",))


def pasted(text: str) -> bool:
    """A message that is mostly pasted: documentation, a log, terminal output, a specification
    (many lines, a code block, or long). Rules inside it are the pasted text's, not the user's."""
    typed = _FENCED.sub("", text)
    if len(typed) < len(text) * 0.6:
        return True
    lines = [line for line in typed.splitlines() if line.strip()]
    return len(typed) > 1500 or len(lines) > 12


def read_correction(text: str, *, failed: bool = False, scores: Mapping[str, float] = CONFIDENCE) -> Said | None:
    """The user's next message after stopping the agent (an interrupt, or a rejected call with no
    reason): what they say then corrects what the agent was doing, whatever its form ("why are
    you editing generated code!", "that was one, do it in parallel"). None for chatter
    ("continue") and for text the user did not type."""
    if not typed_by_user(text) or is_chatter(text) or len(text) > 600:
        return None
    if asks(text) or phrasing.one_off(text) or _SUGGESTS.match(text):
        return None  # a plain question, an instruction about the work in hand ("do it in parallel"), a next step
    if not (_RULE_STRONG.search(text) or _RULE_WEAK.search(text) or _CHALLENGE.search(text) or _BUG_WORDS.search(text)
            or phrasing.lasting(text) or phrasing.states_fact(text)):
        return None  # a bare next step ("show me the diff first", "try a different approach"): it corrects nothing
    steps = ["start.correction"]
    if _RULE_STRONG.search(text) or _RULE_WEAK.search(text):
        steps.append("step.rule_words")
    if _TASK_LOCAL.search(text):
        steps.append("step.task_local")
    rules = _rule_sentences(text)
    form = next((phrasing.as_rule(c)[1] for c in phrasing.clauses(text)), "said")
    title = _title(text if form in ("challenge", "missed") or not rules else _from_rule_words(rules[0]))
    if phrasing.vague(title) or phrasing.names_nothing(title):
        return None  # "use branching appropriately", "check whether this isn't too much": no concrete rule
    lasting = rules or _LASTING.search(text) or phrasing.lasting(text)  # "no force pushes here, ever": a standing rule
    if failed:  # the agent's calls had just failed: what went wrong (don't…), or what fixes it
        type_ = "pitfall" if title.startswith(("Don't", "Never", "Avoid", "No ")) else "fix"
    elif lasting or form == "challenge":
        type_ = "convention"
    elif phrasing.states_fact(text):
        type_ = "context"  # "x is forked from y": how things are
    else:
        type_ = "pitfall" if _BUG_WORDS.search(text) else "preference"
    return Said("correction", type_, text.strip(), title, _conf(*steps, scores=scores), ("correction",))


def agent_rule(text: str) -> str | None:
    """The rule in an agent's agreeing reply, as a rule: "You're right! I shouldn't be editing
    generated code." → "Avoid editing generated code"; "I need to fix the source" → "Fix the
    source". None when the reply states no rule of its own."""
    for sentence in _SENTENCE.split(text)[:4]:
        found = _AGENT_RULE.search(sentence or "")
        if found is None:
            continue
        head = found.group(0)[:found.start(1) - found.start(0)]
        rest = found.group(1).strip().rstrip(".!:")
        negative = re.search(r"n'?t\b|\bnot\b|\bno\b", head, re.I)
        if len(rest.split()) < 2 or (negative and re.search(r"\bhave\b", head, re.I)):
            continue
        if negative:
            spanish = re.search(r"deb", head, re.I)
            lead = "No " if spanish else "Avoid " if rest.split()[0].lower().endswith("ing") else "Don't "
            return title_of(lead + rest)
        return title_of(rest[0].upper() + rest[1:])
    return None


def proposal(text: str) -> str | None:
    """What an agent's message proposes, when it ends by proposing (a plan, a solution, "would
    you like me to…"): its proposal's first line, for a title. None for other messages."""
    if len(text) < 200 or not _PROPOSAL.search(text[-600:]) and not _PROPOSAL_HEAD.search(text):
        return None
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if _PROPOSAL_HEAD.match(line):
            for n, after in enumerate(lines[index + 1:], index + 1):
                if after.strip() and not after.lstrip().startswith("#"):
                    paragraph = [after.strip()]  # a sentence wrapped over lines is one sentence
                    for more in lines[n + 1:]:
                        if not more.strip() or re.match(r"^\s*(?:#|[-*+]\s|\d+[.)]\s)", more) or \
                                re.search(r"[.!?:]$", paragraph[-1]):
                            break
                        paragraph.append(more.strip())
                    first = " ".join(paragraph).lstrip("-*0123456789. ").replace("**", "")
                    said = [x for x in _SENTENCE.split(first) if x.strip()]
                    while said and (_AGREEMENT.match(said[0]) or _CHEER.match(said[0])):
                        said.pop(0)  # "You're absolutely right! …": the proposal is what follows
                    if said:
                        return first_sentences(" ".join(said), 1, 160)
    return None


# An exclamation that opens a reply and proposes nothing: "Great question!", "Perfect!".
_CHEER = re.compile(r"^\W*(?:great|good|excellent|perfect|sure|absolutely|certainly|of course|nice|awesome)\b[^.?]{0,40}!\s*$",
                    re.I)


_GENERIC_HEAD = re.compile(r"^(?:(?:the |my |proposed |implementation |final |updated )*plan|overview|summary|goals?|"
                           r"context|approach|changes|steps|plan de (?:implementación|acción)|resumen)\b\W*$", re.I)


def plan_title(plan: str) -> str | None:
    """A plan's title: its first line with words (a generic heading like "Implementation Plan"
    skipped), without markdown."""
    for raw in plan.splitlines():
        line = raw.strip().lstrip("#").strip().strip("*_").strip()
        line = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line).replace("**", "")
        if len(line.split()) < 2 and not line:
            continue
        if _GENERIC_HEAD.match(line) or len(line) < 4:
            continue
        line = re.sub(r"^(?:(?:implementation |the )?plan|plan de implementación)\s*[:—–-]\s*", "", line, flags=re.I)
        return title_of(line[:1].upper() + line[1:], 120)
    return None


_SUMMARY_HEAD = re.compile(r"^\s*(?:#{1,6}\s*|\*\*)?(?:overview|summary|goal|goals|objective|context|approach|"
                           r"what|why|tl;?dr|resumen|objetivo)\b[^\n]*$", re.I)
_OPERATION = re.compile(r"^(?:kill|stop|restart|run|rerun|re-run|fix|debug|investigate|diagnose|clean(?: up)?|delete|"
                        r"remove|reset|retry|check|verify|test|revert|undo|rollback|roll back)\b", re.I)
_PLAN_WORDS = re.compile(r"\s*\b(?:implementation |migration |action )?plan\b\s*(?:for|to|:|—|–|-)?\s*", re.I)


def plan_decision(plan: str) -> tuple[str, str] | None:
    """An approved plan as the decision it makes: (one sentence, the content). The sentence is
    the first of the plan's overview (or summary, goal…) when it has one, else its heading as
    "Approved: …" without the word plan ("Bun Migration Plan" → "Approved: Bun migration");
    the content is that sentence and the plan's headings and steps (first lines only: not its
    commands or code), so a memory holds what was decided, not the plan to carry it out."""
    heading = plan_title(plan)
    if not heading or _OPERATION.match(heading):
        return None  # "Kill All Running Port Processes": a plan to do something once, no decision
    lines = [line for line in _FENCED.sub("", plan).splitlines() if line.strip()]
    sentence = None
    for index, line in enumerate(lines):
        if _SUMMARY_HEAD.match(line) and index + 1 < len(lines) and not lines[index + 1].lstrip().startswith("#"):
            body = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", lines[index + 1].strip()).replace("**", "")
            sentence = first_sentences(body, 1, 160) if len(body.split()) >= 4 else None
            break
    if sentence is None and _PLAN_WORDS.search(heading):  # "Bun Migration Plan": a name, not a sentence
        named = _PLAN_WORDS.sub(" ", heading).strip(" :—–-")
        named = named[:1].upper() + named[1:].lower() if named.isupper() or named.istitle() else named
        sentence = f"Approved: {named}" if named else heading
    sentence = sentence or heading
    steps = [re.sub(r"^#{1,6}\s*", "", line.strip()).replace("**", "") for line in lines
             if re.match(r"^\s*(?:#{1,6}\s|\d+[.)]\s)", line) and "`" not in line]
    content = "\n".join([sentence, "The plan approved (its headings and steps):", *steps[:12]])
    return sentence.rstrip("."), content


def proposal_text(text: str, limit: int = 1200) -> str:
    """An agent's message from its proposal's heading on (all of it without one), blank lines
    out, in at most `limit` characters (a decision's content)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _PROPOSAL_HEAD.match(line)), 0)
    words = "\n".join(line for line in lines[start:] if line.strip())
    return words if len(words) <= limit else words[:limit - 1] + "…"


def first_sentences(text: str, count: int, limit: int) -> str:
    """The first `count` sentences of `text` on one line, at most `limit` characters."""
    return title_of(" ".join(_SENTENCE.split(text.strip())[:count]), limit)


def approves(text: str) -> bool:
    """A bare approval: "yes", "go ahead", "sí, adelante"."""
    return bool(_APPROVAL.match(text.strip())) and len(text) < 60


def agrees(text: str) -> bool:
    """The agent's reply opens by agreeing it was wrong ("You're right", "Good catch", ...)."""
    return bool(_AGREEMENT.match(text))


def read_answers(output: str, *, scores: Mapping[str, float] = CONFIDENCE) -> Said | None:
    """Answers to the agent's questions (Claude Code's AskUserQuestion): the choices made."""
    at = output.find(ANSWERED)
    if at < 0:
        return None
    pairs = re.findall(r'"([^"]+)"\s*=\s*"([^"]+)"', output[at:])
    if not pairs:
        return None
    words = "; ".join(f"{question} {answer}" for question, answer in pairs)
    return Said("choice", "decision", words, title_of(f"{pairs[0][1]} ({pairs[0][0]})"), _conf("start.choice", scores=scores),
                ("choice",))
