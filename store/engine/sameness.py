"""Is a new text the same statement as a memory, an update of it, a contradiction, or a distinct
statement? The one decision behind reinforcement, supersession, contradiction flags and
`memdeck consolidate`, made without a model from how two statements differ.

Each text is read into three kinds of words (`read`):

- **specifics**: the words that pin a statement down and that a change of fact changes: numbers
  and versions (`18`, `v0.2.9`, `3.11`), identifiers (`snake_case`, `camelCase`, `NODE_ENV`,
  `--dry-run`, `package.json`), paths (`src/app.ts`), quoted or back-ticked spans, and names
  (a capitalised word inside a sentence: `Redis`, `Vitest`).
- **polarity**: negation words (never, not, don't, must not, avoid, no longer; also French,
  German, Spanish, Italian and Portuguese ones), counted modulo two, and a few antonym pairs
  (enable/disable, allow/forbid, always/never, ...).
- **subject words**: the other words, lower-cased, without stop words, cut to a crude stem so
  that "runs", "running" and "run" are one word.

Then `compare(old, new)` decides, in this order:

1. **distinct** when the two share too little subject (`overlap` of subject words and
   specifics below `related`): unrelated, or related but about something else.
2. **contradiction** when they share the subject (`overlap` at least `contradiction`) and the
   polarity differs: one negates what the other says, or uses the antonym of a word the other
   uses.
3. **update** when they share the subject and the specifics differ (a number, version,
   identifier, path or name on one side is missing from the other), or when subject words were
   replaced (each side has words the other lacks) without the texts being near-identical. An
   update is *sure* when the subject words are (nearly) the same and only specifics changed:
   the "Node 18" to "Node 20" case; otherwise a person decides.
4. **same** when nothing above fired: same specifics, same polarity, the same subject words
   apart from a few added or dropped ones (`same` threshold on the fuzzy ratio of the stems).

The semantic signal (`store.index.embedding`, when installed and asked for) only ever makes
the decision more careful: a "same" whose meaning vectors are not close becomes an unsure update.

Every result carries its `signals` (the words behind the decision), which `show`, the inbox and
`memdeck eval-pairs` print.
"""

from __future__ import annotations

import re
import unicodedata
from store.engine.settings import SamenessSettings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

KINDS = ("same", "update", "contradiction", "distinct")
# Changed in this many separate places or more: another record of the same shape, not one fact
# changed (`changed_places`).
PLACES = 3


# Where the decision's lines are drawn: config section `sameness`, as it is typed.
Thresholds = SamenessSettings


DEFAULT_THRESHOLDS = SamenessSettings()


@dataclass(frozen=True)
class Reading:
    """What `compare` needs of one text."""

    specifics: frozenset[str]
    subject: frozenset[str]
    negations: int
    antonyms: frozenset[str]  # the antonym-pair words the text holds (by their pair's side)
    stems: str  # the subject words and specifics in order, for the fuzzy ratio
    sequence: tuple[str, ...] = ()  # the same, as a sequence: where the texts differ
    # A failure record (`failure: cmd=..., exit=..., error=..., next=...`): what failed, as
    # (the command, the specifics its error names); None for any other text.
    failed: tuple[str, frozenset[str]] | None = None


@dataclass(frozen=True)
class Sameness:
    """The decision for one pair, with what it rests on."""

    kind: str  # one of KINDS
    sure: bool
    overlap: float  # shared subject words and specifics / the smaller side's (0-1)
    signals: dict[str, Any] = field(default_factory=dict)

    def explain(self) -> str:
        """One line for `show`, the inbox and eval-pairs."""
        s = self.signals
        parts = [f"{self.kind}{'' if self.sure or self.kind in ('distinct', 'same') else ' (unsure)'}",
                 f"overlap {self.overlap:.2f}"]
        if s.get("shared"):
            parts.append("shared: " + " ".join(s["shared"][:6]))
        if s.get("specifics_old") or s.get("specifics_new"):
            parts.append(f"specifics {' '.join(s.get('specifics_old') or ['-'])} -> "
                         f"{' '.join(s.get('specifics_new') or ['-'])}")
        if s.get("polarity"):
            parts.append("polarity " + s["polarity"])
        if s.get("words_old") or s.get("words_new"):
            parts.append(f"words {' '.join(s.get('words_old') or ['-'])} -> {' '.join(s.get('words_new') or ['-'])}")
        if s.get("failed"):
            parts.append("another failure: " + s["failed"])
        if s.get("places"):
            parts.append(f"another record of the same shape: changed in {s['places']} places")
        if "semantic" in s:
            parts.append(f"semantic {s['semantic']:.2f}")
        return "; ".join(parts)


