"""Ralph's `.agent/memories.md` (seed 002): reading it into memories, and writing memories back in
exactly the layout Ralph's own writer produces.

Ralph's parser silently drops what it cannot read and joins stray text to the memory above it.
This one keeps every memory Ralph would keep (blank `> ` lines included, which Ralph loses; a
repeated id's second block as `<id>#2`), and reports everything else as a problem with its line
number instead of gluing it on or inventing it.

Writing, nothing a memory holds can become structure: every line of its text is quoted (a line
break of any kind, CR included, starts a new `> ` line, so `### mem-…` inside it stays text),
and the characters a tag list is made of (`,`, `|`, `>` of `-->`, line breaks, and `%` itself)
are written as `%2C`-style escapes, which this reader turns back.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable

from store.engine.errors import InvalidInput
from store.interop.document import ImportDocument, IncomingMemory, read_time
from store.engine.limits import TIME_RANGE, time_in_range
from store.engine.records import Memory
from store.engine.vocabulary import Vocabulary

# Ralph's four sections, in the order its template writes them, with the type each holds.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("Patterns", "pattern"),
    ("Decisions", "decision"),
    ("Fixes", "fix"),
    ("Context", "context"),
)
TEMPLATE_HEADER = "# Memories\n"
# Ralph's parser starts in Patterns: a memory above every section heading is a pattern.
DEFAULT_SECTION = "Patterns"

_MEMORY_HEADING = re.compile(r"^###\s+(\S.*?)\s*$")
# A repeated id is kept as `<id>#2`, `<id>#3`, ... (the eval files' name for it), so the suffix
# is read back too.
_RALPH_ID = re.compile(r"^mem-(\d+)-[0-9a-f]{4}(?:#\d+)?$")
_SECTION_HEADING = re.compile(r"^##\s+(.+?)\s*$")
_TITLE_HEADING = re.compile(r"^#\s+\S")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what `split_lines` reads as the end of a line
_METADATA = re.compile(
    r"^<!--\s*tags:\s*(?P<tags>[^|]*?)\s*(?:\|\s*created:\s*(?P<created>[^\s>]*)\s*)?-->\s*$"
)


@dataclass(frozen=True)
class RalphMemory:
    id: str
    type: str  # the memdeck type of the section (via the vocabulary)
    section: str  # the section heading as written ("Patterns")
    content: str  # the quoted lines without their `> `, joined by newlines; blank lines kept
    tags: tuple[str, ...] = ()
    created: str = ""  # the date as written in the metadata comment; "" when there is none
    line: int = 0  # 1-based line of the `### mem-…` heading

    @property
    def id_timestamp(self) -> int | None:
        """The unix seconds a Ralph id carries (`mem-1737372000-a1b2`), if it has them."""
        match = _RALPH_ID.match(self.id)
        return int(match.group(1)) if match else None


@dataclass(frozen=True)
class RalphProblem:
    line: int
    message: str


@dataclass(frozen=True)
class RalphParse:
    source: str
    memories: list[RalphMemory] = field(default_factory=list)
    problems: list[RalphProblem] = field(default_factory=list)


def split_lines(text: str) -> list[str]:
    """Lines without their endings; CRLF, lone CR and a missing final newline all read the same."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class _Block:
    """The memory being read: its heading, quoted lines and metadata so far."""

    def __init__(self, memory_id: str, line: int, section: str, type: str) -> None:
        self.id = memory_id
        self.line = line
        self.section = section
        self.type = type
        self.content: list[str] = []
        self.blank_run = 0  # bare blank lines seen since the last quoted line
        self.tags: tuple[str, ...] = ()
        self.created = ""
        self.metadata_line = 0


