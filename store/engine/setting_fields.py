"""How a setting is declared (`store.engine.settings`): a dataclass field with its documentation
and, where they apply, `key`, `at_most` and `choices` in its metadata."""

# No `from __future__ import annotations`: the loader reads each field's type from `Field.type`.

from dataclasses import field
from typing import Any

LARGEST_NUMBER = 2 ** 53  # numbers beyond this are no setting anyone means, and overflow SQLite


def setting(default: Any, doc: str, **meta: Any) -> Any:
    """A field with its documentation; a mapping default is copied for each instance."""
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata={"doc": doc, **meta})
    return field(default=default, metadata={"doc": doc, **meta})


def section(cls: type, doc: str, **meta: Any) -> Any:
    return field(default_factory=cls, metadata={"doc": doc, **meta})


FRACTION = 1  # `at_most` of confidences, shares and cosines
