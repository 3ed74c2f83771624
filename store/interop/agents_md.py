"""The managed block in an agent instruction file (CLAUDE.md, AGENTS.md): the project's top
memories between two marker comments. Writing it replaces only what is between the markers (or
appends the block when there is none); every other byte of the file stays as it was."""

from __future__ import annotations

from typing import Callable, Iterable

from store.engine.errors import InvalidInput
from store.retrieval.packing import neutralise
from store.engine.records import Memory

BEGIN = "<!-- memdeck:begin -->"
END = "<!-- memdeck:end -->"
NOTE = "<!-- Written by `memdeck export --format agents-md`; edits between these markers are replaced. -->"


def render_block(memories: Iterable[Memory], heading: str, type_order: Iterable[str], newline: str = "\n") -> str:
    """The block from BEGIN to END (no newline after END): memories grouped by type, most
    confident first, multi-line memories indented under their bullet."""
    by_type: dict[str, list[Memory]] = {}
    for memory in memories:
        by_type.setdefault(memory.type, []).append(memory)
    lines = [BEGIN, NOTE, f"## {heading}"]
    order = [t for t in type_order if t in by_type] + sorted(set(by_type) - set(type_order))
    for type in order:
        lines += ["", f"### {type.capitalize()}", ""]
        for memory in sorted(by_type[type], key=lambda m: (-m.confidence, m.id)):
            # Neutralised as in `prime`: a memory's text cannot end the block (its markers are
            # HTML comments), add headings to the file, or carry a secret into it.
            first, *rest = neutralise(memory.content.strip()) or [""]
            lines.append(f"- {first}")
            lines += [f"  {line}" if line.strip() else "" for line in rest]
    lines.append(END)
    return newline.join(lines)


def replace_block(text: str, block_for: Callable[[str], str]) -> str:
    """`text` with its managed block replaced by `block_for(newline)`, or the block appended."""
    begin, end = text.count(BEGIN), text.count(END)
    outside = text[:text.index(BEGIN)] + text[text.index(END):] if begin == end == 1 else text
    # The file's own line endings, by majority outside the block: the block written into it
    # must not change which way a second write reads them.
    crlf = outside.count("\r\n")
    newline = "\r\n" if crlf > outside.count("\n") - crlf else "\n"
    if begin == 0 and end == 0:
        prefix = text
        if prefix and not prefix.endswith(newline):
            prefix += newline
        if prefix:
            prefix += newline
        return prefix + block_for(newline) + newline
    if begin != 1 or end != 1 or text.index(END) < text.index(BEGIN):
        raise InvalidInput(f"the file has {begin} '{BEGIN}' and {end} '{END}' markers; "
                           "expected one of each, in that order (fix the file by hand)")
    start = text.index(BEGIN)
    stop = text.index(END) + len(END)
    return text[:start] + block_for(newline) + text[stop:]
