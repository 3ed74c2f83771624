"""`restore` takes a memory out of the trash to the status it had, and to active when what an
import says it had is not a status a memory can be put back to."""

from __future__ import annotations

import json

import pytest

from store.interop.transfer import import_file

pytestmark = pytest.mark.both_backends


def test_a_memory_goes_back_to_the_status_it_had(store):
    memory = store.add("Retry the websocket with backoff", type="fix", status="pending").memory
    store.trash.delete([memory.id])
    (restored,) = store.trash.restore([memory.id])
    assert restored.status == "pending"


@pytest.mark.parametrize("before", ["stuck", "deleted", "", 7, None])
def test_an_imported_status_before_delete_that_is_no_status_restores_to_active(store, tmp_path, before):
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"memories": [{
        "id": "mem-20260301-a1b2", "content": "Retry the websocket with backoff", "type": "fix",
        "status": "deleted", "meta": {"status_before_delete": before}}]}))
    import_file(store, str(path))
    (restored,) = store.trash.restore(["mem-20260301-a1b2"])
    assert restored.status == "active"
    assert store.trash.memories() == []