class _Parser:
    def __init__(self, source: str, vocabulary: Vocabulary) -> None:
        self.source = source
        self.vocabulary = vocabulary
        self.section = DEFAULT_SECTION
        self.type = "pattern"
        self.block: _Block | None = None
        self.skipping = False  # inside an unreadable block: its lines belong to its problem
        self.stray_start = 0  # first line of a run of text outside any memory
        self.memories: list[RalphMemory] = []
        self.problems: list[RalphProblem] = []
        self.seen: dict[str, int] = {}

    def problem(self, line: int, message: str) -> None:
        self.problems.append(RalphProblem(line, message))

    def run(self, lines: list[str]) -> RalphParse:
        for number, line in enumerate(lines, start=1):
            self.read(number, line)
        self.flush_stray(len(lines) + 1)
        self.flush_block()
        return RalphParse(self.source, self.memories, self.problems)

    def read(self, number: int, line: str) -> None:
        heading = _MEMORY_HEADING.match(line)
        section = None if heading else _SECTION_HEADING.match(line)
        if heading or section or _TITLE_HEADING.match(line):
            self.flush_stray(number)
            self.flush_block()
            self.skipping = False
            if heading:
                self.open_block(number, heading.group(1))
            elif section:
                self.section = section.group(1)
                self.type = self.vocabulary.resolve_type(self.section).type
            return
        if self.skipping:
            return
        if not line.strip():
            self.flush_stray(number)
            if self.block is not None:
                self.block.blank_run += 1
            return
        if self.block is not None and self.read_into_block(number, line):
            return
        if not self.stray_start:
            self.stray_start = number

    def open_block(self, number: int, memory_id: str) -> None:
        if not _RALPH_ID.match(memory_id):
            self.problem(number, f"heading {memory_id!r} is not a Ralph memory id "
                                 "(mem-<unix seconds>-<4 hex>); its block is not imported")
            self.skipping = True
        elif memory_id in self.seen:
            # Two memories whose ids collided: the second is a memory too, kept under a name of its own.
            repeat = 2
            while f"{memory_id}#{repeat}" in self.seen:
                repeat += 1
            renamed = f"{memory_id}#{repeat}"
            self.problem(number, f"{memory_id} appears again (first at line {self.seen[memory_id]}); "
                                 f"this block is imported as {renamed}")
            self.seen[renamed] = number
            self.block = _Block(renamed, number, self.section, self.type)
        else:
            self.seen[memory_id] = number
            self.block = _Block(memory_id, number, self.section, self.type)

    def read_into_block(self, number: int, line: str) -> bool:
        """Take `line` into the open memory if it is a quote or metadata line; False if not."""
        block = self.block
        if line.startswith(">"):
            if block.metadata_line:
                self.problem(number, f"quoted line after {block.id}'s metadata comment "
                                     f"(line {block.metadata_line}); not imported")
                return True
            text = line[2:] if line.startswith("> ") else line[1:]
            if block.content and block.blank_run:
                # A bare blank line between quoted lines is still a blank line of the memory.
                block.content.extend([""] * block.blank_run)
            block.content.append(text)
            block.blank_run = 0
            return True
        metadata = _METADATA.match(line)
        if metadata:
            if block.metadata_line:
                self.problem(number, f"second metadata comment for {block.id} "
                                     f"(first at line {block.metadata_line}); ignored")
                return True
            block.tags = tuple(dict.fromkeys(unescape_tag(t.strip()) for t in metadata.group("tags").split(",")
                                             if t.strip()))
            block.created = metadata.group("created") or ""
            block.metadata_line = number
            return True
        return False

    def flush_stray(self, number: int) -> None:
        if self.stray_start:
            last = number - 1
            where = f"line {self.stray_start}" if last == self.stray_start else f"lines {self.stray_start}-{last}"
            self.problem(self.stray_start, f"text outside any memory block ({where}); not imported")
            self.stray_start = 0

    def flush_block(self) -> None:
        block, self.block = self.block, None
        if block is None:
            return
        if not block.content:
            self.problem(block.line, f"{block.id} has no '> ' content lines; not imported")
            return
        if not block.metadata_line:
            self.problem(block.line, f"{block.id} has no '<!-- tags: … | created: … -->' comment; "
                                     "imported without tags or a written date")
        self.memories.append(RalphMemory(
            id=block.id, type=block.type, section=block.section, content="\n".join(block.content),
            tags=block.tags, created=block.created, line=block.line,
        ))


