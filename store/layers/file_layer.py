"""The layer `file`: the repository's team file (setting `team.file`, `.memdeck/team.yaml` by
default, or a Ralph markdown file), read-only, reviewed through the team's pull requests
(docs/team.md).

The file is read into a store of its own, kept in the cache folder and named by the file's
path and content: read once per change of the file, then ranked and searched as any store is.
The memories all belong to the project the file is in, whatever project a line names. The
cached store is built under a temporary name and renamed, so two processes reading a new file
at once never see half of it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from store.engine.errors import InvalidInput
from store.engine import environment

# The largest team file read (256 KiB, some 3,000 short memories, its cache built in about a
# second): a larger one is refused in one line before it is read, so no session start waits on
# a stranger's file (5 MB took 6 s, 1 MB still 6 s the first time).
MAX_TEAM_FILE_BYTES = 256 << 10

if TYPE_CHECKING:
    from store.engine.core import Store


def cache_folder() -> Path:
    return environment.cache_home() / "memdeck" / "layers"


def file_format(path: Path) -> str:
    """The import format of a team file: YAML (memdeck's export format) or Ralph markdown."""
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix in (".md", ".markdown"):
        return "ralph"
    raise InvalidInput(f"{path}: a team file is .yaml (memdeck YAML) or .md (Ralph markdown)")


def file_store(own: "Store", path: Path) -> "Store":
    """The store holding the team file at `path`, for the own store's project (built if the
    file changed since it was last read)."""
    from store.engine.core import Store

    limit = min(int(float(own.config.interop.max_import_mb) * (1 << 20)), MAX_TEAM_FILE_BYTES)
    size = path.stat().st_size
    if size > limit:  # said before a byte is read
        raise InvalidInput(f"{path}: {size} bytes, over the team file's limit of {limit} bytes "
                           f"({MAX_TEAM_FILE_BYTES >> 10} KiB); not read")
    data = path.read_bytes()[:limit + 1]
    if len(data) > limit:  # grown since
        raise InvalidInput(f"{path}: over the team file's limit of {limit} bytes; not read")
    where = hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    what = hashlib.sha256(data + own.project.encode()).hexdigest()[:16]
    folder = cache_folder()
    cached = folder / f"{where}-{what}.db"
    if not cached.exists():
        folder.mkdir(parents=True, exist_ok=True)
        _drop_abandoned(folder)
        building = folder / f".{where}-{what}.{os.getpid()}.db"
        _build(own, path, data, building)
        os.replace(building, cached)
        for old in folder.glob(f"{where}-*.db"):
            if old != cached:
                old.unlink(missing_ok=True)
    return Store.open(cached, project=own.project, config=own.config, clock=own.clock,
                      project_root=own.project_root)


def _drop_abandoned(folder: Path) -> None:
    """Remove the half-built stores (and their journals) of processes that are gone: a hook
    killed while it built one leaves it under its temporary name, never under the cached one."""
    for leftover in folder.glob(".*.db*"):
        try:
            pid = int(leftover.name.split(".db", 1)[0].rsplit(".", 1)[1])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not _alive(pid):
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _build(own: "Store", path: Path, data: bytes, target: Path) -> None:
    from store.engine.core import Store
    from store.interop.importer import import_document
    from store.interop.transfer import read_document

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: the team file is not UTF-8 (byte {exc.start})") from None
    store = Store.open(target, project=own.project, config=own.config, clock=own.clock,
                       project_root=own.project_root)
    try:
        document = read_document(store, text, str(path), file_format(path))
        for memory in document.memories:
            memory.fields["project"] = own.project
            # An entry without an id keeps one id while its text does: one a memory's history
            # and a share can name.
            if not memory.fields.get("id"):
                memory.fields["id"] = "file-" + hashlib.sha256(memory.fields["content"].encode()).hexdigest()[:16]
        import_document(store, replace(document, project=own.project, projects=[], sessions=[]))
    except BaseException:
        store.close()
        for leftover in target.parent.glob(target.name + "*"):
            leftover.unlink(missing_ok=True)
        raise
    store.close()
