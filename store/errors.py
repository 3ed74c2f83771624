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