def parse_ralph(text: str, source: str = "<text>", *, vocabulary: Vocabulary | None = None) -> RalphParse:
    """Every memory in a Ralph memories file, and a problem for each part that is not one."""
    return _Parser(source, vocabulary or Vocabulary()).run(split_lines(text))


# What a tag must not hold raw in `<!-- tags: a, b | created: … -->`: the separators, the end
# of the comment, line breaks, and the escape's own mark.
_TAG_ESCAPES = {"%": "%25", ",": "%2C", "|": "%7C", ">": "%3E", "\r": "%0D", "\n": "%0A"}
_TAG_UNESCAPES = {code: char for char, code in _TAG_ESCAPES.items()}
_TAG_ESCAPE = re.compile("|".join(re.escape(char) for char in _TAG_ESCAPES))
_TAG_UNESCAPE = re.compile("|".join(_TAG_UNESCAPES), re.IGNORECASE)


def escape_tag(tag: str) -> str:
    return _TAG_ESCAPE.sub(lambda m: _TAG_ESCAPES[m.group()], tag)


def unescape_tag(tag: str) -> str:
    return _TAG_UNESCAPE.sub(lambda m: _TAG_UNESCAPES[m.group().upper()], tag)


def render_memory_block(memory: RalphMemory) -> str:
    """One memory as Ralph's `MarkdownMemoryStore::append` writes it, its text and tags unable
    to add lines of their own."""
    quoted = "\n> ".join(_LINE_BREAK.split(memory.content))
    return (f"\n### {memory.id}\n> {quoted}\n"
            f"<!-- tags: {', '.join(map(escape_tag, memory.tags))} | created: {memory.created} -->\n")


def render_ralph(memories: Iterable[RalphMemory]) -> str:
    """A whole memories file: Ralph's template with each memory under its section, in the order
    given. Sections Ralph does not know go after its four, as its writer appends them."""
    by_section: dict[str, list[RalphMemory]] = {name: [] for name, _ in SECTIONS}
    for memory in memories:
        by_section.setdefault(memory.section, []).append(memory)
    parts = [TEMPLATE_HEADER]
    for name, members in by_section.items():
        parts.append(f"\n## {name}\n")
        parts.extend(render_memory_block(m) for m in members)
    return "".join(parts)


# -- between Ralph's memories and memdeck's ---------------------------------------------------

# Where memdeck's types go in Ralph's four sections. Ralph has no other types, so the rest share
# the section closest in meaning, and come back from Ralph as that section's type.
SECTION_OF_TYPE: dict[str, str] = {
    "pattern": "Patterns", "convention": "Patterns", "behavior": "Patterns", "preference": "Patterns",
    "decision": "Decisions", "architecture": "Decisions", "constraint": "Decisions", "dependency": "Decisions",
    "fix": "Fixes", "pitfall": "Fixes", "remediation": "Fixes",
    "context": "Context", "timing": "Context", "maintenance": "Context",
}
# The written date, kept in a memory's meta only when it is not the UTC date of its creation time.
CREATED_META = "ralph_created"


