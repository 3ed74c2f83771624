"""benchmarks/real_prompts.py: real prompts of sessions on other projects, asked in Ralph
projects, inject (almost) nothing (docs/injection.md, "Silence on real prompts")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from data_support import SHARED, needs_shared
from tests.data_support import ROOT

pytestmark = pytest.mark.slow  # real prompts over the shared data, through a benchmark process

SCRIPT = ROOT / "benchmarks" / "real_prompts.py"

RALPH = """# Memories

## Fixes

### mem-1772990322-ac52
> The label printer driver drops jobs over 4 MB; split the batch before sending it to the printer
<!-- tags: printer, labels | created: 2026-03-08 -->

### mem-1772990322-ac53
> Shipping rates are cached for an hour in the carrier client; clear the cache after changing a rate table
<!-- tags: shipping | created: 2026-03-08 -->
"""


def _record(text: str, **flags) -> str:
    return json.dumps({"type": "user", "sessionId": "s", **flags,
                       "message": {"role": "user", "content": [{"type": "text", "text": text}]}}) + "\n"


def _run(shared: Path) -> dict:
    run = subprocess.run([sys.executable, str(SCRIPT), "--shared", str(shared), "--json"],
                         capture_output=True, text=True, check=True)
    return json.loads(run.stdout.splitlines()[-1])


def test_only_the_users_own_prompts_are_asked(tmp_path):
    (tmp_path / "fixtures" / "ralph").mkdir(parents=True)
    (tmp_path / "fixtures" / "transcripts").mkdir()
    (tmp_path / "fixtures" / "ralph" / "someone__labels__memories.md").write_text(RALPH)
    (tmp_path / "fixtures" / "ralph" / "someone__notes__memories.md").write_text("# Notes\n\nfree text, no memory\n")
    (tmp_path / "fixtures" / "transcripts" / "a.jsonl").write_text(
        _record("Rename the poll endpoint in the chat server and keep the old path as an alias")
        + _record("You are a subagent: label printer driver batch split shipping cache", isSidechain=True)
        + _record("Expand the template for the label printer driver and shipping cache", isMeta=True)
        + _record("This session is being continued: label printer driver shipping rates", isCompactSummary=True)
        + _record("<command-name>/clear</command-name> label printer driver shipping")
        + _record("short one")
        + "not json\n")
    totals = _run(tmp_path)
    assert totals["prompts"] == 1 and totals["projects"] == ["labels"]
    assert totals["primes"] == 1 and totals["mean_tokens"] == 0


@needs_shared
def test_real_prompts_of_other_projects_stay_within_the_silence_goal():
    """The injection issue's goal for cross-project probes, on prompts and corpora no setting
    was chosen on: mean at most 150 tokens, at most 5% of primes over 500."""
    totals = _run(SHARED)
    assert totals["prompts"] >= 10 and len(totals["projects"]) >= 10
    assert totals["mean_tokens"] <= 150 and totals["over_500"] <= 0.05, totals
