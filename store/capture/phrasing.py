"""A person's words to an agent, phrased as the memory they teach: "why tf are you editing
generated code! fix the .templ source" → "Don't edit generated code; fix the .templ source".

Deterministic and local (no model, no network), and it never adds a fact: it only drops the
words that address the agent ("please", "hey", "can you", "no,", "@agent-x", "ultrathink"),
turns the forms people correct an agent with into the rule they state ("why are you X-ing Y" →
"Don't X Y", "you haven't X-ed Y" → "X Y", "remember that Y" → "Y", "stop X-ing" → "Don't X"),
keeps code spans whole, and caps the length. The user's own words stay beside it as evidence.

It also tells a one-off instruction from a lesson: "do it in parallel", "answer me now, don't
iterate", "do it again" are about the work in hand (their object is the task itself: "it",
"that", "now", "again"), and no memory comes from them (`one_off`).
"""

from __future__ import annotations

import re
from functools import lru_cache

LIMIT = 100
_SPACE = re.compile(r"\s+")
_FENCED = re.compile(r"```.*?(?:```|$)", re.S)
_CODE = re.compile(r"`[^`\n]+`")
# Words that address the agent rather than say anything: mentions of agents, thinking triggers.
_ADDRESS = re.compile(r"(?<![\w/.])@agent-[\w-]+|(?<![\w/.])@[a-z][\w-]*-(?:agent|specialist|orchestrator|architect)\b|"
                      r"\b(?:pls |please )?(?:ultrathink|think (?:hard|harder|deeply|step by step))\b", re.I)
# ("no", "right" and "again" only when a comma or a stop follows: "no mocks here" is the rule.)
_LEADING = re.compile(
    r"^(?:(?:(?:nope|nah|hey|hi|ok|okay|so|well|err|erm|um|uh|hmm|and|but|also|btw|fyi|oh|ah|wait|look|listen|"
    r"alright|alrighty|yes|yeah|great|cool|ugh|dude|man|please|pls|plz|sorry|"
    r"oye|bueno|vale|pues|y|pero|también|por favor)\b|(?:no|right|again|stop|wait|hold on)(?=\s*[,.!:;—–-])|"
    r"no,? no\b)[\s,.!:;-]*)+",
    re.I)
_ASKING = re.compile(
    r"^(?:(?:can|could|would|will|wud) (?:you|u|ya)|i (?:want|need|would like|'d like) (?:you|u) to|"
    r"you (?:need|have|got) to|you should|you must|make sure (?:to|that|you)|be sure to|remember (?:to|that)|"
    r"keep in mind(?: that)?|note that|don'?t forget (?:to|that)|from now on|going forward|in (?:the )?future|"
    r"puedes|podrías|recuerda(?: que)?|ten en cuenta(?: que)?|a partir de ahora|de ahora en adelante)\b[\s,:]*"
    r"(?:please |pls )?", re.I)
_TRAILING = re.compile(r"(?:[\s,;:-]+(?:please|pls|plz|thanks|thank you|ok|okay|go back|asap|at all|yet|por favor|"
                       r"gracias))+\W*$",
                       re.I)
# "why (tf) are you editing X" / "why did you delete X" / "stop touching X"
_WHY_ING = re.compile(r"^(?:why|wtf|why the (?:hell|heck|fuck)|why tf|why on earth) (?:(?:the )?(?:hell|heck|fuck) )?"
                      r"(?:are|were) (?:you|u) (?:still |even |now )?(\w+ing)\b(.*)$", re.I)
_WHY_DID = re.compile(r"^(?:why|wtf|why tf|why the (?:hell|heck|fuck)) (?:did|do|would) (?:you|u) (?:even )?(\w+)\b(.*)$",
                      re.I)
