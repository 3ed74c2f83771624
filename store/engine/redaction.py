"""Making text from an agent session safe to store: terminal escapes and control characters
stripped, secrets redacted, length capped.

Everything ingest stores (a memory's text, an activity's summary) goes through here first. The
caller gets back what was done (`Cleaned.redactions`, `Cleaned.cut_from`) so the memory's meta
and the session log can say so. Redaction runs before the cap, so a cut can never leave half a
secret that the patterns no longer recognise.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.engine.word_trie import trie_pattern

# The secret shapes redacted: a data file, with where each shape comes from.
RULES_FILE = Path(__file__).with_name("secret_rules.toml")

# CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL|ST`), other two-byte escapes, then lone controls
# (newline and tab are kept: they are text).
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Characters that change how the text around them reads without showing themselves: bidi
# embeddings, overrides, isolates and marks (U+202E turns `txt.exe` into `exe.txt`), zero-width
# spaces and joiners, the byte-order mark, line and paragraph separators, and the invisible
# "tag" characters (U+E0000 block) that can carry a hidden instruction to an agent.
INVISIBLE = ("\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
             "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f")
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_ANY_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{INVISIBLE}]")
# A field is one line: line breaks and tabs go too.
_FIELD_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{INVISIBLE}]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

def _load_rules(path: Path = RULES_FILE) -> tuple[tuple[str, tuple[str, ...], str, str | None], ...]:
    """The secret shapes of `secret_rules.toml`: (kind, hints, pattern, what of a match to keep),
    as written; each pattern is compiled the first time a text holds one of its hints
    (`_compiled`), which most processes never need (a prompt hook redacts text with no hint)."""
    with open(path, "rb") as handle:
        rules = tomllib.load(handle)["rule"]
    return tuple((rule["id"], tuple(rule["hints"]), rule["pattern"], rule.get("keep")) for rule in rules)


_SECRETS = _load_rules()
# All the hints in one scan: most text holds none of them and is done with after this. A trie,
# not a plain alternation: it is the one scan every log summary pays for (`word_trie`).
_ANY_HINT = re.compile(trie_pattern(hint for _, hints, _, _ in _SECRETS for hint in hints))
# Each hint with the rules that name it: a text's rules are found by looking for each hint
# once, not for each rule's hints in turn (a common word like "key" is named by several).
_HINT_RULES = tuple((hint, tuple(i for i, (_, hints, _, _) in enumerate(_SECRETS) if hint in hints))
                    for hint in dict.fromkeys(hint for _, hints, _, _ in _SECRETS for hint in hints))


@functools.cache
def _compiled(index: int) -> tuple[re.Pattern, re.Pattern | None]:
    """The pattern of rule `index` of `_SECRETS`, and what of a match it keeps."""
    _, _, pattern, keep = _SECRETS[index]
    return re.compile(pattern, re.DOTALL), re.compile(keep) if keep else None


@dataclass(frozen=True)
class Cleaned:
    text: str
    redactions: dict[str, int] = field(default_factory=dict)  # kind -> how many
    cut_from: int | None = None  # the length before the cap, when it was cut
    stripped: int = 0  # control characters and escape sequences removed

    @property
    def redacted(self) -> bool:
        return bool(self.redactions)

    def meta(self) -> dict:
        """What to record in a memory's meta and the session log."""
        data: dict = {}
        if self.redactions:
            data["redactions"] = dict(self.redactions)
        if self.cut_from is not None:
            data["cut_from"] = self.cut_from
        if self.stripped:
            data["control_stripped"] = self.stripped
        return data


def strip_controls(text: str) -> tuple[str, int]:
    """The text without terminal escapes, control characters and invisible ones (bidi, zero
    width), and how many were removed. Newlines and tabs stay: they are text."""
    if _ANY_CONTROL.search(text):
        without_escapes, escapes = _ANSI.subn("", text)
        cleaned, controls = _CONTROL.subn("", without_escapes)
        cleaned, invisible = _INVISIBLE.subn("", cleaned)
        return cleaned, escapes + controls + invisible
    return text, 0


