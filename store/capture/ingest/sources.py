"""Where ingest reads lines from: a file (from a byte offset, optionally following it as it
grows) or a stream (stdin, optionally copied to stdout unchanged).

Both hand out batches of complete lines with their line numbers and byte offsets, so the
pipeline can record exactly how far it got. A last line without its newline is handed out with
`terminated=False` only when the input has ended: while following, it is still being written.
"""

from __future__ import annotations

import os
import select
import time
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, NamedTuple

READ_SIZE = 1 << 20
POLL_SECONDS = 0.2
TAIL_BYTES = 256  # how much of what was read a follower checks is still there, when idle
STREAM_FLUSH_SECONDS = 0.3  # a quiet stream commits what it has, so a live view sees it soon


class Line(NamedTuple):
    """One line of input. A named tuple: one is made per line, and tuples are cheap to make."""

    number: int  # 1-based, in the whole input
    data: bytes  # without the newline
    end: int  # byte offset just after the line (and its newline), in the whole input
    terminated: bool = True


class _Splitter:
    """Cuts bytes into lines, remembering numbers and offsets across chunks."""

    def __init__(self, start_line: int, start_byte: int) -> None:
        self.number = start_line
        self.offset = start_byte
        self.tail = b""

    def feed(self, chunk: bytes) -> list[Line]:
        parts = chunk.split(b"\n")
        # The unfinished line carried over joins the chunk's first piece, not the whole chunk:
        # that copied every chunk (1 MiB) once more before splitting it.
        parts[0] = self.tail + parts[0]
        self.tail = parts.pop()
        number, offset, lines = self.number, self.offset, []
        for part in parts:
            number += 1
            offset += len(part) + 1
            lines.append(Line(number, part, offset))
        self.number, self.offset = number, offset
        return lines

    def finish(self) -> list[Line]:
        if not self.tail:
            return []
        self.number += 1
        self.offset += len(self.tail)
        line, self.tail = Line(self.number, self.tail, self.offset, terminated=False), b""
        return [line]


class FileSource:
    def __init__(self, path: Path, *, start_line: int = 0, start_byte: int = 0, follow: bool = False,
                 idle_exit: float | None = None, stopping: Callable[[], bool] = lambda: False) -> None:
        self.path = path
        self.splitter = _Splitter(start_line, start_byte)
        self.follow = follow
        self.idle_exit = idle_exit
        self.stopping = stopping
        self.problem: str | None = None  # why following stopped early: the file changed under it
        self._tail = b""  # the last bytes read, to notice the file rewritten under them

    def batches(self, size: int) -> Iterator[list[Line]]:
        with self.path.open("rb") as handle:
            handle.seek(self.splitter.offset)
            idle_since = time.monotonic()
            pending: list[Line] = []
            while True:
                # Following, before reading on: what was written since may be a new file's content.
                self.problem = self._changed_under(handle) if self.follow else None
                if self.problem:
                    break
                chunk = handle.read(READ_SIZE)
                if chunk:
                    idle_since = time.monotonic()
                    self._tail = (self._tail + chunk[-TAIL_BYTES:])[-TAIL_BYTES:]  # not a copy of the chunk
                    pending += self.splitter.feed(chunk)
                    while len(pending) >= size:
                        yield pending[:size]
                        pending = pending[size:]
                    if not self.stopping():
                        continue
                    # Asked to stop half-way: what was read is committed, the rest waits for the
                    # next ingest, which starts where this one stopped.
                    yield pending
                    return
                if pending:
                    yield pending
                    pending = []
                if not self.follow or self.stopping():
                    break
                if self.idle_exit is not None and time.monotonic() - idle_since >= self.idle_exit:
                    break
                time.sleep(POLL_SECONDS)
            if self.problem:
                if pending:
                    yield pending
                return  # the unfinished last line is of the old content: not read
            last = self.splitter.finish()
            if last:
                yield last

    def _changed_under(self, handle: BinaryIO) -> str | None:
        """Why the followed file is no longer the one being read, if it is not: removed, replaced
        by another file (an editor's save), cut shorter, or rewritten over the part read."""
        read = handle.tell()
        try:
            now = os.stat(self.path)
        except OSError:
            return f"{self.path} was removed while it was followed"
        if (now.st_dev, now.st_ino) != (lambda s: (s.st_dev, s.st_ino))(os.fstat(handle.fileno())):
            return f"{self.path} was replaced while it was followed (another file has its name now)"
        if now.st_size < read:
            return f"{self.path} was truncated while it was followed (to {now.st_size} bytes; {read} were read)"
        if self._tail and os.pread(handle.fileno(), len(self._tail), read - len(self._tail)) != self._tail:
            return f"{self.path} was rewritten while it was followed (the part read changed)"
        return None


class StreamSource:
    """Lines from a file descriptor (stdin). With `tee`, every byte read is written to `tee`
    unchanged, each complete line flushed as soon as it is read."""

    def __init__(self, fd: int, *, tee: BinaryIO | None = None,
                 stopping: Callable[[], bool] = lambda: False) -> None:
        self.fd = fd
        self.tee = tee
        self.splitter = _Splitter(0, 0)
        self.stopping = stopping

    def batches(self, size: int) -> Iterator[list[Line]]:
        pending: list[Line] = []
        last_yield = time.monotonic()
        while not self.stopping():
            try:
                ready, _, _ = select.select([self.fd], [], [], STREAM_FLUSH_SECONDS)
            except InterruptedError:
                continue
            if ready:
                chunk = os.read(self.fd, READ_SIZE)
                if not chunk:
                    break
                self._tee(chunk)
                pending += self.splitter.feed(chunk)
            if pending and (len(pending) >= size or not ready
                            or time.monotonic() - last_yield >= STREAM_FLUSH_SECONDS):
                yield pending
                pending = []
                last_yield = time.monotonic()
        if pending:
            yield pending
        last = self.splitter.finish()
        if last:
            yield last

    def drain(self) -> None:
        """Keep copying the rest of the stream after ingest gave up, so the pipe still flows."""
        while self.tee is not None:
            chunk = os.read(self.fd, READ_SIZE)
            if not chunk:
                return
            self._tee(chunk)

    def _tee(self, chunk: bytes) -> None:
        if self.tee is None:
            return
        # Bytes go out as read; the buffer is flushed whenever a line is complete, and at the end.
        self.tee.write(chunk)
        if b"\n" in chunk:
            self.tee.flush()

    def close(self) -> None:
        if self.tee is not None:
            self.tee.flush()
