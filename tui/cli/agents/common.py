"""What the agents' modules share: a hook's turn as memdeck needs it, the cap on what a hook
prints, the transcript memdeck keeps of a session an agent records in its own format, and the
config files `memdeck connect` writes (JSON members and TOML tables edited in place, written
atomically, and read back for `memdeck connect --list`)."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from store.api import environment, InvalidInput
from tui.cli.output import write_data

# Claude Code keeps a hook's context up to 10,000 characters in the prompt (more goes to a file);
# memdeck gives every agent at most that.
MAX_CONTEXT = 10_000


@dataclass
class Turn:
    """A hook's payload, read: what memdeck needs of it, whichever agent sent it."""

    session_id: str | None = None
    cwd: str | None = None
    prompt: str | None = None
    transcript: str | None = None  # the agent's own record of the session, when it names one
    last_message: str | None = None  # the agent's reply this turn, when the payload carries it
    retrying: bool = False  # a stop hook called again within the same stop


def text_field(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def capped(block: str) -> str:
    """`block` within MAX_CONTEXT characters, cut at a line when it must be cut."""
    if len(block) <= MAX_CONTEXT:
        return block
    cut = block[:MAX_CONTEXT - 40]
    cut = cut[:cut.rfind("\n")] if "\n" in cut else cut
    return cut + "\n[memdeck: cut at 10,000 characters]"


def hook_specific(event: str, block: str, nothing: str = "{}\n") -> str:
    """The `hookSpecificOutput.additionalContext` answer (Codex, Gemini CLI), or `nothing`."""
    if not block:
        return nothing
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": capped(block)}},
                      ensure_ascii=False) + "\n"


# -- the transcript memdeck keeps for an agent whose own record it converts ---------------------

def mirror_path(agent: str, session_id: str, suffix: str = "") -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:120] or "session"
    return environment.data_home() / "memdeck" / "agents" / agent / f"{safe}{suffix}.jsonl"


def transcript_line(role: str, session_id: str, text: str, at: str | None = None, cwd: str | None = None) -> str:
    """One record in Claude Code's transcript shape, which `memdeck ingest` reads."""
    at = at or datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    record = {"type": role, "sessionId": session_id, "timestamp": at, **({"cwd": cwd} if cwd else {}),
              "message": {"role": role, "content": content}}
    return json.dumps(record, ensure_ascii=False) + "\n"


def write_mirror(path: Path, text: str, *, append: bool = False) -> None:
    from store.api import write_output

    path.parent.mkdir(parents=True, exist_ok=True)
    if append:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text)
    else:
        write_output(path, text, replacing=True)


