"""Import and export as the command line (and the workbench) ask for them: pick the format, read
or render it, check the limits, and hand the memories to the importer or to a file."""

from __future__ import annotations

from pathlib import Path

from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.engine.limits import check_fields, nul_in
from store.interop import agents_md, memdeck_json, nova, ralph, yaml_format
from store.interop.detect import IMPORT_FORMATS, detect_format, json_kind
from store.interop.document import ImportDocument
from store.interop.files import file_target, read_input, write_output
from store.interop.importer import ImportSummary, import_document
from store.browse.search import MemoryFilter, list_memories

EXPORT_FORMATS = ("json", "ralph", "nova", "yaml", "agents-md", "cursor-rules")
# Codex CLI reads at most 32 KiB of AGENTS.md (its project_doc_max_bytes): the block is cut,
# whole memories at a time, so the file stays within it.
AGENTS_MD_MAX_BYTES = 32 * 1024


def read_document(store: Store, text: str, source: str, format: str = "auto") -> ImportDocument:
    """The memories in `text`, in `format` (`auto`: told from the name and content)."""
    if format not in ("auto", *IMPORT_FORMATS):
        raise InvalidInput(f"unknown import format {format!r}; one of auto, {', '.join(IMPORT_FORMATS)}")
    if format == "auto":
        format = detect_format(text, source)
    try:
        document = _parse(store, text, source, format)
    except InvalidInput as exc:
        raise InvalidInput(f"{source}: {exc}") from None
    _check_lengths(store, document)
    return document


def _parse(store: Store, text: str, source: str, format: str) -> ImportDocument:
    if format in ("json", "nova"):
        data = memdeck_json.parse_json(text)
        if format == "nova" or json_kind(data) == "nova":
            return nova.read_document(data, source)
        return memdeck_json.read_document(data, source)
    if format == "yaml":
        return yaml_format.loads(text, source)
    return ralph.to_document(text, source, vocabulary=store.vocabulary)


def _check_lengths(store: Store, document: ImportDocument) -> None:
    """Every field within its limit and no NUL anywhere (`store.engine.limits`), before anything
    is written."""
    limit = int(store.config.interop.max_memory_chars)
    for memory in document.memories:
        if len(memory.fields["content"]) > limit:
            raise InvalidInput(f"{document.source}: {memory.where} is {len(memory.fields['content'])} characters "
                               f"long, over the limit of {limit} (setting interop.max_memory_chars)")
        check_fields(memory.fields, f"{document.source}: {memory.where}.")
        if nul_in(memory.fields) or nul_in(memory.events) or nul_in(memory.anchors):
            raise InvalidInput(f"{document.source}: {memory.where} holds a NUL character (\\x00), which memdeck "
                               "does not store; nothing was imported")
    if nul_in(document.sessions) or nul_in(document.projects):
        raise InvalidInput(f"{document.source}: a session or project holds a NUL character (\\x00), which "
                           "memdeck does not store; nothing was imported")


def import_file(store: Store, name: str, *, format: str = "auto", dry_run: bool = False) -> ImportSummary:
    limit = int(float(store.config.interop.max_import_mb) * (1 << 20))
    text = read_input(name, limit)
    return import_document(store, read_document(store, text, name, format), dry_run=dry_run)


def export_text(store: Store, format: str, flt: MemoryFilter, *, limit: int | None = None) -> str:
    """The memories `flt` selects, written in `format` (not `agents-md`: see `export_into`)."""
    if format == "json":
        return memdeck_json.dumps(memdeck_json.export_document(store, flt, limit=limit))
    if format == "yaml":
        return yaml_format.dumps(memdeck_json.export_document(store, flt, with_history=False, limit=limit))
    if format == "agents-md":
        return agents_block(store, flt, limit)("\n") + "\n"
    if format == "cursor-rules":
        return agents_md.cursor_rules(agents_block(store, flt, limit)("\n"))
    memories = list_memories(store, flt, sort="created", limit=limit)
    if format == "ralph":
        return ralph.from_memories(memories)
    if format == "nova":
        return nova.dumps(memories, store.project, store.now())
    raise InvalidInput(f"unknown export format {format!r}; one of {', '.join(EXPORT_FORMATS)}")


def agents_block(store: Store, flt: MemoryFilter, limit: int | None, *, keep: int | None = None):
    """A function of the newline style giving the managed block with the project's top memories:
    active ones at or above the injection floor, most confident first (the first `keep` of them
    when given)."""
    floor = float(store.config.injection.confidence_floor)
    if flt.min_confidence is None or flt.min_confidence < floor:
        flt = flt.with_(min_confidence=floor)
    if not flt.statuses:
        flt = flt.with_(statuses=("active",))
    count = limit or int(store.config.interop.agents_md_limit)
    memories = list_memories(store, flt, sort="confidence", limit=count)[:keep]
    heading = str(store.config.injection.heading)
    return lambda newline: agents_md.render_block(memories, heading, store.vocabulary.types, newline)


def export_into(store: Store, path: Path, flt: MemoryFilter, *, limit: int | None = None) -> None:
    """Write the managed block into the instruction file at `path` (created when missing)."""
    existing = ""
    file_target(path)  # before reading: a FIFO there would hang the read
    if path.exists():
        try:
            existing = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start}); left as it was") from None
        except OSError as exc:
            raise InvalidInput(f"{path}: cannot read: {exc.strerror}") from None
    text = agents_md.replace_block(existing, agents_block(store, flt, limit))
    if path.name == "AGENTS.md":
        keep = agents_block(store, flt, limit)("\n").count("\n- ")  # the memories in the block
        while len(text.encode("utf-8")) > AGENTS_MD_MAX_BYTES:
            keep -= 1
            if keep < 0:
                raise InvalidInput(f"{path}: over {AGENTS_MD_MAX_BYTES >> 10} KiB without memdeck's block, the most "
                                   "Codex reads of it; nothing was written")
            text = agents_md.replace_block(existing, agents_block(store, flt, limit, keep=keep))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, text, replacing=True)