_STOP_ING = re.compile(r"^(?:stop|quit) (\w+ing)\b(.*)$", re.I)
# "are you sure you're not breaking X?" / "are you sure you didn't drop X?": a doubt, a challenge
_SURE_NOT = re.compile(r"^(?:are|r) (?:you|u) sure (?:that )?(?:you|u|we)(?:'re| are| r)? (?:not|didn'?t|did not) "
                       r"(\w+)\b(.*)$", re.I)
# Spanish: "¿por qué estás tocando X?" and "deja de tocar X" → "No tocar X" (the infinitive, as
# Spanish states a rule; only -ando gerunds, whose infinitive is certain)
_POR_QUE = re.compile(r"^¿?\s*por ?qu[eé] (?:estás|estas|sigues) (\w+)ando\b(.*)$", re.I)
_DEJA_DE = re.compile(r"^(?:deja|para|dejá) de (\w+(?:ar|er|ir))\b(.*)$", re.I)
_NOT_SUPPOSED = re.compile(r"^(?:you(?:'re| are) not (?:supposed|meant|allowed) to|you (?:shouldn'?t|should not|"
                           r"mustn'?t|must not|can'?t|cannot)) (\w+)\b(.*)$", re.I)
_DIDNT = re.compile(r"^(?:you|u) (?:have not|haven'?t|havent|did not|didn'?t|didnt|still haven'?t|never) (?:even )?"
                    r"(\w+)\b(.*)$", re.I)
_FORGOT = re.compile(r"^(?:you|u) (?:forgot|missed|skipped)(?: to)? (\w+)\b(.*)$", re.I)
# Spanish: "no has actualizado X" → "Actualizar X" (only -ado participles, whose infinitive is
# certain), "(te) olvidaste (de) correr X" → "Correr X" (the infinitive is said).
_NO_HAS = re.compile(r"^(?:todavía |aún )?no (?:has|habías) (\w+)ado\b(.*)$", re.I)
_OLVIDASTE = re.compile(r"^(?:te )?olvidaste (?:de )?(\w+(?:ar|er|ir))\b(.*)$", re.I)
# "can you check whether X": the user asks the agent to check X.
_WHETHER = re.compile(r"^(?:(?:deep |double[- ]|quickly |really )?(?:check|verify|see|find out|look|think(?: about)?|"
                      r"consider|vibe check|tell me|confirm)\s+)*(?:whether|if)\s+(.+)$", re.I)
# A clause that only says the agent's step was wrong ("that's the wrong branch"): the clause after
# it says what is right.
_WRONG = (r"(?:that|this|it)(?:'s| is| was) (?:not (?:right|correct|it)|wrong|incorrect|the wrong \w+|"
          r"not what i (?:asked(?: for)?|meant|wanted))")
_ONLY_WRONG = re.compile(rf"^{_WRONG}$", re.I)
# The same judgement opening a clause, a comma after it ("wrong file, …", "that's not what I asked, …").
_JUDGED_FIRST = re.compile(rf"^(?:{_WRONG}|wrong (?:\w+ )?(?:file|folder|dir|directory|branch|"
                           r"command|place|way|one|approach|module|package|repo|table|service)|not (?:like )?that|"
                           r"archivo equivocado|eso no es lo que (?:pedí|quería))\s*[,:]\s*", re.I)
_PREFER = re.compile(r"^i(?:'d| would)? (?:prefer|rather)(?: (?:you|u))?\s+(.*)$", re.I)
# Stems of the gerunds and past forms that lose an "e" ("using" → "use"), the common ones in work
# on code; any other keeps its stem ("editing" → "edit").
_E_STEMS = frozenset(
    "us mak writ delet creat chang remov mov sav updat generat replac hardcod merg forc pars configur compil rebas "
    "stag leav ignor tak giv receiv includ exclud requir declar defin describ com becom clos analys analyz "
    "releas renam reus restor restructur retriev revok scal schedul serializ shar sourc "
    "stor structur subscrib trac typ translat truncat upgrad valid wir zon encod decod cach compar "
    "manag outlin pav produc referenc resolv rewrit serv styl tim tun bundl handl dup duplicat escap".split())
