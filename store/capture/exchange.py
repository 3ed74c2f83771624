"""What a user and the agent settle between them in a question and its answer.

People often decide by asking: "should we keep the ORM or go raw SQL?", "is it worth adding a
cache?", "do we want GraphQL?". The agent answers with a verdict ("I'd recommend keeping the ORM",
"**Recommendation:** stick with the REST client"), and the user goes on without objecting: that
verdict is the decision. And a user who doubts the agent ("are you sure we don't already have
retries?") is often proved right without the agent saying so: its answer states the doubted
thing ("Retries are ALREADY implemented"). A user who stops the agent and says again what they
had asked ("that was just 1 - do it in parallel") tells how they want it done. And an instruction
the agent creates a folder for ("move the finished specs under done", then `mkdir docs/specs/done`)
says where those things go; a statement the agent asks the user to confirm ("…, right?") and the
user confirms ("exactly") is a fact. Pure functions on text, used by the heuristics
(`store.capture.heuristics`).
"""

from __future__ import annotations

import re

from store.capture import phrasing, wording

# A question that asks which way to go, about the project ("should we…?", "do we want X?", "is it
# worth…?"); not one that asks for information ("what…", "where…") nor for permission ("should I
# go ahead?").
_CHOICE_QUESTION = re.compile(
    r"^(?:(?:do|would|will) (?:we|i|you think we) (?:really |even |actually )?(?:want|need)|"
    r"should (?:we|i)(?! (?:go ahead|proceed|continue|start|begin|do (?:it|that|this)|commit|push|retry|try)\b)|"
    r"(?:is|was) (?:it|this|that|\S+) (?:still |really |even )?(?:worth|better|necessary|needed|overkill|a good idea)|"
    r"would it (?:be|make) (?:better|worth|sense|wiser)|does it (?:still )?make sense to|"
    r"(?:is|are) \S+(?: \S+)? (?:better|worse|worth it|the (?:right|better) (?:choice|fit))|"
    r"(?:can|could) we (?:drop|skip|remove|cut|avoid|get away with)|do (?:you|u) (?:think|recommend) (?:we|i) should|"
    r"deberíamos|debería(?:mos)? usar|necesitamos|queremos|vale la pena|conviene|tiene sentido)\b", re.I)
# The agent's verdict: a recommendation, or a plain yes or no with a reason.
_VERDICT = re.compile(
    r"^\W*(?:my )?(?:recommendation|recommended|verdict|decision|answer|bottom line|recomendación|conclusión)\W*[:—–-]\s*(.+)|"
    r"\bI(?:'d| would)? (?:strongly )?(?:recommend|suggest|advise)(?: that)?(?: we| you)?\s+(.+)|"
    r"^\W*((?:stick|stay|keep going|go) with\b.+|(?:yes|no)\b[,.!—–-]\s*.+|"
    r"(?:te )?recomiendo\s+.+|(?:sí|no), (?:vale la pena|conviene|hace falta).+)|"
    r"^\W*(.+?\b(?:is|are) (?:definitely |still |probably |absolutely )?(?:(?:not )?worth\b|unnecessary|not needed|"
    r"overkill|the (?:better|right) (?:choice|fit)|no need)\b.*)|"
    r"^\W*(no need (?:for|to)\b.+)", re.I)
# The agent's answer confirms what the user doubted: the thing is already there, or it turns out so.
_CONFIRMED = re.compile(r"\b(?:already|turns out|it turns out|you were right|in fact|confirmed|ya (?:existe|está|tenemos))\b",
                        re.I)
# A question about the work in hand: "should we also add tests for this?", "should we run it again now?"
_ON_THE_TASK = re.compile(r"\b(?:it|this|that|them|these|those|esto|eso)\s*\?$|\b(?:now|again|this time|right now|ahora|otra vez)\b",
                          re.I)
_WORD = re.compile(r"[^\W\d_][\w.-]{3,}", re.U)
# Words that say nothing of what a question is about.
_COMMON = frozenset(
    "about after again also already anything been before being both could does doing done even every from have "
    "here into just like make more much need only other over really same should some still such sure than that "
    "their them then there these they thing think this those through want were what when where which while will "
    "with would your worth better good idea right currently actually maybe think going have said asked told meant".split())
