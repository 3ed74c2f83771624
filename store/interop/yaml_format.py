"""YAML: memdeck's memories in a file people can read and review in a diff. The same fields as
memdeck JSON, multi-line text as `|` blocks; no events and no sessions (JSON carries those).

Reading refuses anchors and aliases (`store.engine.yaml_data`): memdeck never writes them, and they are
how a small YAML file expands into a huge one (the "billion laughs").
"""

from __future__ import annotations

from typing import Any

import yaml

from store.engine import yaml_data
from store.engine.errors import InvalidInput
from store.engine.escapes import needs_quoting, yaml_safe
from store.interop.document import ImportDocument
from store.interop.memdeck_json import read_document
from store.engine.redaction import whole_characters


# libyaml's C dumper when PyYAML has it: the pure-Python one is 20 times slower.
class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # Double quotes for text holding a character a terminal would act on: only that style has
    # escapes (`escapes.yaml_safe` writes them).
    style = '"' if needs_quoting(value) else "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def dumps(document: dict[str, Any]) -> str:
    return yaml_safe(yaml.dump(document, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100))


def loads(text: str, source: str) -> ImportDocument:
    try:
        # libyaml refuses a `\\ud800` escape; the pure-Python loader reads it as half a character.
        data = whole_characters(yaml_data.load(text))
    except yaml_data.AnchorRefused as exc:
        raise InvalidInput(f"YAML {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}" if mark else ""
        raise InvalidInput(f"not valid YAML{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise InvalidInput("YAML nested too deeply to be a memory export") from None
    return read_document(data, source, format="yaml")