def read_jsonl(path: Path, *, max_bytes: int = 256 << 20) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file the agent names; lines that are not one are skipped."""
    if path.suffix != ".jsonl":
        raise InvalidInput(f"{path}: not a session file (its name does not end in .jsonl); nothing was ingested")
    if not path.is_file():
        raise InvalidInput(f"{path}: {'no such file' if not path.exists() else 'not a regular file'}; "
                           "nothing was ingested")
    if path.stat().st_size > max_bytes:
        raise InvalidInput(f"{path}: larger than {max_bytes >> 20} MiB; nothing was ingested")
    records = []
    with path.open("rb") as handle:
        for raw in handle:
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict):
                records.append(record)
    return records


# -- config files -----------------------------------------------------------------------------

def hook_command(argv: list[str], name: str, agent: str | None, hat: str | None) -> str:
    return " ".join(map(shlex.quote, [*argv, "hook", name, *(["--agent", agent] if agent else []),
                                      *(["--hat", hat] if hat else [])]))


def command_words(command: Any) -> list[str]:
    if not isinstance(command, str):
        return []
    try:
        return shlex.split(command)
    except ValueError:
        return []


@dataclass
class Status:
    """One config file as `memdeck connect --list` reports it."""

    agent: str
    scope: str
    what: str  # mcp | hooks | rules
    path: Path
    executable: str | None = None  # the memdeck the entry runs; None: no memdeck entry
    notes: list[str] = field(default_factory=list)

    def state(self, this: str) -> str:
        if self.notes:
            return self.notes[0]
        if self.executable is None:
            return "not connected"
        if self.executable == this:
            return "connected: runs this memdeck"
        if not Path(self.executable).exists():
            return f"stale: runs {self.executable}, which is missing"
        return f"connected to another memdeck: {self.executable}"


def json_status(agent: str, scope: str, what: str, path: Path, find: Callable[[dict], str | None]) -> Status:
    from tui.cli.claude_setup import read_json_object

    status = Status(agent, scope, what, path)
    if not path.exists():
        return status
    try:
        status.executable = find(read_json_object(path))
    except InvalidInput as exc:
        status.notes.append(f"unreadable: {str(exc).split(': ', 1)[-1].split(';')[0]}")
    return status


class Edits:
    """The edits of one `memdeck connect`, made in memory and checked, file by file, before any
    file is written: a file refused stops the whole connect with nothing written anywhere."""

    def __init__(self) -> None:
        self.texts: dict[Path, tuple[str, str]] = {}  # path: (text on disk, text to write)

    def _current(self, path: Path) -> str:
        if path in self.texts:
            return self.texts[path][1]
        return path.read_text(encoding="utf-8") if path.is_file() else ""

    def json_member(self, path: Path, keys: tuple[str, ...], make: Callable[[dict], Any]) -> None:
        """Set the member `keys` of the JSON object in `path` to `make(current object)`, keeping
        every other byte; a file that is not one plain JSON object is refused."""
        from tui.cli.agents.json_edit import edited
        from tui.cli.claude_setup import read_json_object

        data = read_json_object(path)  # refuses what is not plain JSON, with the file's name
        text = self._current(path)
        if path in self.texts:
            data = json.loads(text) if text.strip() else {}
        value = make(data)
        current: Any = data
        for key in keys:
            current = current.get(key) if isinstance(current, dict) else None
        new = text if (current == value and text.strip()) else edited(path, text, keys, value, data)
        self.texts[path] = (self.texts.get(path, (text, text))[0], new)

    def toml_table(self, path: Path, keys: tuple[str, ...], values: dict[str, Any]) -> None:
        from tui.cli.agents import toml_edit

        text, data = toml_edit.read_toml(path)
        self.texts[path] = (text, toml_edit.edited(path, text, data, keys, values))

    def write(self, *, dry_run: bool) -> list[Path]:
        for path, (old, new) in self.texts.items():
            if dry_run:
                write_data(new)
            elif new != old or not path.exists():
                write_text(path, new, dry_run=False)
        return list(self.texts)


def write_text(path: Path, text: str, *, dry_run: bool) -> None:
    from tui.cli.claude_setup import write_text as write

    write(path, text, dry_run=dry_run)


def memdeck_hooks(hooks: dict[str, Any], events: tuple[tuple[str, str], ...], argv: list[str], agent: str,
                  hat: str | None, path: Path) -> dict[str, Any]:
    """Claude Code's hook groups (`{EVENT: [{matcher?, hooks: [{type, command}]}]}`, which Codex
    and Gemini CLI share) with memdeck's hook for each (event, memdeck hook) in `events`."""
    from tui.cli.claude_setup import with_hooks

    return with_hooks({"hooks": hooks}, argv, hat, path,
                      events=tuple((event, name, None) for event, name in events), agent=agent)["hooks"]


def hooks_executable(hooks: Any) -> str | None:
    """The memdeck a hooks section runs (the first memdeck hook found), or None."""
    from tui.cli.claude_setup import is_memdeck_hook

    if not isinstance(hooks, dict):
        return None
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            entries = group.get("hooks") if isinstance(group, dict) and isinstance(group.get("hooks"), list) else [group]
            for entry in entries:
                for name in ("session-start", "user-prompt-submit", "stop"):
                    if is_memdeck_hook(entry, name):
                        return command_words(entry["command"])[0]
    return None