_MARKUP = re.compile(r"[*_#`>|]+|^\s*[-+]\s+|[✅❌⚠️🎯🎉🚀🚨📋📁🔄🤖✓✗]", re.M)
_DISAGREE = re.compile(r"^\W*(?:no\b|nope|nah|not really|i disagree|disagree|actually,? (?:no|let'?s not|i)|"
                       r"i (?:don'?t|do not) (?:agree|think so|want that)|let'?s not|wait,? no|"
                       r"no,? (?:mejor|prefiero)|no estoy de acuerdo)", re.I)


def choice_question(text: str) -> str | None:
    """The question in a user's message that asks which way the project should go ("Do we want
    GraphQL?", "is it worth keeping the cache?"), as they asked it; None when there is none."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+|\s+[-–—]\s+", phrasing.plain(text)):
        sentence = sentence.strip()
        if not sentence.endswith("?") or _ON_THE_TASK.search(sentence):
            continue  # "should we also add tests for this?": about the work in hand
        for clause in phrasing.clauses(sentence):
            if _CHOICE_QUESTION.search(clause.lstrip("¿")):
                return sentence.lstrip("¿").strip()
    return None


def subject(question: str) -> set[str]:
    """The words that say what a question is about."""
    return {w.lower().rstrip(".-") for w in _WORD.findall(question)} - _COMMON


def verdict(question: str, reply: str) -> str | None:
    """The agent's verdict on a choice the user asked about, as a sentence ("Stick with the REST
    client"); None when the reply gives none, or does not speak of what was asked."""
    about = subject(question)
    if not about or not about & subject(reply[:3000]):
        return None
    for line in reply[:3000].splitlines():
        plain = _MARKUP.sub("", line).strip()
        for sentence in re.split(r"(?<=[.!?])\s+", plain):
            found = _VERDICT.search(sentence)
            if found:
                said = next(g for g in found.groups() if g).strip().rstrip(".!:")
                if len(said.split()) >= 3:
                    return phrasing.cap(said[:1].upper() + said[1:])
    return None


def confirms(question: str, reply: str) -> bool:
    """The agent's reply to a doubting question ("are you sure we don't already have X?") states
    that the doubted thing is so ("X is ALREADY implemented"): its opening says "already" (or that
    it turns out so) and speaks of what was asked."""
    opening = reply[:600]
    return bool(_CONFIRMED.search(opening)) and bool(subject(question) - {"already"} & subject(opening))


def confirmed_fact(question: str, reply: str, limit: int = 120) -> str | None:
    """The sentence of the agent's reply that confirms what the user doubted ("The webhook client
    ALREADY retries: 5 attempts…"), as a candidate's title: the fact, not the user's question."""
    asked = subject(question) - {"already"}
    sentences = [sentence for line in reply[:600].splitlines()
                 for sentence in re.split(r"(?<=[.!?])\s+", _MARKUP.sub("", line).strip(" :")) if sentence]
    about = [sentence for sentence in sentences if asked & subject(sentence)]
    # The sentence that says "already" of what was asked; else (the reply confirms it as a whole,
    # "Everything is ALREADY DONE!") the first that speaks of what was asked.
    found = next((s for s in about if _CONFIRMED.search(s)), about[0] if about else None)
    return phrasing.cap(found.rstrip("."), limit) if found else None


def gist(reply: str, limit: int = 300) -> str:
    """The opening lines of an agent's reply, without markdown, on one line."""
    lines = [_MARKUP.sub("", line).strip(" :") for line in reply.splitlines()]
    return phrasing.cap("; ".join(line for line in lines if line), limit)


def disagrees(text: str) -> bool:
    """The user's next message turns the agent's answer down ("no, keep GraphQL", "let's not")."""
    return bool(_DISAGREE.match(text))