_IRREGULAR = {"ran": "run", "run": "run", "done": "do", "did": "do", "written": "write", "wrote": "write",
              "made": "make", "broken": "break", "broke": "break", "read": "read", "set": "set", "put": "put",
              "built": "build", "kept": "keep", "left": "leave", "taken": "take", "took": "take", "seen": "see",
              "given": "give", "gone": "go", "been": "be", "got": "get", "gotten": "get", "sent": "send",
              "thought": "think", "told": "tell", "understood": "understand", "paid": "pay", "added": "add",
              "tested": "test", "fixed": "fix", "used": "use", "checked": "check", "pushed": "push"}
_KEEP_DOUBLE = ("ll", "ss", "ff", "zz", "dd")
_PRONOUN_OBJECT = re.compile(r"^\s*(?:it|that|this|them|those|these|so|lo|la|eso|esto)\b(?!\s*(?:'s|is|was)\b)", re.I)
_TASK_WORDS = re.compile(r"\b(?:now|right now|again|this time|for now|at once|immediately|asap|"
                         r"ahora|otra vez|de nuevo)\b", re.I)
_LASTING = re.compile(r"\b(?:always|never|from now on|going forward|every ?time|each time|whenever|in (?:the )?future|"
                      r"any ?more|ever|siempre|nunca|jamás|a partir de ahora|cada vez)\b", re.I)
_JUDGES_LAST = re.compile(r"^(?:that|this|it)(?:'s| is| was| were)? (?:just|only)\b|"
                          r"^(?:eso|esto) (?:era|es|fue) (?:solo|sólo)\b", re.I)
# A rule whose subject or last object is the work in hand: "make sure it compiles", "add a test for it".
_ON_THE_TASK = re.compile(r"^(?:make sure|be sure|ensure|check)\s+(?:that\s+)?(?:it|this|that|they|these|those)\b|"
                          r"\b(?:it|this|that|them)\s*$", re.I)
# A clause's first word that is no imperative: "isn't that the wrong bucket", "we did it".
_NOT_A_VERB = re.compile(r"^(?:is|isn'?t|are|aren'?t|was|wasn'?t|were|does|doesn'?t|did|didn'?t|can|can'?t|could|"
                         r"should|shouldn'?t|would|will|won'?t|has|have|had|i|we|you|they|he|she|it|that|this|there|"
                         r"what|which|who|why|how|where|when)$", re.I)
_LINE_END = re.compile(r"\\(?=\s|$)")  # a shell-style line continuation typed into a message
_CLAUSES = re.compile(r"(?<![\s(]e\.g\.)(?<![\s(]i\.e\.)(?<=[.!?])\s+|[!?]+\s*|;\s*|\n+|\s+[-–—]\s+")


def base_form(word: str) -> str:
    """A gerund or past form as the bare verb: "editing" → "edit", "using" → "use",
    "running" → "run", "fixed" → "fix"; other words as they are."""
    low = word.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    for ending in ("ing", "ed"):
        stem = low[:-len(ending)]
        if low.endswith(ending) and len(stem) >= 2 and re.search(r"[aeiouy]", stem):
            if stem in _E_STEMS:
                return stem + "e"
            if len(stem) > 2 and stem[-1] == stem[-2] and stem[-2:] not in _KEEP_DOUBLE and stem[-1] not in "aeiou":
                return stem[:-1]
            if ending == "ed" and stem.endswith("i"):
                return stem[:-1] + "y"
            return stem
    return low


def plain(text: str) -> str:
    """The words on one line, without fenced blocks or the words that address the agent."""
    text = _LINE_END.sub(" ", _ADDRESS.sub(" ", _FENCED.sub(" ", text)))
    return "\n".join(_SPACE.sub(" ", line).strip() for line in text.splitlines() if line.strip())


