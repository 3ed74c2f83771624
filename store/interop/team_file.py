"""`memdeck share --to-file ID…`: own memories appended to the repository's team file (setting
`team.file`, `.memdeck/team.yaml`), proposed to the team through a pull request (docs/team.md).

The file is memdeck's YAML (`format: memdeck`, `version: 1`, then the `memories:` list, last).
Appending never rewrites what is there: the new entries are added at the end of the list, with
its indentation, and the result is read back before it replaces the file (written beside it and
renamed, so a reader sees the old file or the new one, never half). A memory whose id is in the
file already is left as it is.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Sequence

from store.engine.errors import InvalidInput
from store.engine.records import Memory
from store.interop import yaml_format
from store.interop.document import iso_exact

HEADER = ("# The team's memories, read by memdeck as the layer `file` (docs/team.md).\n"
          "# Propose one with `memdeck share --to-file ID`; review changes in pull requests.\n"
          "format: memdeck\nversion: 1\nmemories:\n")
# What an entry carries: what the team needs to use the memory, not this store's bookkeeping.
ENTRY_FIELDS = ("id", "type", "title", "content", "tags", "file_refs", "scope", "hat", "confidence")
_TOP_KEY = re.compile(r"^([^\s#-][^:]*):(.*)$")
_ITEM = re.compile(r"^(\s*)- ")


def entry(memory: Memory, by: str, at: float) -> dict:
    data = {name: list(getattr(memory, name)) if isinstance(getattr(memory, name), tuple) else getattr(memory, name)
            for name in ENTRY_FIELDS}
    data = {k: v for k, v in data.items() if v not in (None, [])}
    data["created_at"] = iso_exact(memory.created_at)
    data["meta"] = {"shared": {"by": by, "at": iso_exact(at)}}
    return data


def _ids(text: str, path: Path) -> set[str]:
    document = yaml_format.loads(text, str(path))
    return {m.fields["id"] for m in document.memories if m.fields.get("id")}


def _list_indent(text: str, path: Path) -> str:
    """The indentation of the `memories:` list's items; the list must be the file's last key."""
    last_key, indent, after = None, None, False
    for line in text.splitlines():
        key = _TOP_KEY.match(line)
        if key:
            last_key, after = key, key.group(1).strip() == "memories"
            continue
        item = _ITEM.match(line)
        if after and item and indent is None:
            indent = item.group(1)
    if last_key is None or last_key.group(1).strip() != "memories" or last_key.group(2).strip() not in ("", "[]"):
        raise InvalidInput(f"{path}: memdeck appends to the `memories:` list, which must be the file's last "
                           "key, written as a block list; nothing was changed")
    if last_key.group(2).strip() == "[]":
        raise InvalidInput(f"{path}: `memories: []` is a list on one line; write it as `memories:` to "
                           "append to it; nothing was changed")
    return indent or ""


def append(path: Path, memories: Sequence[Memory], *, by: str, at: float) -> list[str]:
    """Append `memories` to the team file at `path` (made if missing); the ids appended."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise InvalidInput(f"{path}: --to-file appends to a YAML team file (team.file), not {path.suffix or 'this'}")
    if path.exists():
        text = path.read_text(encoding="utf-8")
        known = _ids(text, path)
        indent = _list_indent(text, path)
    else:
        text, known, indent = HEADER, set(), ""
    new = [m for m in memories if m.id not in known]
    if not new:
        return []
    added = yaml_format.dumps([entry(m, by, at) for m in new])
    block = "".join(indent + line if line.strip() else line for line in added.splitlines(keepends=True))
    result = text + ("" if not text or text.endswith("\n") else "\n") + block
    if len(_ids(result, path)) != len(known) + len(new):  # read back before anything is replaced
        raise InvalidInput(f"{path}: appending would not read back as {len(new)} more memories; nothing was changed")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(result)
            out.flush()
            os.fsync(out.fileno())
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return [m.id for m in new]