# -- reading a text ---------------------------------------------------------------------------

# Negation words, each counted once per occurrence; "must not", "do not" are a "not".
_NEGATIONS = frozenset("""
not no never don't dont doesn't doesnt didn't didnt can't cant cannot won't wont shouldn't shouldnt
mustn't mustnt isn't isnt aren't arent wasn't wasnt weren't werent haven't hasn't nor neither none
avoid avoids avoided avoiding without forbid forbids forbidden prohibited stop stopped
ne pas jamais aucun aucune sans éviter evitez évitez
nicht nie niemals kein keine keinen ohne vermeiden
nunca jamás jamas sin evitar
non mai senza evitare
não nao sem
""".split())
# "no longer" is one negation, not two words of subject.
_PHRASES = ((re.compile(r"\bno longer\b", re.I), " not "),)
# Pairs of words where one side says the opposite of the other; a text holding one side while
# the other text holds the other flips polarity.
_ANTONYMS = (
    ("always", "never"), ("enable", "disable"), ("enabled", "disabled"), ("allow", "forbid"),
    ("allow", "deny"), ("allow", "block"), ("allowed", "forbidden"), ("include", "exclude"),
    ("true", "false"), ("on", "off"), ("required", "optional"), ("safe", "unsafe"),
    ("works", "fails"), ("work", "fail"), ("succeeds", "fails"), ("correct", "incorrect"),
    ("valid", "invalid"), ("supported", "unsupported"), ("must", "mustn't"), ("keep", "remove"),
    ("add", "remove"), ("before", "after"), ("sync", "async"), ("should", "shouldn't"),
)
_ANTONYM_SIDE: dict[str, set[str]] = {}
for _a, _b in _ANTONYMS:
    _ANTONYM_SIDE.setdefault(_a, set()).add(f"{_a}|{_b}:0")
    _ANTONYM_SIDE.setdefault(_b, set()).add(f"{_a}|{_b}:1")

_STOP = frozenset("""
a an the and or but if then else of to in on at by for from with as is are was were be been being
this that these those it its it's there here into onto over under than so such very just only
also too can could would will shall may might must should do does did done have has had having
i we you he she they them our your their my me us when where which who whom what why how all any
each every some more most other same own both few s t via per up down out about again further
once use used using uses always
note notes remember reminder fyi tip important please nb basically actually really simply indeed
le la les un une des du de et ou en au aux pour par sur dans avec est sont ce cette qui que
der die das ein eine und oder zu im mit von für ist sind den dem des auf
el los las y o en con por para es son lo un una
il lo gli e o con per è sono
""".split())
_NEGATION_STOP = frozenset({"no", "not", "non", "ne", "sin", "sem", "nor"})

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_SPANS = re.compile(r"`([^`\n]{1,80})`|\"([^\"\n]{1,60})\"")
# A token as written (split on spaces); a specific if it matches one of these shapes.
_NUMBER = re.compile(r"^[v#]?\d+(?:[.,:_/-]\d+)*[a-z%]{0,3}$", re.I)
_HAS_DIGIT = re.compile(r"\d")
_IDENT = re.compile(r"^(?:--?[a-z][\w-]*|[\w.-]*[A-Za-z0-9]_[\w.-]*|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)$")
_PATH = re.compile(r"^[~.]?[\w.@-]*/[\w./@*-]*$|^[\w-]+\.[a-z][a-z0-9]{0,5}$|^\.[\w-]+$")
_DOTTED = re.compile(r"^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+(?:\(\))?$")
_SENTENCE_END = re.compile(r"[.!?:;]$|^[-*>#]+$")
_TRIM = ".,;:!?()[]{}<>'\"`*"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _stem(word: str) -> str:
    """A crude stem: enough for "runs", "running", "ran"? no; "runs"/"running"/"run": yes."""
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiousl":
        word = word[:-1]  # "runn" -> "run", "stopp" -> "stop"
    return word.rstrip("e") if len(word) > 4 else word


