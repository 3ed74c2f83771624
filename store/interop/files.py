"""Reading import files and writing export files safely: a size limit before anything is parsed,
strict UTF-8, and writes through a temporary file renamed into place, so a failure never leaves
half a file and an existing file is replaced only when asked."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from store.errors import InvalidInput, MemdeckError

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
    `replacing`, for a file the caller read and is rewriting on purpose)."""
    if path.exists() and not (force or replacing):
        raise InvalidInput(f"{path} exists; add --force to overwrite it")
    if path.is_dir():
        raise InvalidInput(f"{path} is a directory")
    directory = path.parent if str(path.parent) else Path(".")
    try:
        handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InvalidInput(f"cannot write in {directory}: {exc.strerror}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        # mkstemp makes the file private; the result should have the mode any new file gets.
        os.chmod(temp_name, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        os.replace(temp_name, path)
    except OSError as exc:
        _remove(temp_name)
        raise MemdeckError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        _remove(temp_name)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass
