"""Fixtures shared by the anchor tests: `repo`, a real git repository of a small shop (billing
code committed), and `code_store`, the test's store for the project rooted in it. A module uses
them by importing them (`from tests.anchor_support import code_store, repo  # noqa: F401`)."""

from __future__ import annotations

import pytest

from store import Config, Store
from tests.git_support import REFUND, Repo


@pytest.fixture
def repo(tmp_path):
    repo = Repo(tmp_path / "shop")
    repo.write("billing/refund.py", REFUND)
    repo.write("billing/invoice.py", "def invoice(order):\n    return order.total\n")
    repo.commit("billing")
    return repo


@pytest.fixture
def code_store(repo, db_path, clock):
    with Store.open(db_path, project="shop", clock=clock, config=Config.defaults(),
                    project_root=repo.root) as opened:
        yield opened