def _specific(token: str, sentence_start: bool) -> str | None:
    """The token as a specific (normalised), or None for an ordinary word."""
    core = token.strip(_TRIM)
    if len(core) < 1:
        return None
    if core.isalpha():  # the common case, without the patterns: a word, or a name
        if (not sentence_start and core[0].isupper() and core[1:].islower() and len(core) > 2
                and core.lower() not in _STOP and core.lower() not in _NEGATIONS):
            return core.lower()
        if core.islower() or core[1:].islower() or core.isupper():
            return None
    if _NUMBER.match(core) or (_HAS_DIGIT.search(core) and len(core) <= 40):
        return core.lower().lstrip("v#") if _NUMBER.match(core) else core.lower()
    if _PATH.match(core) and not core.endswith("."):
        return core.lower()
    if _DOTTED.match(core) and not core.lower().startswith(("e.g", "i.e", "etc")):
        return core.lower()
    if _IDENT.match(core):
        lowered = core.lower()
        if lowered in _NEGATIONS or lowered in _STOP or lowered in _ANTONYM_SIDE:
            return None
        return lowered
    # A name: a capitalised word that does not start a sentence (Redis, Vitest, PostgreSQL).
    if (not sentence_start and core[:1].isupper() and core[1:].islower() and len(core) > 2
            and core.isalpha() and core.lower() not in _STOP and core.lower() not in _NEGATIONS):
        return core.lower()
    return None


# A failure record as Ralph's agents write them (seed 002): `failure: cmd=<command>, exit=<code>,
# error=<message>, next=<intended fix>` (also `expected RED: cmd=...` in test-first loops).
_FAILURE = re.compile(r"\bcmd=(?P<cmd>.+?)(?:,\s*exit=[^,]*)?,\s*error=(?P<error>.+?)(?:,\s*next=.*)?$", re.S)


def _failure(text: str) -> tuple[str, frozenset[str]] | None:
    """What a failure record says failed: its command (spaces and quotes aside) and the
    specifics its error names (files, tests, identifiers, numbers); None for another text."""
    found = _FAILURE.search(text)
    if found is None:
        return None
    command = " ".join(found["cmd"].replace('"', "").replace("'", "").split()).lower()
    return command, read(found["error"].strip(" '\"")).specifics


@lru_cache(maxsize=4096)
def read(text: str) -> Reading:
    text = _fold(text)
    failed = _failure(text)
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    specifics: set[str] = set()
    for quoted in _SPANS.finditer(text):
        span = (quoted.group(1) or quoted.group(2) or "").strip().lower()
        if span:
            specifics.add(span)
    text = _SPANS.sub(lambda m: " " + (m.group(1) or m.group(2) or "").replace(" ", "\u00a0") + " ", text)
    subject: set[str] = set()
    ordered: list[str] = []
    negations = 0
    antonyms: set[str] = set()
    sentence_start = True
    position, last_negation = 0, -10
    # `key=value` is two words: the value may be a negation ("error='No such file").
    for token in re.sub(r"(?<=\w)=(?=\S)", " = ", text).split():
        if token == "=":
            continue
        if "\u00a0" in token:
            ordered.append(token.replace("\u00a0", " ").strip(_TRIM).lower())
            sentence_start = False
            continue
        spec = _specific(token, sentence_start)
        if spec is not None:
            specifics.add(spec)
            ordered.append(spec)
        else:
            for word in _WORD.findall(token.lower().replace("’", "'")):
                if word.startswith("n'") and len(word) > 2:  # French elision: "n'utilisez"
                    negations, last_negation = _negation(negations, last_negation, position)
                    word = word[2:]
                if word in _NEGATIONS:
                    negations, last_negation = _negation(negations, last_negation, position)
                    continue
                position += 1
                if word in _ANTONYM_SIDE:
                    antonyms.update(_ANTONYM_SIDE[word])
                if word in _STOP or len(word) < 2:
                    continue
                stem = _stem(word)
                subject.add(stem)
                ordered.append(stem)
        sentence_start = bool(_SENTENCE_END.search(token))
    return Reading(frozenset(specifics), frozenset(subject), negations, frozenset(antonyms),
                   " ".join(ordered), tuple(ordered), failed)


def _negation(count: int, last: int, position: int) -> tuple[int, int]:
    """One more negation, unless it completes the one just before (within three words): French
    "ne ... pas", "ne ... jamais", Spanish "no ... nunca" are one negation, not two."""
    return (count if position - last <= 3 else count + 1), position