def unify_line_breaks(text: str) -> str:
    """CRLF and lone CR as LF: a memory's lines end one way, whatever wrote them (ingest drops CR
    as a control character; `add`, `edit` and imports make it a line break). A CR left in a
    memory would be a line break to one reader (Ralph's format) and not to another."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def clean_field(value: str | None) -> str | None:
    """A one-line field from outside (scope, tag, hat, session id, project name) as memdeck
    keeps it: escape sequences, controls, line breaks and invisible characters removed, half
    characters made U+FFFD, trimmed; None when nothing is left."""
    if value is None:
        return None
    value = _LONE_SURROGATE.sub("\ufffd", _FIELD_UNSAFE.sub("", _ANSI.sub("", value))).strip()
    return value or None


def redact(text: str) -> tuple[str, dict[str, int]]:
    """The text with every recognised secret replaced by `[REDACTED:kind]`, and the counts."""
    lower = text.lower()
    if not _ANY_HINT.search(lower):
        return text, {}
    found: Counter[str] = Counter()
    for index in _hinted_rules(lower):
        kind = _SECRETS[index][0]
        pattern, keep = _compiled(index)

        def replace(match: re.Match, kind: str = kind, keep: re.Pattern | None = keep) -> str:
            found[kind] += 1
            prefix = keep.match(match.group()).group() if keep else ""
            return f"{prefix}[REDACTED:{kind}]"

        text = pattern.sub(replace, text)
    return text, dict(found)


def _hinted_rules(lower: str) -> list[int]:
    """The rules with a hint in `lower`, in the file's order (each rule runs on what the ones
    before it left)."""
    rules: set[int] = set()
    for hint, named_by in _HINT_RULES:
        if hint in lower:
            rules.update(named_by)
    return sorted(rules)


# -- database passwords in messages --------------------------------------------------------------

# A PostgreSQL URL runs to the next blank (a password typed with `#`, `/`, `?` or `@` in it, not
# percent-encoded, is still part of it); its user information is all before its last `@`.
_DB_URL = re.compile(r"(?i)(postgres(?:ql)?://)(\S*)")
_QUERY_PARAM = re.compile(r"([?&])([^=&\s]*)=([^&\s]*)")
# libpq's `key=value` connection string: `password=x`, `password = 'x y'`.
_DSN_PASSWORD = re.compile(r"(?i)(?<![\w%?&])(password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s'][^\s]*)")
_PASSWORD_KEYS = ("password", "sslpassword")


def hide_passwords(text: str) -> str:
    """`text` with every PostgreSQL password in it as `***`: a URL's `user:PASSWORD@`, its
    `?password=` parameter (its key percent-encoded or not), and a `password=` of libpq's
    `key=value` form. Every message naming a store goes through this one function."""
    if "://" not in text and "assword" not in text.lower() and "%" not in text:
        return text
    text = _DB_URL.sub(_hide_in_url, text)
    return _DSN_PASSWORD.sub(r"\1***", text)


def _hide_in_url(match: re.Match) -> str:
    from urllib.parse import unquote

    scheme, rest = match.group(1), match.group(2)
    at = rest.rfind("@")
    if at >= 0 and ":" in rest[:at]:
        rest = rest[:rest.index(":")] + ":***" + rest[at:]

    def param(found: re.Match) -> str:
        key = unquote(found.group(2)).strip().lower()
        return f"{found.group(1)}{found.group(2)}=***" if key in _PASSWORD_KEYS else found.group()

    return scheme + _QUERY_PARAM.sub(param, rest)


def holds_password(text: str) -> bool:
    """Whether `text` (a `--db` value) holds a password `hide_passwords` would hide."""
    return hide_passwords(text) != text


def cap(text: str, max_length: int) -> tuple[str, int | None]:
    """At most `max_length` characters, cut at a line or word break when one is near."""
    if max_length <= 0 or len(text) <= max_length:
        return text, None
    cut = text[: max_length - 1]
    for breaker in ("\n", " "):
        at = cut.rfind(breaker)
        if at > max_length * 0.8:
            cut = cut[:at]
            break
    return cut.rstrip() + "…", len(text)


def clean(text: str, max_length: int = 0) -> Cleaned:
    """Strip, redact, then cap: the order that never stores a secret or an escape."""
    text, stripped = strip_controls(text)
    text, redactions = redact(text)
    text, cut_from = cap(text, max_length)
    return Cleaned(text, redactions, cut_from, stripped)


def whole_characters(value: Any) -> Any:
    """Parsed JSON or YAML (text, and lists and mappings of it) with every lone surrogate made
    U+FFFD. A `\\ud800` escape names half a character; Python keeps it, SQLite cannot store it."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [whole_characters(item) for item in value]
    if isinstance(value, dict):
        return {whole_characters(key): whole_characters(item) for key, item in value.items()}
    return value


def summary_line(text: str, width: int = 200) -> str:
    """A one-line summary of `text` for the session log: stripped and redacted like a memory,
    flattened, short. Only the head of a long text is looked at, with room for a secret that
    straddles the cut."""
    return _summary_of_head(text[: width + 120], width)


# A session repeats itself: a hook's note after every tool call, "Todos have been modified", a
# tool's name. In the longer shared transcripts a quarter to a half of the log entries repeat an
# earlier entry's head, and a summary depends on nothing but its head and width (the secret
# rules are read once, when the module loads): the recent ones are kept, not redacted again.
@functools.lru_cache(maxsize=1024)
def _summary_of_head(head: str, width: int) -> str:
    head, _ = strip_controls(head)
    head, _ = redact(head)
    flat = " ".join(head.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
