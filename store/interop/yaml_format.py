"""YAML: memdeck's memories in a file people can read and review in a diff. The same fields as
memdeck JSON, multi-line text as `|` blocks; no events and no sessions (JSON carries those).

Reading refuses aliases (`*name`): memdeck never writes them, and they are how a small YAML
file expands into a huge one (the "billion laughs").
"""

from __future__ import annotations

from typing import Any

import yaml

from store.errors import InvalidInput
from store.interop.document import ImportDocument
from store.interop.memdeck_json import read_document
from store.redaction import whole_characters


# libyaml's C loader and dumper when PyYAML has them: the pure-Python ones are 20 times slower.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _refuse_aliases(root: yaml.Node) -> None:
    """An alias makes one node appear twice in the composed tree: find any, without recursion."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise InvalidInput(f"YAML line {node.start_mark.line + 1}: aliases (*name) are not accepted")
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += (key, value)
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def dumps(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)


def loads(text: str, source: str) -> ImportDocument:
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _refuse_aliases(root)
        # libyaml refuses a `\\ud800` escape; the pure-Python loader reads it as half a character.
        data = whole_characters(loader.construct_document(root)) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}" if mark else ""
        raise InvalidInput(f"not valid YAML{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise InvalidInput("YAML nested too deeply to be a memory export") from None
    finally:
        loader.dispose()
    return read_document(data, source, format="yaml")