def changed_words(a: Reading, b: Reading) -> int:
    """How many words (subject words and specifics, counted with repeats, in any order) one
    text replaced, added or dropped to become the other: one for "Node 18" to "Node 20", two
    for "note 1 about subsystem 1" to "note 2 about subsystem 2", none for a reordering."""
    from collections import Counter

    old, new = Counter(a.sequence), Counter(b.sequence)
    return max(sum((old - new).values()), sum((new - old).values()))


# -- comparing two texts -----------------------------------------------------------------------

def _flipped(a: Reading, b: Reading) -> str | None:
    """How the polarity differs, in words, or None."""
    if (a.negations % 2) != (b.negations % 2):
        return f"{'negated' if a.negations % 2 else 'plain'} -> {'negated' if b.negations % 2 else 'plain'}"
    for side in a.antonyms:
        pair, index = side.rsplit(":", 1)
        other = f"{pair}:{1 - int(index)}"
        if other in b.antonyms and side not in b.antonyms:
            words = pair.split("|")
            return f"{words[int(index)]} -> {words[1 - int(index)]}"
    return None


def compare(old: str, new: str, *, thresholds: Thresholds | None = None,
            semantic: float | None = None) -> Sameness:
    """The decision for `new` against `old` (see the module's docstring)."""
    return compare_readings(read(old), read(new), thresholds=thresholds, semantic=semantic)


def compare_readings(a: Reading, b: Reading, *, thresholds: Thresholds | None = None,
                     semantic: float | None = None) -> Sameness:
    """`compare` on texts already read (consolidation reads each memory once)."""
    from rapidfuzz import fuzz

    thresholds = thresholds or DEFAULT_THRESHOLDS
    all_a, all_b = a.subject | a.specifics, b.subject | b.specifics
    shared = all_a & all_b
    smaller = min(len(all_a), len(all_b)) or 1
    overlap = len(shared) / smaller
    only_old_spec, only_new_spec = sorted(a.specifics - b.specifics), sorted(b.specifics - a.specifics)
    only_old_words, only_new_words = sorted(a.subject - b.subject), sorted(b.subject - a.subject)
    signals: dict[str, Any] = {"shared": sorted(shared, key=lambda w: (-len(w), w))[:12]}
    if only_old_spec or only_new_spec:
        signals["specifics_old"], signals["specifics_new"] = only_old_spec[:8], only_new_spec[:8]
    if only_old_words or only_new_words:
        signals["words_old"], signals["words_new"] = only_old_words[:8], only_new_words[:8]
    flip = _flipped(a, b)
    if flip:
        signals["polarity"] = flip
    if semantic is not None:
        signals["semantic"] = round(float(semantic), 3)
    if a.stems == b.stems and not flip and a.negations == b.negations:
        return Sameness("same", True, 1.0, signals)
    failed = _other_failure(a, b)
    if failed:
        # Two records of failures are one statement only when the same command failed the same
        # way: another command, or an error naming another file or test, is another failure,
        # however alike the records read ("rustfmt diff in src/main.rs" / "in src/lexer.rs").
        signals["failed"] = failed
        return Sameness("distinct", True, overlap, signals)
    if overlap < thresholds.related:
        return Sameness("distinct", True, overlap, signals)
    changed = changed_words(a, b)
    signals["changed"] = changed
    if changed > max(2, thresholds.max_change * max(len(a.sequence), len(b.sequence))):
        # Too much differs to be one statement restated or one fact changed: another statement
        # about the same things (two failures of one command on different files, say).
        return Sameness("distinct", True, overlap, signals)
    if flip and overlap >= thresholds.contradiction:
        return Sameness("contradiction", True, overlap, signals)
    subject_smaller = min(len(a.subject), len(b.subject)) or 1
    subject_overlap = len(a.subject & b.subject) / subject_smaller
    ratio = fuzz.token_sort_ratio(a.stems, b.stems)
    signals["ratio"] = round(ratio, 1)
    if only_old_spec or only_new_spec:
        # Specifics differ: the same subject with a changed fact. Sure only for one value
        # replaced by another (a number, version or date: "Node 18" to "Node 20", a port) on the
        # same subject words. More than one changed ("note 1 about subsystem 1" to "note 2 about
        # subsystem 2"), or another path, identifier or name (a failure in another file), may
        # be about another thing: a person decides.
        sure = (subject_overlap >= thresholds.sure_update and changed <= 1 and not flip
                and len(only_old_spec) == 1 and len(only_new_spec) == 1
                and all(_NUMBER.match(x) for x in (*only_old_spec, *only_new_spec)))
        return _update_or_another(a, b, sure, overlap, signals)
    if flip or _unmatched(only_old_words, only_new_words) or ratio < thresholds.same:
        # A word added, dropped or replaced (not a spelling variant of one on the other side),
        # or polarity flipped on a loosely shared subject: not the same statement, and not
        # clearly an update either: a person decides.
        return _update_or_another(a, b, False, overlap, signals)
    if semantic is not None and semantic < thresholds.semantic_same:
        return Sameness("update", False, overlap, signals)
    return Sameness("same", True, overlap, signals)


