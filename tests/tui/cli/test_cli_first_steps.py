"""A newcomer's first commands, run in-process through `main(argv)`: a misspelt project is
"no such project" and creates nothing, `--version` answers, and `prime` takes `--json` as every
other command does."""

from __future__ import annotations

import json

import pytest

from tui.cli.main import main
from tests.data_support import DATA, ROOT


@pytest.fixture
def memdeck(tmp_path, monkeypatch, capsys):
    """Run `memdeck ARGS` in-process on a store in tmp_path: (exit code, stdout, stderr)."""
    monkeypatch.setenv("MEMDECK_DB", str(tmp_path / "memdeck.db"))
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str, str]:
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def _project_names(memdeck) -> list[str]:
    code, out, _ = memdeck("projects", "--json")
    assert code == 0
    return [p["name"] for p in json.loads(out)]


@pytest.mark.parametrize("command", [["list"], ["search", "deploy"], ["inbox"], ["stats"]])
def test_a_read_of_a_misspelt_project_names_the_nearest_and_creates_nothing(memdeck, command):
    assert memdeck("--project", "payments-api", "add", "Deploys go out on Tuesdays", "--type", "convention")[0] == 0
    before = _project_names(memdeck)
    code, out, err = memdeck("--project", "payment-api", *command)
    assert code == 4, err
    assert err.strip().splitlines() == [err.strip()]
    assert "no such project 'payment-api'" in err and "payments-api" in err
    assert _project_names(memdeck) == before


def test_memdeck_version_prints_the_installed_version(memdeck):
    from importlib.metadata import version

    code, out, _ = memdeck("--version")
    assert code == 0 and out.strip() == f"memdeck {version('memdeck')}"


def test_prime_takes_json_as_every_command_does_and_keeps_format_json(memdeck):
    memdeck("add", "Retry uploads with exponential backoff", "--type", "fix")
    code, out, err = memdeck("prime", "--task", "retry the uploads", "--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(memdeck("prime", "--task", "retry the uploads", "--format", "json")[1])


RULES = DATA / "transcripts" / "rules-and-rejections.jsonl"


def _inbox_line(err: str) -> str:
    return next(line.strip() for line in err.splitlines() if line.strip().startswith("inbox:"))


def test_ingest_counts_the_candidates_that_land_and_its_hint_keeps_the_project(memdeck):
    code, _, err = memdeck("--project", "payments-api", "ingest", str(RULES))
    assert code == 0, err
    landed = json.loads(memdeck("--project", "payments-api", "inbox", "--json")[1])
    assert _inbox_line(err) == (f"inbox: {len(landed)} new candidates; "
                                "review with: memdeck --project payments-api inbox")
    # The same lessons in another session: repeats of what waits in the inbox, nothing new.
    code, _, err = memdeck("--project", "payments-api", "ingest", str(RULES), "--session", "another")
    assert code == 0, err
    assert len(json.loads(memdeck("--project", "payments-api", "inbox", "--json")[1])) == len(landed)
    assert _inbox_line(err).startswith(f"inbox: 0 new candidates, {len(landed)} already there reinforced;")


def test_importing_an_unchanged_file_again_says_so_in_one_line(memdeck):
    ralph = ROOT / "examples" / "ralph-memories.md"
    assert memdeck("import", str(ralph))[0] == 0
    code, out, _ = memdeck("import", str(ralph))
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 2, out
    assert lines[0].endswith(" skipped") and lines[1].startswith("  skipped ") and "unchanged" in lines[1]