# The words of a user who has to say something twice: "that was just one", "I said…", "te dije…".
_INSIST = re.compile(r"^(?:that|this|it)(?:'s| is| was| were)? (?:just|only)\b|\bi (?:said|asked|told you|meant)\b|"
                     r"\bas i (?:said|asked)\b|\blike i said\b|^(?:eso|esto) (?:era|es|fue) (?:solo|sólo)\b|"
                     r"\bte (?:dije|pedí)\b", re.I)
_JUDGES = re.compile(r"^(?:that|this|it)(?:'s| is| was| were)? (?:just|only)\b|^(?:eso|esto) (?:era|es|fue) (?:solo|sólo)\b",
                     re.I)
_NOW = re.compile(r"^(?:(?:now|then|so|and|ok|okay|great|right now|ahora)\b[\s,]*)+", re.I)


def insists(text: str, asked: str | None) -> str | None:
    """After the user stopped the agent: the request they had made, when they now say it again
    ("delegate parallel agents for tickets 1-3" … "that was just 1 - do it in parallel"): what
    they had to ask twice is how they want it done. None otherwise."""
    if not asked or len(text) > 300:
        return None
    said = phrasing.clauses(text)
    if not any(_INSIST.search(clause) for clause in said):
        return None
    again = set().union(*(subject(clause) for clause in said if not _JUDGES.match(clause))) & subject(asked)
    for clause in phrasing.clauses(asked) if again else ():
        if subject(clause) & again:
            clause = _NOW.sub("", clause)
            clause = phrasing.without_instance(clause)  # "…tickets 1 through 3": the instance, not the rule
            return phrasing.cap(clause[:1].upper() + clause[1:]) if len(clause.split()) >= 2 else None
    return None


# Verbs that say where things go; a user typing fast is one letter off ("moe the tickets…").
_FILING = ("move", "put", "file", "archive", "save", "store", "place", "keep", "sort", "mueve", "pon", "guarda", "archiva")
_MKDIR = re.compile(r"\bmkdir\s+(?:-\w+\s+)*([^\s;&|{}]+)(?=\s|$|[;&|])")


def filing(text: str) -> bool:
    """A short instruction that says where things go ("file the finished specs under done")."""
    from rapidfuzz.distance import Levenshtein  # only for short, typed messages

    said = phrasing.clauses(text) if len(text) <= 200 and "?" not in text else ()
    first = said[0].split(maxsplit=1)[0].lower() if said and said[0].split() else ""
    return len(first) >= 3 and any(Levenshtein.distance(first, verb) <= (1 if len(verb) >= 4 else 0) for verb in _FILING)


def new_folder(words: str, command: str | None) -> str | None:
    """The folder a shell command creates for what the user asked, when its name echoes a word of
    theirs ("…to complete" → `mkdir -p tickets/completed`): where those things go from now on."""
    found = _MKDIR.search(command or "")
    if found is None:
        return None
    folder = found.group(1).strip("'\"").rstrip("/")
    last = folder.rsplit("/", 1)[-1].lower()
    for word in _WORD.findall(words.lower()):
        if len(last) >= 4 and word.isalpha() and last.startswith(word[:max(4, len(word) - 2)]):
            return folder
    return None


# The agent asks the user to confirm what it understood: "…, right?", "Is that correct?", "¿verdad?".
_CHECK = re.compile(r"(?:,\s*(?:right|correct|no)|\b(?:is that|is this|am i|did i get (?:that|this|it))\s+(?:right|correct|accurate)|"
                    r"¿?\s*(?:es|está) (?:correcto|así)|,?\s*¿?verdad)\s*\?\s*$", re.I)
_CONFIRM = re.compile(r"^\W*(?:yes|yep|yeah|exactly|correct|right|that'?s (?:right|correct|it)|precisely|indeed|sí|si|exacto|"
                      r"correcto|eso es|así es)\b(?!.*\b(?:but|pero|except|excepto)\b)", re.I)


