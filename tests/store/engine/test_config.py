"""Config: defaults in code, the user file, then the project's `.memdeck.yml`; `memdeck config`
says where each value came from; a bad file is a clear error (exit 2), never a traceback."""

from __future__ import annotations

import json

import pytest

from store import Config, ConfigError


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "config-home" / "memdeck" / "config.yml"
    path.parent.mkdir(parents=True)
    return path


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


def test_defaults_come_from_code():
    config = Config.load(None)
    assert config.decay.policy == "grace-weekly"
    assert config.confidence.initial["explicit"] == 0.6
    assert config.source("decay.policy") == "default"
    assert config.decay.params("grace-weekly") == {"grace_days": 30, "per_week": 0.1}


def test_the_project_file_overrides_the_user_file_which_overrides_defaults(user_file, project):
    user_file.write_text("decay:\n  policy: linear\n  linear:\n    per_week: 0.05\n"
                         "confidence:\n  reinforce_boost: 0.2\n")
    (project / ".memdeck.yml").write_text("decay:\n  policy: exponential\n")
    config = Config.load(project)
    assert config.decay.policy == "exponential"
    assert config.source("decay.policy") == str(project / ".memdeck.yml")
    assert config.decay.linear.per_week == 0.05
    assert config.source("decay.linear.per_week") == str(user_file)
    assert config.decay.linear.idle_days == 7  # the rest of a section keeps its defaults
    assert config.confidence.reinforce_boost == 0.2


def test_memdeck_config_env_names_the_user_file(tmp_path, monkeypatch):
    path = tmp_path / "elsewhere.yml"
    path.write_text("search:\n  fuzzy_min_score: 80\n")
    monkeypatch.setenv("MEMDECK_CONFIG", str(path))
    assert Config.load(None).search.fuzzy_min_score == 80


def test_mappings_of_data_are_replaced_whole(user_file):
    user_file.write_text("types:\n  aliases:\n    gotchas: pitfall\n")
    assert Config.load(None).types.aliases == {"gotchas": "pitfall"}


def test_an_empty_file_changes_nothing(user_file):
    user_file.write_text("# nothing yet\n")
    assert Config.load(None) == Config.defaults()


@pytest.mark.parametrize("text, message", [
    ("decay: [unclosed\n", "invalid YAML"),
    ("decay:\n  polcy: linear\n", "unknown setting 'decay.polcy'"),
    ("confidence:\n  max: high\n", "confidence.max must be float, got str"),
    ("decay:\n  grace-weekly:\n    grace_days: true\n", "grace_days must be int, got bool"),
    ("- just\n- a list\n", "must be a mapping"),
    ("types:\n  extra: pattern\n", "types.extra must be list"),
])
def test_a_bad_config_is_a_clear_error(user_file, text, message):
    user_file.write_text(text)
    with pytest.raises(ConfigError, match=message) as caught:
        Config.load(None)
    assert str(user_file) in str(caught.value)


def test_a_config_that_is_not_utf8_is_a_clear_error(user_file):
    user_file.write_bytes(b"decay:\n  policy: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        Config.load(None)


# -- through the command line --------------------------------------------------------------------

def test_memdeck_config_shows_each_value_and_its_source(run_cli, user_file, project):
    user_file.write_text("confidence:\n  reinforce_boost: 0.2\n")
    (project / ".memdeck.yml").write_text("decay:\n  policy: linear\n")
    result = run_cli("config", cwd=project / "src", check=True)
    lines = result.stdout.splitlines()
    assert f'decay.policy = "linear"    # {project / ".memdeck.yml"}' in lines
    assert f"confidence.reinforce_boost = 0.2    # {user_file}" in lines
    assert 'decay.grace-weekly.grace_days = 30    # default' in lines
    data = json.loads(run_cli("config", "--json", cwd=project, check=True).stdout)
    assert data["decay.policy"] == {"value": "linear", "source": str(project / ".memdeck.yml")}


def test_the_project_config_changes_what_commands_do(run_cli, project):
    (project / ".memdeck.yml").write_text("confidence:\n  initial:\n    explicit: 0.45\n")
    added = json.loads(run_cli("add", "Cart totals round half up", "--type", "decision", "--json",
                               cwd=project, check=True).stdout)
    assert added["confidence"] == 0.45


@pytest.mark.parametrize("text, message, command", [
    ("decay: [unclosed\n", "invalid YAML", ["config"]),
    ("decay:\n  polcy: linear\n", "unknown setting", ["list"]),
    ("decay:\n  grace-weekly:\n    per_week: lots\n", "must be float", ["add", "A note", "--type", "context"]),
])
def test_a_bad_config_stops_every_command_with_exit_2(run_cli, project, db_path, text, message, command):
    (project / ".memdeck.yml").write_text(text)
    result = run_cli(*command, cwd=project)
    assert result.returncode == 2
    assert message in result.stderr and ".memdeck.yml" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not db_path.exists()  # nothing written