@lru_cache(maxsize=256)  # the readers ask for one message's clauses several times
def clauses(text: str) -> tuple[str, ...]:
    """The message's clauses (sentences, and parts split by "!", ";" or a dash), each stripped of
    the words that only address the agent; code spans kept whole."""
    spans: list[str] = []

    def hide(found: re.Match) -> str:
        spans.append(found.group(0))
        return f"\x00{len(spans) - 1}\x00"

    hidden = _CODE.sub(hide, plain(text))
    out = []
    for part in _CLAUSES.split(hidden):
        part = _strip(part or "")
        if part:
            out.append(re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], part))
    return tuple(out)


def _strip(part: str) -> str:
    previous = None
    part = part.strip(" ,.:;-–—")
    while part != previous:
        previous = part
        part = _LEADING.sub("", part).strip(" ,.:;-–—")
        part = _TRAILING.sub("", part).strip(" ,.:;-–—")
    return part


def as_rule(clause: str) -> tuple[str, str]:
    """(the clause as a rule, its form): "challenge" for "why are you X-ing" ("Don't X"),
    "missed" for "you haven't X-ed" ("X"), "asked" for a request or reminder with its asking
    words dropped, "said" for anything else (as it was said)."""
    for pattern, form in ((_WHY_ING, "challenge"), (_WHY_DID, "challenge"), (_STOP_ING, "challenge"),
                          (_NOT_SUPPOSED, "challenge"), (_SURE_NOT, "challenge")):
        found = pattern.match(clause)
        if found and found.group(1).lower() not in ("be", "being", "have", "having", "so", "that"):
            rest = found.group(2).rstrip(" ?!.")
            return f"Don't {base_form(found.group(1))}{rest}", form
    for pattern, ending in ((_POR_QUE, "ar"), (_DEJA_DE, "")):
        found = pattern.match(clause)
        if found:
            return f"No {found.group(1).lower()}{ending}{found.group(2).rstrip(' ?!.¿¡')}", "challenge"
    for pattern in (_DIDNT, _FORGOT):
        found = pattern.match(clause)
        if found:
            return _capital(f"{base_form(found.group(1))}{found.group(2)}".rstrip(" ?!.")), "missed"
    for pattern, ending in ((_NO_HAS, "ar"), (_OLVIDASTE, "")):
        found = pattern.match(clause)
        if found:
            return _capital(f"{found.group(1).lower()}{ending}{found.group(2)}".rstrip(" ?!.¿¡")), "missed"
    found = _PREFER.match(clause)
    if found and found.group(1):
        return _capital(f"prefer {found.group(1)}"), "asked"
    rest = clause
    while (asked := _ASKING.match(rest)) and asked.end() < len(rest):
        rest = _strip(rest[asked.end():])
    found = _WHETHER.match(rest)
    if found:
        return f"Check whether {found.group(1).rstrip(' ?')}", "asked"
    return _capital(rest), "asked" if rest != clause else "said"


# Words that name nothing a rule could be about: pronouns, determiners, auxiliaries, the verbs of
# any request ("check", "do") and words that only judge ("overdoing", "too much").
_EMPTY_WORDS = frozenset(
    "a an the this that these those it its they them some any all of whether if is isn't are aren't was "
    "wasn't be being been not no we us our you u your i me my to for on in at with and or but so just "
    "really too much more check see look do does doing did make go get verify think consider "
    "overdoing overkill enough fine ok okay right wrong good bad here there stuff things thing".split())
_WORD = re.compile(r"[\w'./-]+")


def names_nothing(clause: str) -> bool:
    """A rule with no concrete subject: besides pronouns, the verbs of any request and words that
    only judge, it names nothing ("check whether some of this isn't overdoing it")."""
    if _CODE.search(clause):
        return False
    return not any(w.lower().strip(".") not in _EMPTY_WORDS for w in _WORD.findall(clause))


