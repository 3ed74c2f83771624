"""Every tunable memdeck has, its default, and the YAML files that override it.

Layers, later wins: the defaults below, the user file (`$MEMDECK_CONFIG`, else
`$XDG_CONFIG_HOME/memdeck/config.yml`), then the project file `.memdeck.yml` at the project root.
`Config.source(key)` says which layer a value came from, so `memdeck config` can explain it.
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.engine.errors import ConfigError
from store.capture.redaction import whole_characters

# Where the seeds disagree, the choice is a policy here; the comment names the seed of each default.
DEFAULTS: dict[str, Any] = {
    "types": {
        "extra": [],  # more types, beyond the built-in ones
        "aliases": {},  # more words mapped to types, e.g. {gotchas: pitfall}
        "fallback": "context",  # where a marker's unknown type goes (its word is kept as a tag)
    },
    "hats": {
        "extra": [],
        "relations": {
            "explorer": ["planner"],
            "planner": ["creator", "explorer"],
            "creator": ["critic", "editor", "planner"],
            "critic": ["creator", "editor"],
            "editor": ["creator", "critic"],
        },
    },
    "confidence": {
        # Starting confidence by source (seed 000; operator = typed by a person).
        "initial": {"explicit": 0.6, "automatic": 0.5, "imported": 0.7, "operator": 0.8},
        "max": 1.0,  # cap for reinforcement (seed 001)
        "reinforce_boost": 0.1,  # seeds 001 and 003
        "usage_boost": 0.02,  # seed 000, each time a memory is injected
        "usage_max": 0.95,  # usage alone never lifts a memory above this (seed 000)
        "superseded_to": 0.3,  # an explicitly contradicted memory drops to this (seed 004)
        # A memory judged wrong without a replacement loses this much (seed 001's contradiction:
        # below `inactive_below` it becomes inactive); two verdicts take a new memory out of use.
        "contradiction_penalty": 0.2,
        "inactive_below": 0.3,  # below this a memory becomes inactive (seed 001)
    },
    "reinforcement": {
        # rapidfuzz token_sort_ratio (0-100) at or above which a new memory reinforces an
        # active one of the same project, type and scope instead of being stored again.
        "similarity": 90,
    },
    "decay": {
        # linear (seed 000) | grace-weekly (seed 001) | exponential (seed 004) | none
        "policy": "grace-weekly",
        "linear": {"idle_days": 7, "per_week": 0.02, "floor": 0.1},
        "grace-weekly": {"grace_days": 30, "per_week": 0.1},
        "exponential": {"rate_per_day": 0.01},
    },
    "cleanup": {
        # Purge only memories that are inactive or in the trash, never used, below this
        # confidence, and unchanged for this many days (seed 000).
        "max_confidence": 0.15,
        "min_idle_days": 30,
    },
    "search": {
        "title_weight": 4.0,
        "content_weight": 1.0,
        "tags_weight": 2.0,
        "fuzzy_min_score": 70,
    },
    "injection": {
        "budget": 2000,
        # A memory longer than this many typical ones (the median length of the memories that
        # passed the gate) is packed after the others: one outsized memory (a pasted log, say)
        # does not crowd out the several ranked just below it.
        "long_memory": 5,
        "grouping": "type",  # type (seed 000) | scope (seed 001's grouping by service)
        "heading": "Project Memory",
        "confidence_floor": 0.3,  # below this a memory is never injected (seeds 000, 001)
        # The relevance gate (store/retrieval/gate.py). The task is about something here when its best
        # cosine (on the embedding model's own scale) reaches `semantic_evidence` and its best
        # word evidence reaches `word_evidence` (in rare words: the task's specific words a
        # memory uses, each at its rarity relative to a word found in one memory; or a memory
        # uses `word_share` of the task's specific words, by rarity), or when its best cosine
        # stands `semantic_alone` above the project's typical (median) cosine with the task:
        # in a project of up to `semantic_alone_size` memories; in a larger one of N that margin
        # grows by sqrt(ln N / ln semantic_alone_size), as chance's best cosine does (0: never).
        # Below `weak` of that mark nothing is injected; between, only the best candidate, if
        # it takes at most `weak_budget` of the token budget. Chosen on the two eval sets,
        # checked by two-fold cross-validation (`memdeck eval --cross`).
        # `fill`: on topic, the room the memories with evidence leave is filled with the
        # remaining candidates (relevance 0: nothing says they are about the task), best score
        # first and packed after every memory with evidence, so they never displace one; a
        # weak or unrelated task gets none. On by default: an on-topic block uses the budget as
        # plain full-text search does, so a relevant memory nothing pointed at still has its
        # chance. It shows in small projects: in a large one, those with evidence fill it.
        "gate": {"semantic_evidence": 0.12, "semantic_alone": 0.17, "word_evidence": 1.1,
                 "word_share": 0.5, "weak": 0.5, "weak_budget": 0.125, "fill": True,
                 "semantic_alone_size": 70},
        # The semantic signal (the `memdeck[semantic]` extra): off, or on when installed.
        "semantic": True,
        # Task verbs that say nothing about what a task is about, in any of their forms: the
        # usual ones, and those that only say which hat is at work (plan, review, investigate).
        "generic_words": ["fix", "add", "implement", "update", "make", "refactor", "plan", "review",
                          "investigate"],
        # With no task, paths or tags (a session starting cold) there is nothing to judge
        # relevance against: `trusted` fills the budget with the most trusted memories for the
        # hat (seed 001 injects by confidence at every session start); `critical` injects only
        # critical ones.
        "untargeted": "trusted",
        # The score is the weighted sum of the signals (each 0..1). Text and semantic share the
        # relevance of a memory's words; without the extra, text has both weights.
        "weights": {"text": 0.3, "semantic": 0.7, "path": 0.8, "tag": 0.3, "hat": 0.15,
                    "confidence": 0.15, "recency": 0.05, "critical": 0.5},
        "hat_related": 0.4,  # a related hat's share of the same hat's boost (seed 000: 0.1 / 0.25)
        "recency_days": 50,  # seed 000: the recency boost fades to nothing over 50 days
        # BM25 weight of each indexed field for injection. A title is most often the content's
        # first sentence, so weighting it high counts those words twice over.
        "field_weights": {"title": 1.0, "content": 1.0, "tags": 1.0, "words": 1.0},
        # Seed 003: high-confidence constraints and architecture are always surfaced.
        "critical": {"types": ["constraint", "architecture"], "min_confidence": 0.9, "limit": 5},
        # How many memories the SQL candidate search hands to the scorer; task words found in
        # `common_word` memories or more are not searched (they say little, and cost much).
        "candidates": {"text": 60, "semantic": 60, "path": 40, "confident": 30, "common_word": 1000},
    },
    "anchors": {
        # A memory whose anchored code changed or went missing is not injected as fact:
        # `leave-out` leaves it out with the reason; `flag` injects those at or above
        # `flag_min_confidence` with "(verify: PATH changed)" and leaves out the rest.
        "stale": "leave-out",
        "flag_min_confidence": 0.8,
        # Ingest anchors a marker's memory to the files the session edited within this many
        # tool results before it (0: none).
        "ingest_recent_edits": 3,
    },
    "ingest": {
        "marker_status": "active",  # active | pending: where explicit markers go
        "max_length": 4000,  # characters; longer memories are cut and tagged
        "repeated_error": 3,  # the same tool error this often in a session: a pitfall candidate
    },
    "capture": {
        # Inbox candidates from a session's signals (store/capture/heuristics.py, docs/capture.md).
        "min_confidence": 0.45,  # weaker candidates are dropped (task-local remarks score below)
        "max_per_session": 12,  # a session proposes at most this many: a reviewable handful
        # rapidfuzz token_sort_ratio (0-100) of two candidates of one session (their first 300
        # characters) at or above which the second strengthens the first instead of being proposed
        "similarity": 80,
        "follow_files": 8,  # files the agent edits after a signal, named in its candidate
        "max_evidence": 8,  # evidence lines kept on a candidate, over all the sessions that repeat it
        # rapidfuzz token_set_ratio (0-100) at or above which review shows a memory as one the
        # candidate resembles (a memory to merge it into)
        "resemblance": 50,
        # A failing command counts for fail-edit-pass only if it names one of these (a check).
        "check_commands": ["test", "pytest", "jest", "vitest", "mocha", "build", "lint", "tsc", "mypy",
                           "ruff", "flake8", "eslint", "cargo", "go vet", "make", "check", "compile",
                           "gradle", "mvn", "ctest", "tox", "nox", "rspec", "phpunit"],
    },
    "sessions": {
        # A session without an end in its transcript ends this long after its last activity.
        "idle_minutes": 30,
    },
    "team": {
        # Who the events of this store name as having made each change (a team store on
        # PostgreSQL is written by many people); empty: the operating system's user name.
        "author": "",
    },
    "interop": {
        "max_import_mb": 256,  # files larger than this are refused before they are parsed
        "max_memory_chars": 200000,  # an imported memory longer than this fails the import
        "agents_md_limit": 20,  # memories in the managed block of CLAUDE.md / AGENTS.md
    },
}


def _flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        # Mappings whose keys are data (aliases, relations) stay whole: they are one value.
        if isinstance(value, dict) and dotted not in _WHOLE_VALUES:
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


_WHOLE_VALUES = {"types.aliases", "hats.relations", "confidence.initial"}
# What each value of those mappings must be, checked when a file sets them (the code that uses
# them trusts the shape): a type word, a list of hats, a starting confidence.
_MAPPING_VALUES = {"types.aliases": "text", "hats.relations": "list of text", "confidence.initial": "number"}
# Settings that name one of a few policies.
_CHOICES = {
    "decay.policy": ("linear", "grace-weekly", "exponential", "none"),
    "injection.grouping": ("type", "scope"),
    "injection.untargeted": ("trusted", "critical"),
    "ingest.marker_status": ("active", "pending"),
}
# Numbers beyond this are no setting anyone means, and overflow SQLite's integers.
_LARGEST_NUMBER = 2 ** 53
# Every number memdeck has is 0 or more; these are fractions of 1 or percentages as well.
_AT_MOST = {"search.fuzzy_min_score": 100, "capture.similarity": 101, "capture.resemblance": 100,
            "injection.gate.semantic_evidence": 1, "injection.gate.semantic_alone": 1,
            "injection.gate.word_evidence": 100, "injection.gate.word_share": 1, "injection.gate.weak": 1,
            "injection.gate.weak_budget": 1}


def _at_most(key: str) -> float:
    return 1 if "confidence" in key or key.endswith("_floor") else _AT_MOST.get(key, _LARGEST_NUMBER)


def user_config_path() -> Path:
    if env := os.environ.get("MEMDECK_CONFIG"):
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "memdeck" / "config.yml"


PROJECT_CONFIG_NAME = ".memdeck.yml"
# Settings only the user's own config sets: a project's `.memdeck.yml` comes with a clone, and
# the author every event records is the person at the keyboard, not the repository's say.
USER_ONLY = frozenset({"team.author"})
_MAX_CONFIG_BYTES = 1 << 20


def _load_yaml_file(path: Path) -> dict[str, Any]:
    # Imported here: most runs have no config file, and `prime` runs at every session start.
    import yaml

    from store.engine import yaml_data

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
    if len(raw) > _MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: config file is larger than 1 MiB")
    try:
        text = raw.decode("utf-8")
        # A `.memdeck.yml` arrives with a cloned repository: it is read as data, never expanded.
        # The pure-Python loader: it reads a `\\ud800` escape (made whole below), which libyaml refuses.
        data = whole_characters(yaml_data.load(text, loader=yaml.SafeLoader))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: config is not UTF-8 (byte {exc.start})") from None
    except yaml_data.AnchorRefused as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        setting = f" {exc.where}" if getattr(exc, "where", "") else ""
        where = f"{setting} (line {mark.line + 1})" if mark is not None else setting
        raise ConfigError(f"{path}:{where} invalid YAML: {getattr(exc, 'problem', exc)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: config nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: config must be a mapping of settings, not {type(data).__name__}")
    return data


@dataclass
class Config:
    values: dict[str, Any] = field(default_factory=lambda: _flatten(DEFAULTS))
    sources: dict[str, str] = field(default_factory=dict)

    @classmethod
    def defaults(cls) -> "Config":
        return cls()

    @classmethod
    def load(cls, project_root: Path | None = None, user_path: Path | None = None) -> "Config":
        config = cls()
        user = user_path or user_config_path()
        if user.is_file():
            config.apply(_load_yaml_file(user), str(user))
        if project_root is not None:
            project_file = project_root / PROJECT_CONFIG_NAME
            if project_file.is_file():
                # A cloned repository's file: it may not say who the user is.
                found = {k: v for k, v in _flatten(_load_yaml_file(project_file)).items() if k not in USER_ONLY}
                config.apply(found, str(project_file))
        config._check_types()
        return config

    def apply(self, overrides: dict[str, Any], source: str) -> None:
        """Lay `overrides` (a nested mapping, as in the YAML file) over the current values."""
        for key, value in _flatten(overrides).items():
            if key not in self.values:
                if any(known.startswith(key + ".") for known in self.values):
                    raise ConfigError(f"{source}: {key} is a section: it must be a mapping of settings, "
                                      f"not {type(value).__name__}")
                raise ConfigError(f"{source}: unknown setting {key!r}")
            default = self.values[key]
            self.values[key] = self._checked(key, default, value, source)
            self.sources[key] = source

    @staticmethod
    def _checked(key: str, default: Any, value: Any, source: str) -> Any:
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, (int, float)):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if ok and isinstance(default, int) and not isinstance(value, int):
                raise ConfigError(f"{source}: {key} must be a whole number, got {value}")
            if ok and not (math.isfinite(value) and 0 <= value <= _at_most(key)):
                raise ConfigError(f"{source}: {key} must be from 0 to {_at_most(key)}, got {value}")
        elif isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, list):
            ok = isinstance(value, list)
            if ok and not all(isinstance(item, str) for item in value):
                raise ConfigError(f"{source}: {key} must be a list of text")
        elif isinstance(default, dict):
            ok = isinstance(value, dict)
            if ok and key in _MAPPING_VALUES:
                Config._check_mapping(key, value, source)
        else:
            ok = True
        if not ok:
            raise ConfigError(
                f"{source}: {key} must be {type(default).__name__}, got {type(value).__name__}"
            )
        if key in _CHOICES and value not in _CHOICES[key]:
            raise ConfigError(f"{source}: {key} must be one of {', '.join(_CHOICES[key])}, not {value!r}")
        return copy.deepcopy(value)

    def _check_types(self) -> None:
        """Every alias, and the fallback, names a type memdeck knows (a built-in one or one of
        `types.extra`): a marker's word must never resolve to a type that does not exist."""
        from store.engine.vocabulary import TYPES

        known = {*TYPES, *self.values["types.extra"]}
        for word, target in self.values["types.aliases"].items():
            if target not in known:
                raise ConfigError(f"{self.source('types.aliases')}: types.aliases.{word} maps to {target!r}, "
                                  f"which is not a type; known types: {', '.join(sorted(known))} "
                                  "(add new ones under types.extra)")
        if self.values["types.fallback"] not in known:
            raise ConfigError(f"{self.source('types.fallback')}: types.fallback {self.values['types.fallback']!r} "
                              f"is not a type; known types: {', '.join(sorted(known))}")

    @staticmethod
    def _check_mapping(key: str, value: dict, source: str) -> None:
        shape = _MAPPING_VALUES[key]
        for name, item in value.items():
            if shape == "text":
                ok = isinstance(item, str)
            elif shape == "list of text":
                ok = isinstance(item, list) and all(isinstance(i, str) for i in item)
            else:
                ok = isinstance(item, (int, float)) and not isinstance(item, bool) and 0 <= item <= 1
            if not isinstance(name, str) or not name.strip() or not ok:
                what = "a number from 0 to 1" if shape == "number" else shape
                raise ConfigError(f"{source}: {key}.{name} must be {what}")

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def section(self, prefix: str) -> dict[str, Any]:
        """The settings under `prefix.` as a flat mapping without the prefix."""
        start = prefix + "."
        return {k[len(start):]: v for k, v in self.values.items() if k.startswith(start)}

    def source(self, key: str) -> str:
        return self.sources.get(key, "default")

    def items(self):
        for key in sorted(self.values):
            yield key, self.values[key], self.source(key)

    def initial_confidence(self, source: str) -> float:
        table = self.get("confidence.initial")
        return float(table.get(source, table.get("explicit", 0.6)))