def utc_date(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")


# Ralph's tool-failure records: `failure: cmd=…, exit=…, error=…, next=…` (and `expected RED: …`,
# the same fields for a test meant to fail). The command's comma-separated arguments are part of
# `cmd`, so the fields are found by the names that follow it.
_FAILURE = re.compile(
    r"^(?P<label>[A-Za-z][\w -]{0,30}):\s*cmd=(?P<cmd>.*?)(?:,\s*exit=(?P<exit>.*?))?,\s*error=(?P<error>.*?)"
    r",\s*next=(?P<next>.*)$", re.DOTALL)
TITLE_LIMIT = 100


def _unquote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        text = text[1:-1].strip()
    return text


def failure_title(content: str) -> str | None:
    """A title for a `failure: cmd=…, error=…, next=…` record that says what went wrong and what to
    do instead: `rg: no matches → use 'rg ... || true' when absence is expected`. The content's
    first characters (`failure: cmd=/home/…/bin/ralph tools task…`) are the same on every such
    record, so they would make every title alike. None when the content is not such a record."""
    match = _FAILURE.match(content.strip())
    if match is None:
        return None
    command = match.group("cmd").split()
    tool = command[0].rsplit("/", 1)[-1] if command else ""
    error, lesson = _unquote(match.group("error")), _unquote(match.group("next"))
    if not error and not lesson:
        return None
    label = match.group("label").strip()
    title = (f"{label}: " if label.lower() != "failure" else "") + (f"{tool}: " if tool else "")
    title += " → ".join(part for part in (error, lesson) if part)
    if len(title) > TITLE_LIMIT:
        title = title[: TITLE_LIMIT - 1].rstrip() + "…"
    return title


def to_document(text: str, source: str, *, vocabulary: Vocabulary | None = None) -> ImportDocument:
    """A Ralph file as memories to import: id, type, content and tags as written; the creation
    time from the id's timestamp (or the written date when the id has none)."""
    parsed = parse_ralph(text, source, vocabulary=vocabulary)
    # Ralph's writer puts each new memory at the top of its section, so of two created in the
    # same second the one above is the newer: a thousandth of a second apart keeps that order
    # through the store, and an export writes them back as they were.
    same_second = Counter((m.section, m.id_timestamp) for m in parsed.memories)
    memories = []
    for memory in parsed.memories:
        fields: dict = {"id": memory.id, "type": memory.section, "content": memory.content,
                        "tags": memory.tags, "source": "imported"}
        title = failure_title(memory.content)
        if title:
            fields["title"] = title
        created_at = memory.id_timestamp
        if created_at is not None and not time_in_range(created_at):
            raise InvalidInput(f"line {memory.line}: the id {memory.id} carries the time {created_at}, "
                               f"outside the dates memdeck keeps ({TIME_RANGE})")
        if created_at is None or (memory.created and utc_date(created_at) != memory.created):
            try:
                created_at = read_time(memory.created, f"line {memory.line}") if memory.created else created_at
            except InvalidInput:
                pass  # an unreadable date is kept as written, below
        if memory.created and (created_at is None or utc_date(created_at) != memory.created):
            fields["meta"] = {CREATED_META: memory.created}
        if created_at is not None:
            key = (memory.section, memory.id_timestamp)
            same_second[key] -= 1  # how many of its second are below it in its section
            fields["created_at"] = float(created_at) + (same_second[key] / 1000 if memory.id_timestamp else 0)
        same = frozenset(t for t, section in SECTION_OF_TYPE.items() if section == memory.section)
        memories.append(IncomingMemory(fields, f"line {memory.line}", same_types=same))
    problems = [f"line {p.line}: {p.message}" for p in parsed.problems]
    return ImportDocument(format="ralph", source=source, memories=memories, problems=problems)


def from_memories(memories: Iterable[Memory]) -> str:
    """memdeck memories as Ralph's file: each under its type's section, newest first as Ralph's
    writer leaves them (it inserts each new memory at the top of its section)."""
    ordered = sorted(memories, key=lambda m: (m.created_at, m.id), reverse=True)
    return render_ralph(
        RalphMemory(id=m.id, type=m.type, section=SECTION_OF_TYPE.get(m.type, "Context"), content=m.content,
                    tags=m.tags, created=m.meta.get(CREATED_META) or utc_date(m.created_at))
        for m in ordered
    )