# "use branching appropriately", "name things properly": a rule whose only how is a manner word
# that leaves the how to the agent says nothing a person could check.
_VAGUE_MANNER = re.compile(r"\b(?:appropriately|properly|correctly|accordingly|sensibly|wisely|carefully|responsibly|"
                           r"as (?:needed|appropriate|necessary|required)|where (?:needed|appropriate|it makes sense)|"
                           r"when (?:needed|appropriate)|adecuadamente|correctamente|apropiadamente)\W*$", re.I)


def vague(title: str) -> bool:
    """A rule that leaves its how to the agent ("Use branching appropriately"): it ends in a manner
    word and says nothing more (no detail after a colon or a semicolon, no code)."""
    return bool(_VAGUE_MANNER.search(title)) and not _CODE.search(title) and not re.search(r"[:;]", title)


# The numbers that pick the task's items ("tickets 1 through 3", "steps 2-4", "#12 and #13"): the
# instance, not the rule.
_INSTANCE = re.compile(r"(?<=[a-z]s)\s+#?\d+(?:\s*(?:through|thru|to|-|–|and|,|y|a)\s*#?\d+)+(?!\w)", re.I)


def without_instance(title: str) -> str:
    """The title without the numbers that pick the task's items: "Delegate parallel agents to work
    on tickets 1 through 3" → "Delegate parallel agents to work on tickets"."""
    return _INSTANCE.sub("", title)


# A request whose object is only the task's own items by a generic name ("fix all the issues",
# "do the rest", "finish them"): it says how much of the task to do, not what the task is.
_BACK_OBJECT = re.compile(r"^\w+(?:\s+up)?\s+(?:(?:all|each|every one|any)\s+(?:of\s+)?)?(?:(?:the|those|these|them|my|your)\s+)?"
                          r"(?:(?:remaining|other|rest of the|same)\s+)?(?:issues?|errors?|warnings?|problems?|bugs?|failures?|"
                          r"ones?|rest|others|things|stuff|items?|todos?|steps?|it|them|this|that|everything)\W*$", re.I)


def points_back(title: str) -> bool:
    """An imperative about the current task with no general object ("Fix all the issues"): its
    object is the task's items by a generic name, and it says nothing lasts ("always", "never")."""
    return bool(_BACK_OBJECT.match(title.strip())) and not _LASTING.search(title)


def on_request(title: str, asked: str, limit: int = LIMIT) -> str:
    """A request about how much of the task to do, with the task it was about: "Fix all the
    issues" after "fix the lint warnings" → "When asked to fix the lint warnings: fix all the
    issues"."""
    request = next(iter(clauses(asked)), asked)
    request = as_rule(request)[0]
    request = cap(request[:1].lower() + request[1:] if not request[:2].isupper() else request, 60)
    return cap(f"When asked to {request}: {title[:1].lower() + title[1:]}", limit)


def rule_title(text: str, limit: int = LIMIT) -> str | None:
    """The title of the memory the user's words teach: their first clause that states something,
    as a rule, and the clause after it when that one tells what to do instead ("…; fix the
    .templ source"). A first clause that names nothing ("check whether some of this isn't
    overdoing it") gives way to the next one that does. None when nothing is left once the
    addressing words are gone."""
    parts = [p for p in clauses(text) if len(p.split()) >= 2 or _CODE.search(p)]
    if len(parts) > 1 and _ONLY_WRONG.match(parts[0]):
        parts = parts[1:]
    if parts and (judged := _JUDGED_FIRST.match(parts[0])) and len(parts[0]) > judged.end():
        parts = [parts[0][judged.end():]] + parts[1:]  # "wrong file, the config lives in X": what is right
    while len(parts) > 1 and names_nothing(as_rule(parts[0])[0]) and not names_nothing(as_rule(parts[1])[0]):
        parts = parts[1:]
    if not parts:
        return None
    first, form = as_rule(parts[0])
    title = first
    pointing = len(first.split()) > 1 and _PRONOUN_OBJECT.match(first.split(maxsplit=1)[1])
    if len(parts) > 1 and (form in ("challenge", "missed") or pointing):
        second, second_form = as_rule(parts[1])
        if second_form != "said" or _imperative(parts[1]):
            title = f"{first}; {second[:1].lower() + second[1:] if not second.startswith('`') else second}"
    return cap(calm(title), limit)