def _update_or_another(a: Reading, b: Reading, sure: bool, overlap: float, signals: dict[str, Any]) -> Sameness:
    """An update, unless the text changed in `PLACES` separate places or more, and not only in
    numbers. One fact with a changing value changes in one place ("Node 18" to "Node 20"), at
    most two (a version and its date); a record whose names, identifiers or words changed in
    several places at once is another record of the same shape: another task's "TASK-13 is
    complete once commit 5136946 is verified by geometry_helpers_tdd ..." beside task 12's.
    Versions bumped together ("Node 18, pnpm 8, turbo 1" to "Node 20, pnpm 9, turbo 2") stay an
    update. Two records of one failure are known to be about one thing (their advice may be
    rewritten whole), so this does not apply to them."""
    places, changed = changed_places(a, b)
    if places >= PLACES and a.failed is None and not all(_NUMBER.match(word) for word in changed):
        signals["places"] = places
        return Sameness("distinct", True, overlap, signals)
    return Sameness("update", sure, overlap, signals)


def changed_places(a: Reading, b: Reading) -> tuple[int, list[str]]:
    """In how many separate places one text's words (subject words and specifics, in order)
    were replaced, added or dropped to become the other (one for "Node 18" to "Node 20", two for
    "note 1 about subsystem 1" to "note 2 about subsystem 2"), and the words concerned."""
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(None, a.sequence, b.sequence, autojunk=False)
    places, changed = 0, []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            places += 1
            changed += [*a.sequence[i1:i2], *b.sequence[j1:j2]]
    return places, changed


def _other_failure(a: Reading, b: Reading) -> str | None:
    """How two failure records differ in what failed (the command, or the specifics their
    errors name), in words; None when either is no failure record or the same thing failed."""
    if a.failed is None or b.failed is None:
        return None
    (command_a, error_a), (command_b, error_b) = a.failed, b.failed
    if command_a != command_b:
        return "cmd {} -> {}".format(*_differing(command_a, command_b))
    if error_a != error_b:
        return (f"error names {' '.join(sorted(error_a - error_b)[:4]) or '-'} -> "
                f"{' '.join(sorted(error_b - error_a)[:4]) or '-'}")
    return None


def _differing(a: str, b: str, width: int = 40) -> tuple[str, str]:
    """Where two commands differ: their words without those both start and end with ("…" for
    them), each cut to `width`."""
    words_a, words_b = a.split(), b.split()
    start = 0
    while start < min(len(words_a), len(words_b)) and words_a[start] == words_b[start]:
        start += 1
    end = 0
    while end < min(len(words_a), len(words_b)) - start and words_a[-1 - end] == words_b[-1 - end]:
        end += 1

    def part(words: list[str]) -> str:
        text = " ".join(words[start:len(words) - end]) or "-"
        text = text if len(text) <= width else text[: width - 1] + "…"
        return ("… " if start else "") + text + (" …" if end else "")

    return part(words_a), part(words_b)


def _unmatched(old_words: list[str], new_words: list[str]) -> bool:
    """Whether a word on one side has no spelling variant on the other ("colour" and "color",
    "organise" and "organize" match; "npm" and "pnpm" differ by a letter but are short, so
    only words of 5 letters or more match this way)."""
    from rapidfuzz import fuzz

    for mine, theirs in ((old_words, new_words), (new_words, old_words)):
        for word in mine:
            if len(word) < 5 or not any(len(other) >= 5 and fuzz.ratio(word, other) >= 85 for other in theirs):
                return True
    return False
