"""The words memdeck uses for types, hats, statuses, sources and events, and how other tools'
words map onto them.

Everything here is a default: `config.Config` can add types, aliases and hat relations. Code
that needs the effective vocabulary asks `Vocabulary.from_config(config)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Seed 000's hat-aligned types, then the Claude Ops categories (seed 001).
TYPES: tuple[str, ...] = (
    "architecture",
    "dependency",
    "decision",
    "constraint",
    "pattern",
    "convention",
    "pitfall",
    "fix",
    "context",
    "preference",
    "timing",
    "behavior",
    "remediation",
    "maintenance",
)

# Other seeds' words for the same ideas (Nova26, Ralph, the Python assistant).
TYPE_ALIASES: dict[str, str] = {
    "error_solution": "fix",
    "error-solution": "fix",
    "solution": "fix",
    "bugfix": "fix",
    "style": "convention",
    "user_preference": "preference",
    "user-preference": "preference",
    "project_fact": "context",
    "project-fact": "context",
    "fact": "context",
    "note": "context",
    "gotcha": "pitfall",
    "warning": "pitfall",
    "bug": "pitfall",
    "arch": "architecture",
    "dep": "dependency",
    "deps": "dependency",
    "rule": "constraint",
    "requirement": "constraint",
    "behaviour": "behavior",
    "patterns": "pattern",
    "decisions": "decision",
    "fixes": "fix",
    "contexts": "context",
}

# The type a marker's unknown word is kept under (with the word as a tag).
FALLBACK_TYPE = "context"

HATS: tuple[str, ...] = ("explorer", "planner", "creator", "critic", "editor")

# Seed 000: which hats' memories are related to a reader's hat.
HAT_RELATIONS: dict[str, tuple[str, ...]] = {
    "explorer": ("planner",),
    "planner": ("creator", "explorer"),
    "creator": ("critic", "editor", "planner"),
    "critic": ("creator", "editor"),
    "editor": ("creator", "critic"),
}

STATUSES: tuple[str, ...] = ("pending", "active", "inactive", "deleted")
SOURCES: tuple[str, ...] = ("explicit", "automatic", "imported", "operator")

EVENT_KINDS: tuple[str, ...] = (
    "created",
    "reinforced",
    "retaught",  # a later session taught the same lesson again (capture recognised it): which session, the words
    "used",
    "decayed",
    "edited",
    "status_changed",
    "merged",
    "superseded",
    "imported",
    "deleted",
    "restored",
    "contradicted",  # judged wrong (an agent's `feedback`): confidence drops, inactive below the line
    "judged",  # judged not relevant to a task (an agent's `feedback`): confidence unchanged
    "anchored",  # anchors to code added, re-anchored or removed
    "checked",  # a check of its anchors found another status (fresh, moved, changed, missing)
    "proposed",  # it and another memory may be one update, contradiction or duplicate: a person decides
    "resolved",  # a person decided a proposal (keep both, supersede, merge, one is wrong)
    "shared",  # copied to the team store or the team file (`memdeck share`), by whom
    "opened",  # an agent opened it (MCP `get`) after a prime of its session listed it: wanted for that task
)

# What a session's activity log records; the live session view filters by these.
ACTIVITY_KINDS: tuple[str, ...] = (
    "prompt",  # the user's (or orchestrator's) prompt to the agent
    "assistant",  # the agent's own text
    "thinking",
    "tool_use",
    "tool_result",
    "tool_error",
    "marker",  # a memory marker found in the agent's text
    "marker_rejected",  # a marker that could not become a memory (empty, unreadable), with why
    "memory_created",
    "memory_reinforced",
    "candidate",  # a heuristic candidate put in the review inbox
    "injected",  # memories put into the session's prompt by `prime --record`
    "lookup",  # the agent looked memories up mid-session (MCP search, get, a memory resource)
    "feedback",  # the agent judged a memory helpful, wrong or outdated (MCP feedback)
    "summary",
    "note",  # anything else worth showing (an unknown type kept under the fallback, a cut memory)
)

_WORD = re.compile(r"[^a-z0-9]+")


def normalize_word(word: str) -> str:
    """`Error Solution` and `error-solution` are the same word: lower case, `_` between parts."""
    return _WORD.sub("_", word.strip().lower()).strip("_")


@dataclass(frozen=True)
class TypeResolution:
    """What a word written by an agent or a file means as a memdeck type."""

    type: str
    known: bool  # False: the word was not a type or alias and `type` is the fallback
    original: str


@dataclass(frozen=True)
class Vocabulary:
    types: tuple[str, ...] = TYPES
    aliases: dict[str, str] = field(default_factory=lambda: dict(TYPE_ALIASES))
    fallback_type: str = FALLBACK_TYPE
    hats: tuple[str, ...] = HATS
    hat_relations: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(HAT_RELATIONS))

    @classmethod
    def from_config(cls, config) -> "Vocabulary":
        extra_types = tuple(config.types.extra or ())
        aliases = dict(TYPE_ALIASES)
        aliases.update({normalize_word(k): v for k, v in (config.types.aliases or {}).items()})
        relations = {
            hat: tuple(related)
            for hat, related in (config.hats.relations or HAT_RELATIONS).items()
        }
        hats = tuple(dict.fromkeys([*HATS, *relations, *(config.hats.extra or ())]))
        return cls(
            types=tuple(dict.fromkeys([*TYPES, *extra_types])),
            aliases=aliases,
            fallback_type=config.types.fallback or FALLBACK_TYPE,
            hats=hats,
            hat_relations=relations,
        )

    def resolve_type(self, word: str) -> TypeResolution:
        key = normalize_word(word)
        if key in self.types:
            return TypeResolution(key, True, word)
        if key in self.aliases:
            return TypeResolution(self.aliases[key], True, word)
        # Plural forms agents write ("pitfalls") without listing every one as an alias.
        if key.endswith("s") and key[:-1] in self.types:
            return TypeResolution(key[:-1], True, word)
        if key.endswith("s") and key[:-1] in self.aliases:
            return TypeResolution(self.aliases[key[:-1]], True, word)
        return TypeResolution(self.fallback_type, False, word)

    def is_type(self, word: str) -> bool:
        return self.resolve_type(word).known

    def hat_alignment(self, memory_hat: str | None, reader_hat: str | None) -> str:
        """`same`, `related` or `none`: how a memory's hat stands to the hat that will read it."""
        if not memory_hat or not reader_hat:
            return "none"
        if memory_hat == reader_hat:
            return "same"
        if memory_hat in self.hat_relations.get(reader_hat, ()):
            return "related"
        return "none"