_STATES = re.compile(r"\b(?:is|are|was|were|has|have|lives?|runs?|uses?|comes?|belongs?|points?|means?|"
                     r"es|son|está|están|tiene|usa|viene|vienen|vive|viven|corre|corren)\b", re.I)


def states_fact(text: str) -> bool:
    """The words state how things are ("x is forked from y", "the API returns cents"), not
    what to do: no clause opens with a verb telling the agent what to do."""
    parts = clauses(text)
    return bool(parts) and not any(_imperative(p) or as_rule(p)[1] != "said" for p in parts) and \
        bool(_STATES.search(parts[0]))


def imperative(clause: str) -> bool:
    """A clause that opens with a verb telling the agent what to do."""
    return _imperative(clause)


def _imperative(clause: str) -> bool:
    """A clause that opens with a verb telling the agent what to do ("fix the source", "use uv")."""
    word = clause.split(maxsplit=1)[0].lower() if clause.split() else ""
    return bool(re.match(r"^(?:fix|use|change|edit|run|put|keep|move|add|remove|call|write|read|regenerate|"
                         r"update|check|ask|wait|open|make|go|try|prefer|avoid|stick|switch|leave|let|let's|let’s|lets|"
                         r"usa|cambia|arregla|pon|deja|mueve|añade|quita|ejecuta|edita|crea|borra|haz|revisa|actualiza|"
                         r"mantén|corre|sube|regenera|evita|asegúrate)$", word))


# Swearing, dropped from a title (the lesson stays; the user's words keep them in the content).
_SWEARING = re.compile(
    r"\b(?:the )?(?:fuck(?:ing|in'?|ed)?|f\*+k(?:ing)?|wtf|tf|shit(?:ty)?|damn(?:ed|it)?|goddamn|bloody|crap(?:py)?|"
    r"joder|mierda|puta|puto|coño|carajo|hostia|cojones)\b[\s,!]*", re.I)
# Words people shout in: all capitals, letters only (three or more), outside code spans.
_SHOUTED = re.compile(r"(?<![\w`/.$-])[A-Z][A-Z']+(?![\w`/.$-])")
_EMPHASIS = frozenset("""NEVER ALWAYS NOT DON'T DONT DO MUST ANY ALL NO ONLY STOP EVER AGAIN PLEASE
NOTHING EVERYTHING EVERY NUNCA SIEMPRE NADA TODO TODOS""".split())


def calm(text: str) -> str:
    """A title without shouting or swearing: the lesson stays, the tone goes. Swear words are
    dropped; a word in capitals for emphasis is lower-cased (a word of emphasis — NEVER, ALL,
    ONLY —, and every word in capitals when three are, or two with one of emphasis: "search
    ALL ENGINES"), while acronyms stay ("the README and the HTML report"); "!!" goes."""
    text = _SWEARING.sub("", text)
    shouted = [m for m in _SHOUTED.finditer(text)]
    loud = len(shouted) >= 3 or (len(shouted) == 2 and any(m.group(0) in _EMPHASIS for m in shouted))

    run = set()  # the words shouted next to another: "AS MUCH AS POSSIBLE", not "Cursor AI should"
    for a, b in zip(shouted, shouted[1:]):
        if not text[a.end():b.start()].strip():
            run.update((a.start(), b.start()))

    def lower(found: re.Match) -> str:
        word = found.group(0)
        quiet = word in _EMPHASIS or (loud and (len(word) > 2 or found.start() in run))
        return word.lower() if quiet else word

    text = _SHOUTED.sub(lower, text)
    text = re.sub(r"\s*[!¡]+(?=\s|$)", lambda m: "" if m.end() == len(text) else "", text)
    text = _SPACE.sub(" ", text).strip().rstrip(",;:—–- ")
    if not text or re.match(r"\w+://|[/.~`]", text):
        return text
    return text[:1].upper() + text[1:]