def checked(text: str) -> str | None:
    """The statement an agent's message ends by asking the user to confirm ("The sandbox resets
    every night, right?" → "The sandbox resets every night"); None for any other message."""
    if "?" not in text[-40:]:  # most of the agent's messages: no question at their end
        return None
    tail = text[-600:].strip()
    if not _CHECK.search(tail):
        return None
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", _MARKUP.sub("", tail)) if s.strip()]
    statement = _CHECK.sub("", sentences[-1]).strip(" ,") if sentences else ""
    if len(statement.split()) < 4 and len(sentences) > 1:
        statement = sentences[-2]  # "The sandbox resets every night. Is that right?"
    statement = re.sub(r"^(?:so|ok|okay|just to confirm|to confirm|if i understand(?: correctly)?)\b[\s,:]*", "",
                       statement.rstrip(".:!?"), flags=re.I)
    statement = re.sub(r"^[^:`]{1,30}:\s+(?=\S+(?:\s+\S+){3})", "", statement)  # "Before I start: X" → "X"
    return phrasing.cap(statement[:1].upper() + statement[1:]) if len(statement.split()) >= 4 else None


def confirmed(text: str) -> bool:
    """The user's short answer confirms, with no "but": "exactly", "yes that's right", "sí"."""
    return len(text) < 80 and bool(_CONFIRM.match(text.strip()))


def parts(signal: dict) -> list[str]:
    """A decision made in a question and its answer: the verdict, the question, the answer."""
    said = [f"{signal['title']}.", f'Asked: "{signal["words"]}"']
    if signal.get("agreed"):
        said.append(f"Answered: {signal['agreed']}")
    return said


# A user saying something again, annoyed: "ugh, again with the console.logs", "how many times",
# "I told you", "for the third time"; "otra vez con", "cuántas veces", "ya te dije".
_FRUSTRATED = re.compile(r"\b(?:(?:once )?again with|how many times|i(?:'ve| have)? (?:already )?told you|"
                         r"for the (?:second|third|fourth|fifth|\d+(?:st|nd|rd|th)) time|not again|"
                         r"(?:otra vez|de nuevo) con|cu[aá]ntas veces|ya te (?:lo )?dije)\b", re.I)
_AGAIN_WITH = re.compile(r"\b(?:again with|otra vez con|de nuevo con)\s+([^,;!?]+?)(?=[.!?](?:\s|$)|[,;]|\s+[-–—]\s|$)", re.I)
_OBJECT_PRONOUN = re.compile(r"\b(?:them|it|those|these|that|los|las|eso)\b(?=\W*$)", re.I)


def frustrated(text: str) -> str | None:
    """A correction said again, annoyed ("ugh, again with the console.logs. remove them"): the
    rule it repeats, its pronoun taken for what the user named ("Remove the console.logs"). None
    without the words of someone repeating themselves, or without a rule to state."""
    if len(text) > 400 or not _FRUSTRATED.search(text):
        return None
    named = _AGAIN_WITH.search(text)
    for clause in phrasing.clauses(text):
        if not (_imperative_after(clause) or (named and len(clause.split()) <= 4 and _OBJECT_PRONOUN.search(clause))):
            continue  # "remove them" after "again with the console.logs": the pronoun is what was named
        rule = phrasing.as_rule(_FRUSTRATED.sub("", clause).strip(" ,.:;-"))[0]
        if named and _OBJECT_PRONOUN.search(rule):
            rule = _OBJECT_PRONOUN.sub(named.group(1).strip(), rule)
        if len(rule.split()) >= 2 and not phrasing.names_nothing(rule) and not phrasing.one_off(rule):
            return phrasing.cap(rule[:1].upper() + rule[1:])
    return None


def said_again(text: str, scores) -> "wording.Said | None":
    """A correction said again, annoyed, is a standing rule (`frustrated`), a convention."""
    rule = frustrated(text)
    return wording.Said("rule", "convention", text.strip(), rule, scores["start.rule"], ("user-rule", "said-again")) \
        if rule else None


def _imperative_after(clause: str) -> bool:
    """ "I told you, use pnpm": a rule in the clause after the repeating words."""
    rest = _FRUSTRATED.sub("", clause).strip(" ,.:;-")
    return len(rest.split()) >= 2 and (phrasing.as_rule(rest)[1] != "said" or phrasing.imperative(rest)
                                       or bool(_RULE_START.match(rest)))


_RULE_START = re.compile(r"^(?:no|never|always|don'?t|do not|avoid|nunca|siempre)\b", re.I)
