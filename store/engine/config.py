"""Every tunable memdeck has, its default, and the YAML files that override it.

The settings, their defaults and what each is for are the dataclasses of `store.engine.settings`.
Layers, later wins: those defaults, the user file (`$MEMDECK_CONFIG`, else
`$XDG_CONFIG_HOME/memdeck/config.yml`), then the project file `.memdeck.yml` at the project root.
`Config.source(key)` says which layer a value came from, so `memdeck config` can explain it.
"""

# No `from __future__ import annotations`: the sections are read from `Field.type`.

import math
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Mapping, get_args, get_origin

from store.engine.errors import ConfigError
from store.engine.settings import (
    LARGEST_NUMBER, AnchorsSettings, CaptureSettings, CleanupSettings, ConfidenceSettings, DecaySettings,
    ConsolidateSettings, HatsSettings, IngestSettings, InjectionSettings, InteropSettings, ReinforcementSettings,
    SamenessSettings, SearchSettings, SessionsSettings, TeamSettings, TypesSettings, section,
)
from store.engine.redaction import whole_characters
from store.engine import environment

# What each value of a mapping setting must be, by its declared value type (the code that uses
# them trusts the shape): a type word, a list of hats, a starting confidence.
_MAPPING_SHAPES = {str: "text", tuple[str, ...]: "list of text", float: "number"}
_KIND_NAMES = {bool: "bool", int: "int", float: "float", str: "str", tuple: "list", dict: "dict"}


@dataclass(frozen=True)
class _Spec:
    """One setting: its dotted key, the attribute path to it, its type and its limits."""

    key: str
    path: tuple[str, ...]
    kind: type  # bool, int, float, str, tuple (a list of text) or dict (a mapping, one value)
    default: Any
    doc: str
    at_most: float = LARGEST_NUMBER
    choices: tuple[str, ...] = ()
    shape: str = ""  # a mapping's values: text, list of text or number


def _specs(cls: type, prefix: str = "", path: tuple[str, ...] = ()) -> dict[str, _Spec]:
    specs: dict[str, _Spec] = {}
    for f in fields(cls):
        if not f.metadata.get("doc"):
            continue  # Config.sources
        key = f"{prefix}{f.metadata.get('key', f.name)}"
        if is_dataclass(f.type):
            specs.update(_specs(f.type, key + ".", (*path, f.name)))
            continue
        kind = get_origin(f.type) or f.type
        default = f.default if f.default is not MISSING else f.default_factory()
        shape = _MAPPING_SHAPES[get_args(f.type)[1]] if kind is dict else ""
        specs[key] = _Spec(key, (*path, f.name), kind, default, f.metadata["doc"],
                           f.metadata.get("at_most", LARGEST_NUMBER), f.metadata.get("choices", ()), shape)
    return specs