def cap(text: str, limit: int = LIMIT) -> str:
    """At most `limit` characters, cut at a word and never inside a code span."""
    text = _SPACE.sub(" ", text).strip().rstrip(".:;,")
    if len(text) <= limit:
        return text
    cut = limit - 1
    for span in _CODE.finditer(text):
        if span.start() < cut < span.end():
            cut = span.start()
            break
    head = text[:cut]
    if " " in head[limit // 2:]:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:—–-") + "…"


def lasting(text: str) -> bool:
    """The words say the rule lasts: "never", "always", "from now on", "every time", "siempre"."""
    return bool(_LASTING.search(text))


def one_off(text: str) -> bool:
    """An instruction about the work in hand, not a lesson: its request's object is the task
    itself ("do it in parallel", "run that again", "try it now"), it judges the agent's last step
    ("that was just 1"), or it is tied to this moment ("answer me now, don't iterate") — unless
    it says the rule lasts ("never …", "from now on", "every time")."""
    if _LASTING.search(text):
        return False
    parts = clauses(text)
    if not parts:
        return True
    for part in parts:
        rule, form = as_rule(part)
        words = rule.split()
        if form in ("challenge", "missed") and len(words) > 2 and not _PRONOUN_OBJECT.match(" ".join(words[2:])):
            return False  # "why are you editing generated code": a lesson, whatever else is said
    if any(_JUDGES_LAST.match(p) for p in parts):
        return True
    if _TASK_WORDS.search(text):
        return True
    pieces = [q for p in parts for q in (_strip(x) for x in p.split(",")) if q]
    if pieces and all(_ON_THE_TASK.search(as_rule(q)[0]) for q in pieces):
        return True  # "make sure it compiles", "add a test for it", "… before you commit this"
    verbs = [p.split(maxsplit=1) for p in parts]
    return all(len(v) == 2 and not _NOT_A_VERB.match(v[0]) and _PRONOUN_OBJECT.match(v[1]) for v in verbs if v)


def _capital(text: str) -> str:
    text = text.strip()
    if not text or text.startswith(("`", "/", ".", "~", "http://", "https://", "*")):
        return text
    return text[:1].upper() + text[1:]


_IDENTIFIER = re.compile(r"`[^`\n]{3,}`|(?<![\w/.:-])(?:[a-z]\w*_\w+|[a-z]+[A-Z]\w*|[\w-]+(?:[./][\w-]+)+)(?![\w/])")


def identifiers(text: str) -> set[str]:
    """The names of code in a user's words (`x`, snake_case, camelCase, a path or dotted name; no
    URL): two lessons of one session about the same name are one lesson said twice."""
    text = re.sub(r"\w+://\S+", " ", text)
    return {found.strip("`").lower() for found in _IDENTIFIER.findall(text) if len(found.strip("`")) >= 4}


def form(words: str) -> str:
    """The form of the user's first clause (`as_rule`): challenge, missed, asked, said."""
    return as_rule(next(iter(clauses(words)), ""))[1]


def corrects(words: str) -> bool:
    """The user's words correct the agent in a form phrasing turns into a rule ("why are you…",
    "you haven't…", "stop …-ing")."""
    return form(words) in ("challenge", "missed")


def said_as(title: str, words: str) -> bool:
    """The title is the user's words as they said them (their first sentence, perhaps cut)."""
    shown = title.rstrip("…").lower()
    return _SPACE.sub(" ", words).strip().lower().startswith(shown[:max(12, len(shown) - 1)])
