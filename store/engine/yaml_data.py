"""YAML read as plain data, for config files and imports alike: libyaml's safe loader (when
PyYAML has it), and no anchors (`&name`) or aliases (`*name`). memdeck never writes them, and
they are how a YAML file of a few hundred bytes (a "billion laughs") expands into gigabytes when
read: the events are checked first, so such a file is refused at its first anchor, before
anything is built."""

from __future__ import annotations

from typing import Any

import yaml

# libyaml's C loader when PyYAML has it: the pure-Python one is 20 times slower.
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class AnchorRefused(Exception):
    """The text holds an anchor or an alias: at `line` (1-based), under the key path `where`."""

    def __init__(self, line: int, where: str, what: str) -> None:
        at = f"{where} (line {line})" if where else f"line {line}"
        super().__init__(f"{at}: {what} are not accepted (memdeck reads YAML as plain data)")
        self.line = line
        self.where = where


class _Path:
    """Where the parser is, as dotted keys and [indexes]: `types.aliases`, `memories[3].content`."""

    def __init__(self) -> None:
        self.stack: list[list] = []  # [is_mapping, key or index, waiting for a key]

    def name(self) -> str:
        parts = ""
        for is_mapping, key, _ in self.stack:
            if key is None:
                break
            parts += (f".{key}" if parts else str(key)) if is_mapping else f"[{key}]"
        return parts

    def node(self, event: yaml.Event) -> None:
        """Account for a node starting (a scalar, an alias, a mapping or a sequence)."""
        if self.stack:
            top = self.stack[-1]
            if top[0]:
                if top[2]:
                    top[1] = event.value if isinstance(event, yaml.ScalarEvent) else "?"
                top[2] = not top[2]
            else:
                top[1] = 0 if top[1] is None else top[1] + 1
        if isinstance(event, yaml.MappingStartEvent):
            self.stack.append([True, None, True])
        elif isinstance(event, yaml.SequenceStartEvent):
            self.stack.append([False, None, False])


def load(text: str, *, loader: type = Loader) -> Any:
    """The data in `text`. Raises `AnchorRefused`, or PyYAML's errors for text that is not YAML."""
    path = _Path()
    try:
        _check_events(text, path, loader)
    except yaml.YAMLError as exc:
        exc.where = path.name()  # the setting being read when the text stopped being YAML
        raise
    return yaml.load(text, Loader=loader)


def _check_events(text: str, path: _Path, loader: type) -> None:
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            path.node(event)
            if isinstance(event, yaml.AliasEvent):
                raise AnchorRefused(event.start_mark.line + 1, path.name(), "aliases (*name)")
            if event.anchor is not None:
                raise AnchorRefused(event.start_mark.line + 1, path.name(), "anchors (&name)")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            path.stack.pop()
