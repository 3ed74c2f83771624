"""Fitting ranked memories into a token budget and rendering them as the prompt's memory block.

Owns the token estimate (behind `Tokenizer`, so a real tokenizer can be plugged in), greedy
packing (best score first; a memory that does not fit is skipped whole, never cut), and the block's
text: a header saying "N of M memories, ~T tokens" (seed 001), then memories grouped by type,
the groups ordered by their best memory (strongest first), or by scope (seed 001's grouping by service, `general` last), and last the
filler, if any, under a heading of its own (`FILLER_HEADING`), so the agent can tell the
memories matched to its task from those only filling the room left.

Memory text is data: it cannot add headings, fences or "system:" lines to the block. Only the
block's own lines start at column 0; a memory's continuation lines are indented, heading marks,
fences and HTML comment marks inside it are escaped, and control characters are dropped. Secrets
are redacted again here (`redaction.redact`): ingest redacts what it stores, but a memory typed
by hand, imported or edited never passed through ingest, and a prompt is where a secret leaks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol, Sequence

from store.engine.records import Memory
from store.engine.redaction import INVISIBLE, redact

# Seed 000's reading order first, then the other types memdeck knows.
TYPE_ORDER = (
    "constraint", "architecture", "pattern", "pitfall", "decision", "fix", "convention",
    "dependency", "context", "preference", "timing", "behavior", "remediation", "maintenance",
)
GENERAL_SCOPE = "general"
# The filler's section (`injection.gate.fill`): memories of the project nothing matched to the task.
FILLER_HEADING = "### Also in this project (not matched to the task)"
# Its group, apart from every type and scope a memory can name (no name holds a NUL).
_FILLER_GROUP = "\x00filler"

# Controls, and the characters that act unseen: an agent reads invisible tag characters (U+E0000)
# as instructions a person reviewing the block never sees.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{INVISIBLE}]")
# Marks that would make a heading or a rule of a line, wherever it is indented.
_LINE_START_MARK = re.compile(r"^(\s*)(#|---|===)")
_FENCE = re.compile(r"(`{3,}|~{3,})")
# The hyphens of HTML comment marks (`<!--`, `-->`, `--!>`): a memory must not open or close a
# comment (or the managed block of CLAUDE.md, whose markers are comments) around other text.
# Each hyphen is escaped, so no pair of them is left to form a mark.
_COMMENT_DASHES = re.compile(r"(?<=<!)-{2,}|-{2,}(?=!?>)")
# The `<` of anything shaped like an XML tag (`</system-reminder>`, `<system>`): the block may sit
# inside such tags, and a memory must not close them or open new ones.
# (Closed on its line, so `a<b and c>d` is a tag but `b<c hold` is a comparison, left alone.)
_TAG_OPEN = re.compile(r"<(?=/?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>)")
# The longest heading the block is given (`injection.heading`, which a project's file can set).
MAX_HEADING_CHARS = 80


class Tokenizer(Protocol):
    """Counts the tokens of a text. Packing needs only this."""

    def count(self, text: str) -> int: ...


@dataclass(frozen=True)
class CharTokenizer:
    """The seeds' estimate: characters / 4, rounded up so an estimate never undercounts a part."""

    chars_per_token: float = 4.0

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)


@dataclass(frozen=True)
class Packed:
    """What fitted: the block's text, its tokens, and the ids of the memories in it."""

    block: str
    tokens: int
    included: tuple[str, ...]
    over_budget: tuple[str, ...]


def neutralise(text: str) -> list[str]:
    """A memory's text as lines that cannot change the block's structure."""
    lines = []
    # Controls go before redaction: a NUL inside a key would otherwise hide it from the patterns.
    text, _ = redact(_CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))
    for raw in text.split("\n"):
        line = raw.replace("\t", "    ").rstrip()
        line = _FENCE.sub(lambda m: "\\" + "\\".join(m.group()), line)
        line = _COMMENT_DASHES.sub(lambda m: "\\-" * len(m.group()), line)
        line = _LINE_START_MARK.sub(lambda m: m.group(1) + "\\" + m.group(2), line)
        line = _TAG_OPEN.sub("\\\\<", line)
        if line or (lines and lines[-1]):  # a run of blank lines is one: it cannot push text away
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return lines or [""]


def one_line(text: str, limit: int) -> str:
    """Text as one neutralised line of at most `limit` characters (a heading from config)."""
    line = " ".join(" ".join(neutralise(text)).split())
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def render_item(memory: Memory, grouping: str) -> str:
    """One memory as a list item. Continuation lines are indented, so they stay inside it."""
    return _render_item(memory.title, memory.content, memory.type, memory.confidence, grouping)


# Packing renders every candidate to count it, and a long-lived process (the MCP server, the
# workbench's preview) primes the same memories again and again: rendering is a pure function
# of these fields, kept for the last few thousand.
@lru_cache(maxsize=4096)
def _render_item(title: str, content: str, kind: str, confidence: float, grouping: str) -> str:
    lines = neutralise(content)
    # `*` escaped: a title holding `**` would end the bold it is written in.
    safe_title = neutralise(title)[0].replace("*", "\\*")
    first = lines[0]
    # A title derived from the content only repeats it; a title of its own is worth the tokens.
    if safe_title and not content.lstrip().startswith(title.rstrip("…")):
        first = f"**{safe_title}**: {first}"
    if grouping == "scope":
        # A type is checked when written, but a row another program wrote is not: one line, escaped.
        first = f"[{neutralise(kind)[0]}] {first}"
    item = ["- " + first, *("  " + line if line else "" for line in lines[1:])]
    item[-1] += f" (confidence: {confidence:.2f})"
    return "\n".join(item)