def _flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        # Mappings whose keys are data (aliases, relations) stay whole: they are one value.
        spec = SETTINGS.get(dotted)
        if isinstance(value, dict) and (spec is None or spec.kind is not dict):
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _build(cls: type, flat: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The keyword arguments of `cls` (a section) from the flat values."""
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if not f.metadata.get("doc"):
            continue
        key = f"{prefix}{f.metadata.get('key', f.name)}"
        kwargs[f.name] = f.type(**_build(f.type, flat, key + ".")) if is_dataclass(f.type) else flat[key]
    return kwargs


def user_config_path() -> Path:
    if env := environment.user_config():
        return Path(env)
    return environment.config_home() / "memdeck" / "config.yml"


PROJECT_CONFIG_NAME = ".memdeck.yml"
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


# Settings only the user's own config sets: a project's `.memdeck.yml` comes with a clone, and
# the author every event records is the person at the keyboard, not the repository's say; nor
# are the servers a repository may name as its team store, nor the processes memdeck leaves
# running on this machine (the hook server).
USER_ONLY = frozenset({"team.author", "team.servers", "sessions.hook_server_minutes"})


@dataclass(frozen=True)
class Config:
    """Every setting, by section (`config.injection.gate.fill`), and which layer each came from.
    Frozen: `with_overrides` (checked, as a file's values are) or `dataclasses.replace` make a
    changed copy."""

    types: TypesSettings = section(TypesSettings, "Memory types beyond the built-in ones.")
    hats: HatsSettings = section(HatsSettings, "Hats (agent roles) and how they relate.")
    confidence: ConfidenceSettings = section(ConfidenceSettings, "How confidence starts, grows and falls.")
    reinforcement: ReinforcementSettings = section(ReinforcementSettings, "When a new memory reinforces one.")
    sameness: SamenessSettings = section(SamenessSettings, "Same statement, update, contradiction or distinct.")
    consolidate: ConsolidateSettings = section(ConsolidateSettings, "What `memdeck consolidate` may do.")
    decay: DecaySettings = section(DecaySettings, "How unused memories fade.")
    cleanup: CleanupSettings = section(CleanupSettings, "What `memdeck cleanup` purges.")
    search: SearchSettings = section(SearchSettings, "`memdeck search` and the workbench's search.")
    injection: InjectionSettings = section(InjectionSettings, "What `memdeck prime` injects: ranking, gate, block.")
    anchors: AnchorsSettings = section(AnchorsSettings, "Memories anchored to code.")
    ingest: IngestSettings = section(IngestSettings, "Reading session transcripts.")
    capture: CaptureSettings = section(CaptureSettings, "Inbox candidates from a session's signals.")
    sessions: SessionsSettings = section(SessionsSettings, "Agent sessions.")
    team: TeamSettings = section(TeamSettings, "A store shared by a team.")
    interop: InteropSettings = section(InteropSettings, "Import and export.")
    # Dotted key -> the file it came from; a key not here has its default.
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def defaults(cls) -> "Config":
        return cls()

    @classmethod
    def load(cls, project_root: Path | None = None, user_path: Path | None = None) -> "Config":
        layers: list[tuple[dict[str, Any], str]] = []
        user = user_path or user_config_path()
        if user.is_file():
            layers.append((_load_yaml_file(user), str(user)))
        if project_root is not None:
            project_file = project_root / PROJECT_CONFIG_NAME
            if project_file.is_file():
                # A cloned repository's file: it may not say who the user is.
                found = {k: v for k, v in _flatten(_load_yaml_file(project_file)).items() if k not in USER_ONLY}
                layers.append((found, str(project_file)))
        if not layers:
            return cls()
        config = cls()
        for overrides, source in layers:
            config = config.with_overrides(overrides, source, check=False)
        config._check_types()
        return config

    def with_overrides(self, overrides: Mapping[str, Any], source: str = "override", *,
                       check: bool = True) -> "Config":
        """A copy with `overrides` (a nested mapping, as in the YAML file, or dotted keys:
        `{"injection.gate.fill": False}`) laid over these values, each checked as a file's."""
        flat = dict(self.values())
        sources = dict(self.sources)
        for key, value in _flatten(dict(overrides)).items():
            if key not in SETTINGS:
                if any(known.startswith(key + ".") for known in SETTINGS):
                    raise ConfigError(f"{source}: {key} is a section: it must be a mapping of settings, "
                                      f"not {type(value).__name__}")
                raise ConfigError(f"{source}: unknown setting {key!r}")
            flat[key] = self._checked(SETTINGS[key], value, source)
            sources[key] = source
        config = Config(**_build(Config, flat), sources=sources)
        if check:
            config._check_types()
        return config

    @staticmethod
    def _checked(spec: _Spec, value: Any, source: str) -> Any:
        key, kind = spec.key, spec.kind
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind in (int, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if ok and kind is int and not isinstance(value, int):
                raise ConfigError(f"{source}: {key} must be a whole number, got {value}")
            if ok and not (math.isfinite(value) and 0 <= value <= spec.at_most):
                raise ConfigError(f"{source}: {key} must be from 0 to {spec.at_most}, got {value}")
            if ok:
                value = kind(value)
        elif kind is str:
            ok = isinstance(value, str)
        elif kind is tuple:
            ok = isinstance(value, list)
            if ok and not all(isinstance(item, str) for item in value):
                raise ConfigError(f"{source}: {key} must be a list of text")
            value = tuple(value) if ok else value
        else:
            ok = isinstance(value, dict)
            if ok:
                value = Config._checked_mapping(spec, value, source)
        if not ok:
            raise ConfigError(f"{source}: {key} must be {_KIND_NAMES[kind]}, got {type(value).__name__}")
        if spec.choices and value not in spec.choices:
            raise ConfigError(f"{source}: {key} must be one of {', '.join(spec.choices)}, not {value!r}")
        return value

    def _check_types(self) -> None:
        """Every alias, and the fallback, names a type memdeck knows (a built-in one or one of
        `types.extra`): a marker's word must never resolve to a type that does not exist."""
        from store.engine.vocabulary import TYPES

        known = {*TYPES, *self.types.extra}
        for word, target in self.types.aliases.items():
            if target not in known:
                raise ConfigError(f"{self.source('types.aliases')}: types.aliases.{word} maps to {target!r}, "
                                  f"which is not a type; known types: {', '.join(sorted(known))} "
                                  "(add new ones under types.extra)")
        if self.types.fallback not in known:
            raise ConfigError(f"{self.source('types.fallback')}: types.fallback {self.types.fallback!r} "
                              f"is not a type; known types: {', '.join(sorted(known))}")

    @staticmethod
    def _checked_mapping(spec: _Spec, value: dict, source: str) -> dict[str, Any]:
        checked: dict[str, Any] = {}
        for name, item in value.items():
            if spec.shape == "text":
                ok = isinstance(item, str)
            elif spec.shape == "list of text":
                ok = isinstance(item, list) and all(isinstance(i, str) for i in item)
                item = tuple(item) if ok else item
            else:
                ok = isinstance(item, (int, float)) and not isinstance(item, bool) and 0 <= item <= 1
                item = float(item) if ok else item
            if not isinstance(name, str) or not name.strip() or not ok:
                what = "a number from 0 to 1" if spec.shape == "number" else spec.shape
                raise ConfigError(f"{source}: {spec.key}.{name} must be {what}")
            checked[name] = item
        return checked

    def value(self, key: str) -> Any:
        """One setting by its dotted key (`memdeck config`, the eval's tuning report); code reads
        the attributes."""
        node: Any = self
        for name in SETTINGS[key].path:
            node = getattr(node, name)
        return node

    def values(self) -> dict[str, Any]:
        """Every setting by its dotted key."""
        return {key: self.value(key) for key in SETTINGS}

    def source(self, key: str) -> str:
        return self.sources.get(key, "default")

    def items(self):
        for key in sorted(SETTINGS):
            yield key, self.value(key), self.source(key)

    def initial_confidence(self, source: str) -> float:
        table = self.confidence.initial
        return float(table.get(source, table.get("explicit", 0.6)))


SETTINGS: dict[str, _Spec] = _specs(Config)
