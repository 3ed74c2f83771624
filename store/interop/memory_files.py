"""The store as the Claude API's memory tool sees it (`memory_20250818`): a folder `/memories`
holding `/memories/<project>/<type>/<name>.md`, one file per memory, the file's text the memory's
content. The six commands (view, create, str_replace, insert, delete, rename) follow the
reference implementation of the Anthropic SDK (`BetaLocalFilesystemMemoryTool`): the same
results and error texts, paths that must start with /memories, no way out of it, str_replace
only on exactly one match, rename never over an existing file.

Every write is a memdeck write (the memory's history, redaction, the store's limits): what the
model creates is `pending`, in the review inbox (`memdeck inbox`), until a person accepts it;
what it deletes goes to the trash. `store.interop.memory_tool` wraps this in the SDK's class.
"""

from __future__ import annotations

import re
from typing import Any

from store.browse.search import MemoryFilter, list_memories
from store.engine.core import Store
from store.engine.errors import MemdeckError
from store.engine.records import Memory
from store.engine.redaction import clean

ROOT = "/memories"
MAX_LINES = 999999
WIDTH = len(str(MAX_LINES))
SHOWN = ("active", "pending")  # the trash and superseded memories are not files
ACTOR = "memory-tool"


class MemoryToolError(ValueError):
    """A command the model gave that cannot be done: its text goes back to the model."""


def slug(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:60].rstrip("-") or "memory"


