"""Reading import files and writing export files safely: a size limit before anything is parsed,
strict UTF-8, and writes through a temporary file renamed into place, so a failure never leaves
half a file and an existing file is replaced only when asked; a symlink's target is what is
written, and only regular files are (never a FIFO, a device or a folder)."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from store.engine.errors import InvalidInput, MemdeckError

STDIN = "-"


def read_input(name: str, max_bytes: int) -> str:
    """The text of file `name` (or stdin for `-`), refused when larger than `max_bytes`."""
    try:
        if name == STDIN:
            data = sys.stdin.buffer.read(max_bytes + 1)
        else:
            with open(name, "rb") as handle:
                data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise InvalidInput(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InvalidInput(f"{name}: is a directory, not a file") from None
    except OSError as exc:
        raise InvalidInput(f"{name}: cannot read: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise InvalidInput(f"{name}: larger than the import limit of {max_bytes // (1 << 20)} MiB "
                           "(setting interop.max_import_mb)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name}: not UTF-8 text (byte {exc.start} cannot be read)") from None


def write_output(path: Path, text: str, *, force: bool = False, replacing: bool = False) -> None:
    """Write `text` to `path` atomically. An existing file is refused unless `force` (or
    `replacing`, for a file the caller read and is rewriting on purpose).

    A symlink is followed: its target is what is replaced (CLAUDE.md linked to AGENTS.md updates
    AGENTS.md, and stays a link). Only a regular file is ever replaced: a folder, a FIFO or a
    device at the path is refused, even with `force`."""
    target = file_target(path)
    if target.exists() and not (force or replacing):
        raise InvalidInput(f"{path} exists; add --force to overwrite it")
    directory = target.parent if str(target.parent) else Path(".")
    try:
        handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InvalidInput(f"cannot write in {directory}: {exc.strerror}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp makes the file private; the result should have the mode any new file gets.
        os.chmod(temp_name, target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask())
        os.replace(temp_name, target)
    except OSError as exc:
        _remove(temp_name)
        raise MemdeckError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        _remove(temp_name)
        raise


def file_target(path: Path) -> Path:
    """The file that writing `path` replaces: the symlink's target, if it is one. Raises
    `InvalidInput` when that is a folder, a FIFO (reading it would hang) or a device."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    kind = _not_a_file(target)
    if kind:
        raise InvalidInput(f"{path}{f' (a link to {target})' if target != path else ''} is {kind}; "
                           "memdeck writes only regular files")
    return target


def _not_a_file(path: Path) -> str | None:
    """What is at `path` if it is something other than a regular file (or nothing)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"not reachable ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass
