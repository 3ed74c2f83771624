"""Argument types for numbers on the command line: a value out of range (`--min-confidence nan`,
`5`, `--limit -1`) is refused by argparse with exit code 2 and a message naming the option,
instead of quietly matching nothing."""

from __future__ import annotations

import argparse
import math


def confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (confidence is from 0 to 1)") from None
    if not 0.0 <= value <= 1.0:  # nan fails this too
        raise argparse.ArgumentTypeError(f"{text!r} is not from 0 to 1")
    return value


def count(text: str) -> int:
    """A whole number of 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is below 0")
    return value


def seconds(text: str) -> float:
    """A finite, non-negative duration."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds of 0 or more")
    return value
