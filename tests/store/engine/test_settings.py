"""Typed settings: a frozen dataclass per config section, each field documented with what it does
and where its value came from; docs/settings.md is generated from them; a changed copy is made
with `with_overrides` (checked as a file's values are) or `dataclasses.replace`."""

from __future__ import annotations

import dataclasses

import pytest

from store import Config, ConfigError
from store.engine import settings_reference
from store.engine.config import SETTINGS
from tests.data_support import ROOT

DOCS = ROOT / "docs"
# Every doc says where its value came from, in one of these words (or its section's doc does).
ORIGINS = ("seed", "policy", "fit", "measurement", "commit", "chosen", "set ")


def test_settings_reference_is_current():
    committed = (DOCS / "settings.md").read_text(encoding="utf-8")
    assert committed == settings_reference.render(), (
        "docs/settings.md is stale: run `python -m store.engine.settings_reference > docs/settings.md`")


def test_every_setting_is_in_the_reference_with_its_default():
    text = (DOCS / "settings.md").read_text(encoding="utf-8")
    for key in SETTINGS:
        assert f"| `{key}` |" in text, key


def test_every_setting_says_what_it_does_and_where_its_value_came_from():
    sections = {f"{spec.key.rsplit('.', 1)[0]}" for spec in SETTINGS.values()}
    section_docs: dict[str, str] = {}

    def walk(cls, prefix):
        for f in dataclasses.fields(cls):
            if dataclasses.is_dataclass(f.type):
                key = f"{prefix}{f.metadata.get('key', f.name)}"
                section_docs[key] = (f.type.__doc__ or "") + f.metadata["doc"]
                walk(f.type, key + ".")

    walk(Config, "")
    assert sections <= set(section_docs)
    for spec in SETTINGS.values():
        assert len(spec.doc) > 20, spec.key
        around = spec.doc + section_docs[spec.key.rsplit(".", 1)[0]]
        assert any(word in around.lower() for word in ORIGINS), f"{spec.key}: where does its value come from?"


def test_settings_are_attributes_with_the_defaults_of_their_dataclasses():
    config = Config.defaults()
    assert config.injection.budget == 2000
    assert config.injection.gate.semantic_alone == 0.17 and config.injection.gate.fill is True
    assert config.decay.grace_weekly.grace_days == 30 and config.value("decay.grace-weekly.grace_days") == 30
    assert config.capture.confidence.start_hook == 0.65
    assert config.injection.generic_words[:2] == ("fix", "add")


def test_a_config_is_frozen_and_a_changed_copy_leaves_it_alone():
    config = Config.defaults()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.injection.budget = 10  # type: ignore[misc]
    changed = config.with_overrides({"injection.gate.fill": False, "decay": {"policy": "linear"}}, "test")
    assert changed.injection.gate.fill is False and changed.decay.policy == "linear"
    assert changed.source("decay.policy") == "test" and changed.source("injection.budget") == "default"
    assert config.injection.gate.fill is True and config == Config.defaults()
    replaced = dataclasses.replace(config, injection=dataclasses.replace(config.injection, budget=500))
    assert replaced.injection.budget == 500 and replaced.injection.gate == config.injection.gate


@pytest.mark.parametrize("overrides, message", [
    ({"injection.budget": "lots"}, "injection.budget must be int, got str"),
    ({"injection.budget": 1.5}, "injection.budget must be a whole number, got 1.5"),
    ({"injection.gate.weak": 2}, "injection.gate.weak must be from 0 to 1, got 2"),
    ({"capture.confidence.start_hook": 1.5}, "capture.confidence.start_hook must be from 0 to 1"),
    ({"injection.gate.fil": True}, "unknown setting 'injection.gate.fil'"),
    ({"injection.gate": 3}, "injection.gate is a section"),
    ({"decay.policy": "sometimes"}, "decay.policy must be one of linear, grace-weekly, exponential, none"),
    ({"types.aliases": {"gotchas": "nonsense"}}, "types.aliases.gotchas maps to 'nonsense', which is not a type"),
    ({"hats.relations": {"critic": "creator"}}, "hats.relations.critic must be list of text"),
])
def test_a_changed_copy_is_checked_as_a_file_is(overrides, message):
    with pytest.raises(ConfigError, match=message):
        Config.defaults().with_overrides(overrides, "test")


def test_whole_numbers_in_a_number_setting_are_numbers():
    config = Config.defaults().with_overrides({"confidence": {"max": 1, "initial": {"explicit": 1}}})
    assert isinstance(config.confidence.max, float) and isinstance(config.confidence.initial["explicit"], float)
    assert config.initial_confidence("explicit") == 1.0


def test_every_setting_is_listed_by_items_with_its_source():
    listed = {key: source for key, _, source in Config.defaults().items()}
    assert set(listed) == set(SETTINGS) and set(listed.values()) == {"default"}
    assert len(SETTINGS) >= 100
