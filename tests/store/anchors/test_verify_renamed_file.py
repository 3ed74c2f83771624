"""`memdeck verify` on a whole-file anchor whose file was renamed says where it went ("moved to
NEW"), as it does for line ranges, instead of printing the old path as fresh."""

from __future__ import annotations

import json

import pytest

from tests.git_support import REFUND, Repo

pytestmark = pytest.mark.slow


def test_a_renamed_whole_file_anchor_says_moved_to_its_new_path(run_cli, tmp_path):
    repo = Repo(tmp_path / "shop")
    repo.write("billing/refund.py", REFUND)
    repo.commit("billing")
    added = json.loads(run_cli("add", "Refunds exclude fees.", "--type", "constraint", "--anchor",
                               "billing/refund.py", "--json", cwd=repo.root, check=True).stdout)
    repo.move("billing/refund.py", "payments/refunds.py")
    done = run_cli("verify", "--dry-run", cwd=repo.root)
    assert done.returncode == 0
    assert "billing/refund.py moved to payments/refunds.py" in done.stdout
    assert json.loads(run_cli("verify", "--dry-run", "--json", cwd=repo.root).stdout)[0]["anchors"][0]["path"] == \
        "payments/refunds.py"
    assert added["id"] in done.stdout
