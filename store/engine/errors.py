"""memdeck's own error types. Every failure a user can cause ends in one of these, with a
message written for that user; the command line prints it and exits non-zero."""


class MemdeckError(Exception):
    """Base of every error memdeck reports to a user."""

    exit_code = 1


class ConfigError(MemdeckError):
    """A config file could not be read or holds a setting memdeck does not know."""

    exit_code = 2


class StoreError(MemdeckError):
    """The store file is missing, damaged, foreign or from a newer memdeck."""

    exit_code = 3


class NotFound(MemdeckError):
    """A memory, project or session named by the user does not exist."""

    exit_code = 4


class InvalidInput(MemdeckError):
    """A value the user gave (a type, a confidence, a date) is not acceptable."""

    exit_code = 2


class Conflict(MemdeckError):
    """A compare-and-set write found the memory changed since the writer read it; nothing was
    written. `current` is the memory as it is now; `changed` maps each field that differs from
    what the writer read to (what they read, what it is now), when the writer said what it read."""

    exit_code = 5

    def __init__(self, memory_id: str, expected_version: int, current, changed: dict | None = None) -> None:
        self.memory_id = memory_id
        self.expected_version = expected_version
        self.current = current  # a `Memory`, or None when it no longer exists
        self.changed = changed or {}
        if current is None:
            what = "was purged meanwhile"
        elif self.changed:
            what = "changed meanwhile: " + "; ".join(
                f"{name} {brief_value(old)} → {brief_value(new)}" for name, (old, new) in self.changed.items())
        else:
            what = f"changed meanwhile (version {expected_version}, now {current.version})"
        super().__init__(f"memory {memory_id} {what}; nothing was written. "
                         f"Look at it again (memdeck show {memory_id}) and repeat the change if it still applies")


def brief_value(value) -> str:
    if isinstance(value, (list, tuple)):
        value = ", ".join(map(str, value)) or "(none)"
    elif isinstance(value, float):
        value = f"{value:.2f}"
    elif value is None:
        value = "(none)"
    text = str(value).replace("\n", " ")
    return repr(text if len(text) <= 40 else text[:39] + "…")