def group_key(memory: Memory, grouping: str) -> str:
    return (memory.scope or GENERAL_SCOPE) if grouping == "scope" else memory.type


def group_heading(key: str, grouping: str) -> str:
    safe_key = neutralise(key)[0].replace("\\", "")
    return f"### {safe_key if grouping == 'scope' else safe_key.capitalize()}"


def _group_order(keys: Sequence[str], grouping: str) -> list[str]:
    """Scope groups by name (`general` last); type groups strongest first: `keys` come in the
    order of each group's best memory (the memories are passed best first), so the block opens
    with the memory most about the task, whatever its type (issue 25)."""
    if grouping == "scope":
        return sorted(keys, key=lambda k: (k == GENERAL_SCOPE, k.lower()))
    return list(keys)


def header(heading: str, shown: int, total: int, tokens: int) -> str:
    noun = "memory" if total == 1 else "memories"
    heading = one_line(heading, MAX_HEADING_CHARS) or "Project Memory"
    return f"## {heading} ({shown:,} of {total:,} {noun}, ~{tokens:,} tokens)"


def _filler_item(memory: Memory) -> str:
    """A filler's item: in a section of mixed types, it says its type as scope grouping does."""
    return render_item(memory, "scope")


def render(memories: Sequence[Memory], *, heading: str, total: int, grouping: str,
           tokenizer: Tokenizer, filler: Sequence[Memory] = ()) -> tuple[str, int]:
    """The block for `memories` (best first; grouped for reading), then `filler` in a section of
    its own, and its token count."""
    if not memories and not filler:
        return "", 0
    groups: dict[str, list[Memory]] = {}
    for memory in memories:
        groups.setdefault(group_key(memory, grouping), []).append(memory)
    parts = []
    for key in _group_order(list(groups), grouping):
        parts.append(group_heading(key, grouping) + "\n" + "\n".join(render_item(m, grouping) for m in groups[key]))
    if filler:
        parts.append(FILLER_HEADING + "\n" + "\n".join(_filler_item(m) for m in filler))
    shown = len(memories) + len(filler)
    body = "\n\n".join(parts) + "\n"
    # The header states the block's own size: settle the number it prints (two rounds suffice,
    # the header's length changes by a digit at most).
    tokens = tokenizer.count(body)
    for _ in range(3):
        text = header(heading, shown, total, tokens) + "\n\n" + body
        counted = tokenizer.count(text)
        if counted == tokens:
            break
        tokens = counted
    return text, tokenizer.count(text)


def pack(ranked: Sequence[Memory], *, budget: int, heading: str, total: int, grouping: str,
         tokenizer: Tokenizer, long: float | None = None, filler: Sequence[Memory] = ()) -> Packed:
    """Greedy by rank: each memory goes in whole if it still fits, else it is skipped.

    With `long`, a memory longer than `long` typical ones (the median length of `ranked`) is
    tried after the others: one outsized memory (a pasted log, say) does not crowd out the
    several shorter ones ranked just below it, and it still goes in if room is left.

    `filler` (memories nothing says are about the task, `injection.gate.fill`) are tried after
    all of `ranked`, long ones included, in their own order: they only take the room left.

    Costs are counted part by part (header, group headings, items, separators), which for the
    character estimate is never less than the whole block's count; the finished block is still
    measured, and the lowest-ranked memory dropped until it fits, so no tokenizer can make the
    block exceed the budget.
    """
    reserve = tokenizer.count(header(heading, total, total, max(budget, 1)) + "\n\n")
    used = reserve
    chosen: list[Memory] = []
    skipped: list[str] = []
    open_groups: set[str] = set()
    costs = {id(memory): tokenizer.count(render_item(memory, grouping) + "\n") for memory in ranked}
    costs.update({id(memory): tokenizer.count(_filler_item(memory) + "\n") for memory in filler})
    order = {id(memory): n for n, memory in enumerate([*ranked, *filler])}
    apart = {id(memory) for memory in filler}
    tiers = [list(ranked), list(filler)]
    if long is not None and costs:
        typical = sorted(costs.values())[(len(costs) - 1) // 2]  # the median (the lower one)
        limit = long * typical
        tiers = [[*(m for m in tier if costs[id(m)] <= limit), *(m for m in tier if costs[id(m)] > limit)]
                 for tier in tiers]
    for memory in (m for tier in tiers for m in tier):
        key = _FILLER_GROUP if id(memory) in apart else group_key(memory, grouping)
        cost = costs[id(memory)]
        if key not in open_groups:
            cost += tokenizer.count("\n" + (FILLER_HEADING if key == _FILLER_GROUP else group_heading(key, grouping)) + "\n")
        if used + cost > budget:
            skipped.append(memory.id)
            continue
        used += cost
        chosen.append(memory)
        open_groups.add(key)
    chosen.sort(key=lambda memory: order[id(memory)])  # the block keeps the rank order

    def rendered() -> tuple[str, int]:
        return render([m for m in chosen if id(m) not in apart], heading=heading, total=total, grouping=grouping,
                      tokenizer=tokenizer, filler=[m for m in chosen if id(m) in apart])

    block, tokens = rendered()
    while chosen and tokens > budget:
        skipped.insert(0, chosen.pop().id)
        block, tokens = rendered()
    return Packed(block, tokens, tuple(m.id for m in chosen), tuple(skipped))
