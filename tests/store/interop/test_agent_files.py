"""The file-based agents: `memdeck export --format agents-md --into FILE` keeps memdeck's marked
section up to date in AGENTS.md (within the 32 KiB Codex reads), CLAUDE.md, GEMINI.md and
.github/copilot-instructions.md without touching the rest of the file, and `--format
cursor-rules` writes Cursor's rule file. Run in-process through `main(argv)` on real files."""

from __future__ import annotations

import pytest

from store import Config, Store
from store.interop.agents_md import BEGIN, END
from store.interop.transfer import AGENTS_MD_MAX_BYTES
from tui.cli.main import main


@pytest.fixture
def project(tmp_path, monkeypatch, db_path):
    root = tmp_path / "payments-api"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MEMDECK_DB", str(db_path))
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        store.add("Payments go through the ledger service, never straight to the DB", type="constraint",
                  confidence=0.95)
        store.add("Retry backoff caps at 60 s", type="pitfall", confidence=0.9)
    return root


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md"])
def test_the_marked_section_is_written_and_the_rest_of_the_file_kept(project, name):
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "# Payments API\r\n\r\nRun `make test` before pushing.\r\n\r\n"
    path.write_bytes(head.encode())
    assert main(["export", "--format", "agents-md", "--into", str(path)]) == 0
    first = path.read_bytes().decode()
    assert first.startswith(head) and BEGIN in first and END in first and "ledger service" in first
    assert "\r\n" in first.split(BEGIN)[1] and "\n" not in first.replace("\r\n", "")  # the file's own line ends
    edited = first.replace("Run `make test`", "Run `make check`") + "## Notes\r\n"
    path.write_bytes(edited.encode())
    assert main(["export", "--format", "agents-md", "--into", str(path)]) == 0
    assert path.read_bytes().decode() == edited  # only the block is memdeck's, and it did not change


def test_agents_md_stays_within_the_32_kib_codex_reads(project, db_path):
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        for i in range(60):
            store.add(f"Ledger rule {i}: " + f"entry{i} must balance against account{i} " * 20, type="convention",
                      confidence=0.9)
    path = project / "AGENTS.md"
    path.write_text("# Payments API\n\n" + "Build notes. " * 1500 + "\n")
    assert main(["export", "--format", "agents-md", "--into", str(path), "--limit", "60"]) == 0
    text = path.read_text()
    assert len(text.encode()) <= AGENTS_MD_MAX_BYTES and text.count("\n- ") >= 5
    assert main(["export", "--format", "agents-md", "--into", str(project / "CLAUDE.md"), "--limit", "60"]) == 0
    assert (project / "CLAUDE.md").read_text().count("\n- ") > text.count("\n- ")  # no cap there


def test_an_agents_md_already_over_the_cap_is_refused_unchanged(project, capsys):
    path = project / "AGENTS.md"
    path.write_text("x" * (AGENTS_MD_MAX_BYTES + 10))
    assert main(["export", "--format", "agents-md", "--into", str(path)]) == 2
    assert "32 KiB" in capsys.readouterr().err and path.read_text() == "x" * (AGENTS_MD_MAX_BYTES + 10)


def test_cursor_rules_are_written_with_front_matter(project):
    assert main(["export", "--format", "cursor-rules"]) == 0
    text = (project / ".cursor" / "rules" / "memdeck.mdc").read_text()
    front, body = text.split("---\n")[1], text.split("---\n", 2)[2]
    assert front.startswith("description: Project memories") and "\nglobs:\n" in front
    assert front.endswith("alwaysApply: true\n")
    assert "ledger service" in body and "Retry backoff" in body
    assert main(["export", "--format", "cursor-rules"]) == 0
    assert (project / ".cursor" / "rules" / "memdeck.mdc").read_text() == text