class MemoryFiles:
    """The six commands over `store`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- paths -----------------------------------------------------------------------------------

    def _parts(self, path: str) -> list[str]:
        if not isinstance(path, str) or not path.startswith(ROOT):
            raise MemoryToolError(f"Path must start with /memories, got: {path}")
        rest = path[len(ROOT):]
        if rest and not rest.startswith("/"):
            raise MemoryToolError(f"Path must start with /memories, got: {path}")
        parts = [part for part in rest.split("/") if part]
        if any(part in (".", "..") or "\\" in part or "\x00" in part for part in parts):
            raise MemoryToolError(f"Path {path} would escape /memories directory")
        return parts

    def _name(self, memory: Memory) -> str:
        name = memory.meta.get("memory_tool_name") if isinstance(memory.meta, dict) else None
        return name if isinstance(name, str) and name else f"{slug(memory.title)}-{memory.id[-6:]}.md"

    def _memories(self, project: str | None = None) -> list[Memory]:
        flt = MemoryFilter(all_projects=project is None, project=project, statuses=SHOWN)
        return list_memories(self.store, flt, sort="created", limit=None)

    def _files(self, parts: list[str]) -> dict[tuple[str, str, str], Memory]:
        """The files under `parts` (a folder, or one file), by (project, type, name)."""
        memories = self._memories(parts[0] if parts else None)
        files = {(m.project, m.type, self._name(m)): m for m in memories}
        return {key: m for key, m in files.items() if list(key[:len(parts)]) == parts[:3]}

    def _file(self, path: str) -> Memory:
        parts = self._parts(path)
        found = self._files(parts) if len(parts) == 3 else {}
        if len(parts) != 3 or not found:
            raise MemoryToolError(f"The path {path} does not exist. Please provide a valid path.")
        return next(iter(found.values()))

    def _new_file(self, path: str) -> tuple[str, str, str]:
        parts = self._parts(path)
        if len(parts) != 3 or not parts[2].endswith(".md"):
            raise MemoryToolError(f"Cannot create {path}: a memory is a file /memories/<project>/<type>/<name>.md "
                                  f"(types: {', '.join(self.store.vocabulary.types)})")
        project, type, name = parts
        try:
            type = self.store.check_type(type)
        except MemdeckError as exc:
            raise MemoryToolError(f"Cannot create {path}: {exc}") from None
        return project, type, name

    # -- the commands ----------------------------------------------------------------------------

    def view(self, path: str, view_range: list[int] | None = None) -> str:
        parts = self._parts(path)
        if len(parts) == 3 and parts[2].endswith(".md"):
            return self._view_file(path, self._file(path), view_range)
        files = self._files(parts)
        if parts and not files:
            raise MemoryToolError(f"The path {path} does not exist. Please provide a valid path.")
        return self._view_folder(path.rstrip("/") or ROOT, parts, files)

    def _view_folder(self, path: str, parts: list[str], files: dict) -> str:
        sizes: dict[tuple[str, ...], int] = {}
        for key, memory in files.items():
            size = len(memory.content.encode("utf-8"))
            for depth in range(len(parts) + 1, 4):
                sizes[key[:depth]] = sizes.get(key[:depth], 0) + size
        lines = [f"{_size(sum(len(m.content.encode()) for m in files.values()))}\t{path}"]
        for key in sorted(sizes):
            relative = "/".join(key[len(parts):])
            if len(key) - len(parts) > 2:
                continue  # up to 2 levels deep, as the reference shows
            folder = len(key) < 3
            lines.append(f"{_size(sizes[key])}\t{path}/{relative}{'/' if folder else ''}")
        header = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
        return header + "\n" + "\n".join(lines)

    def _view_file(self, path: str, memory: Memory, view_range: list[int] | None) -> str:
        lines = memory.content.split("\n")
        start = 1
        if view_range and len(view_range) == 2:
            first = max(1, view_range[0]) - 1
            end = len(lines) if view_range[1] == -1 else view_range[1]
            lines, start = lines[first:end], first + 1
        numbered = [f"{str(i + start).rjust(WIDTH)}\t{line}" for i, line in enumerate(lines)]
        return f"Here's the content of {path} with line numbers:\n" + "\n".join(numbered)

    def create(self, path: str, file_text: str) -> str:
        project, type, name = self._new_file(path)
        if self._files([project, type, name]):
            raise MemoryToolError(f"File {path} already exists")
        self._write(lambda: self.store.add(_cleaned(file_text), type=type, project=project, status="pending",
                                           source="automatic", tags=("memory-tool",), actor=ACTOR, reinforce=False,
                                           meta={"memory_tool_name": name}))
        return f"File created successfully at: {path}"

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        memory = self._file(path)
        content = memory.content
        count = content.count(old_str)
        if count == 0:
            raise MemoryToolError(f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}.")
        if count > 1:
            lines, at = [], content.find(old_str)
            while at != -1:
                lines.append(content[:at].count("\n") + 1)
                at = content.find(old_str, at + 1)
            raise MemoryToolError(f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: "
                                  f"{', '.join(map(str, lines))}. Please ensure it is unique")
        changed = content[:content.find(old_str)].count("\n")
        new_content = _cleaned(content.replace(old_str, new_str))
        written = self._write(lambda: self.store.update(memory.id, memory, actor=ACTOR, content=new_content))
        new_lines = written.content.split("\n")
        snippet = [f"{str(n).rjust(WIDTH)}\t{new_lines[n - 1]}"
                   for n in range(max(0, changed - 2) + 1, min(len(new_lines), changed + 3) + 1)]
        return ("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
                + "\n".join(snippet))

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        memory = self._file(path)
        lines = memory.content.split("\n")
        if lines[-1] == "":
            lines.pop()  # the empty tail a trailing newline leaves, as the reference splits
        if insert_line < 0 or insert_line > len(lines):
            raise MemoryToolError(f"Invalid `insert_line` parameter: {insert_line}. "
                                  f"It should be within the range [0, {len(lines)}].")
        lines.insert(insert_line, insert_text.rstrip("\n"))
        self._write(lambda: self.store.update(memory.id, memory, actor=ACTOR, content=_cleaned("\n".join(lines) + "\n")))
        return f"The file {path} has been edited."

    def delete(self, path: str) -> str:
        parts = self._parts(path)
        if not parts:
            raise MemoryToolError("Cannot delete the /memories directory itself")
        files = self._files(parts)
        if not files:
            raise MemoryToolError(f"The path {path} does not exist")
        self._write(lambda: self.store.trash.delete([m.id for m in files.values()], actor=ACTOR))
        return f"Successfully deleted {path}"

    def rename(self, old_path: str, new_path: str) -> str:
        if not self._parts(old_path):
            raise MemoryToolError("Cannot rename the /memories directory itself")
        memory = self._file(old_path) if len(self._parts(old_path)) == 3 else None
        if memory is None:
            raise MemoryToolError(f"The path {old_path} does not exist")
        project, type, name = self._new_file(new_path)
        if self._files([project, type, name]):
            raise MemoryToolError(f"The destination {new_path} already exists")
        if project != memory.project:
            raise MemoryToolError(f"Cannot move {old_path} to another project ({project}); create it there instead")
        meta = {**memory.meta, "memory_tool_name": name}

        def move() -> Any:
            moved = self.store.update(memory.id, memory, actor=ACTOR, type=type) if type != memory.type else memory
            self.store.set_meta(memory.id, meta, moved.version)

        self._write(move)
        return f"Successfully renamed {old_path} to {new_path}"

    def _write(self, write) -> Any:
        try:
            return write()
        except MemdeckError as exc:
            raise MemoryToolError(str(exc)) from None


def _cleaned(text: str) -> str:
    """What the model wrote, as memdeck keeps any text an agent gives it: control characters
    stripped and secrets redacted (store.engine.redaction)."""
    return clean(text).text


def _size(n: int) -> str:
    """A size as the reference prints it (0B, 512B, 1.5K)."""
    if n == 0:
        return "0B"
    i = min((n.bit_length() - 1) // 10, 3)
    size = n / (1024 ** i)
    unit = "BKMG"[i]
    return f"{int(size)}{unit}" if size == int(size) else f"{size:.1f}{unit}"
