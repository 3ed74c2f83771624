"""Argument types for numbers on the command line: a value out of range (`--min-confidence nan`,
`5`, `--limit -1`) is refused by argparse with exit code 2 and a message naming the option,
instead of quietly matching nothing."""

from __future__ import annotations

import argparse
import math
from typing import Callable, TypeVar

Number = TypeVar("Number", int, float)


def _checked(text: str, convert: Callable[[str], Number], what: str, within: Callable[[Number], bool],
             wanted: str) -> Number:
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if not within(value):  # nan fails every comparison, so it never passes
        raise argparse.ArgumentTypeError(f"{text!r} is not {wanted}")
    return value


def confidence(text: str) -> float:
    return _checked(text, float, "a number (confidence is from 0 to 1)", lambda v: 0.0 <= v <= 1.0,
                    "from 0 to 1")


def count(text: str) -> int:
    """A whole number of 0 or more."""
    return _checked(text, int, "a whole number", lambda v: v >= 0, "0 or more")


def seconds(text: str) -> float:
    """A finite, non-negative duration."""
    return _checked(text, float, "a number of seconds", lambda v: math.isfinite(v) and v >= 0,
                    "a number of seconds of 0 or more")
