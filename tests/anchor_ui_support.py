"""A small store anchored to a real git repository, for the workbench's anchor tests: one memory
whose code changed since it was anchored, one whose code is as it was, one without anchors.
Commit dates and memory ids are fixed, so snapshots are the same at every run."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Config, Store
from store.anchors.anchoring import anchor_memory
from store.engine.clock import FrozenClock
from store.anchors.verify import verify
from tests.git_support import REFUND, Repo
from tui.app import MemdeckApp
from tui.testing import DEMO_NOW

STALE_ID = "mem-1772300000-aaaa"
FRESH_ID = "mem-1772300000-bbbb"
PLAIN_ID = "mem-1772300000-cccc"


@pytest.fixture
def anchored_repo(tmp_path) -> Repo:
    return build_anchored(tmp_path)


def build_anchored(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "shop")
    repo.write("billing/refund.py", REFUND)
    repo.write("billing/invoice.py", "def invoice(order):\n    return order.total\n")
    repo.commit("billing")
    clock = FrozenClock(DEMO_NOW - 86400)
    with Store.open(tmp_path / "anchored.db", project="shop", clock=clock, config=Config.defaults(),
                    project_root=repo.root) as store:
        store.add("Refunds exclude the payment provider's fees: the amount is total minus fees.",
                  type="constraint", confidence=0.9, memory_id=STALE_ID, scope="billing")
        anchor_memory(store, STALE_ID, ["billing/refund.py:2-3", "billing/invoice.py"])
        store.add("Invoices are plain order totals; tax is added by the payment provider.",
                  type="convention", confidence=0.7, memory_id=FRESH_ID, scope="billing")
        anchor_memory(store, FRESH_ID, ["billing/invoice.py:2"])
        store.add("Run the billing tests with `make test-billing`.", type="context", confidence=0.6,
                  memory_id=PLAIN_ID)
        repo.replace("billing/refund.py", "amount = order.total - order.fees", "amount = order.total")
        repo.commit("refund the fees too")
        clock.advance(days=1)
        verify(store)
    return repo


def anchored_app(repo: Repo) -> MemdeckApp:
    store = Store.open(repo.root.parent / "anchored.db", project="shop", clock=FrozenClock(DEMO_NOW),
                       config=Config.defaults(), project_root=repo.root)
    return MemdeckApp(store=store, live=False, still=True)


def store_path(repo: Repo) -> Path:
    return repo.root.parent / "anchored.db"
