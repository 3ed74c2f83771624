"""Anchors from ingest: a marker's memory is anchored to the lines the session just edited and to
the `path:line` its text cites, checked against the files as they are."""

from __future__ import annotations

import json
from pathlib import Path

from store.anchors.anchoring import anchors_of
from store.capture.ingest import ingest_file
from store.capture.ingest.anchoring import _in_cwd, cited
from tests.anchor_support import code_store, repo  # noqa: F401 (fixtures)
from tests.transcript_support import assistant_line, user_line


def tool_use(session, tool_id, name, tool_input, n):
    return json.dumps({"type": "assistant", "sessionId": session, "uuid": f"a{n}", "cwd": "CWD",
                       "timestamp": "2026-02-01T10:00:00Z", "message": {"role": "assistant", "content": [
                           {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}})


def tool_result(session, tool_id, n, error=False):
    return user_line(session, [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok",
                                "is_error": error}], n)


def test_a_marker_is_anchored_to_the_lines_just_edited_and_the_lines_it_cites(code_store, repo, tmp_path):
    repo.write("README.md", "# shop!\n")
    root = str(repo.root)
    lines = [
        tool_use("s1", "t0", "Edit", {"file_path": f"{root}/README.md", "old_string": "# shop",
                                      "new_string": "# shop!"}, 0),
        tool_result("s1", "t0", 1),
        assistant_line("s1", "Tidied the readme.", 2),
        tool_use("s1", "t1", "Edit", {"file_path": f"{root}/billing/refund.py",
                                      "old_string": "x", "new_string": "    amount = order.total - order.fees\n"
                                                                       "    if amount <= 0:"}, 3),
        tool_result("s1", "t1", 4),
        tool_use("s1", "t2", "Edit", {"file_path": f"{root}/billing/invoice.py", "old_string": "x",
                                      "new_string": "gone"}, 5),
        tool_result("s1", "t2", 6, error=True),
        assistant_line("s1", "[MEMORY:constraint:billing] Refunds exclude fees; the invoice side is in "
                             "billing/invoice.py:1-2 and nope/missing.py:3.", 7),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines).replace("CWD", root) + "\n")
    report = ingest_file(code_store, path)
    (memory_id,) = report.created
    assert [a.spec for a in anchors_of(code_store, memory_id)] == ["billing/refund.py:3-4", "billing/invoice.py:1-2"]
    assert [e.kind for e in code_store.events(memory_id)] == ["created", "anchored"]


def test_a_written_file_is_anchored_whole_and_no_edit_no_anchor(code_store, repo, tmp_path):
    root = str(repo.root)
    lines = [
        tool_use("s2", "t1", "Write", {"file_path": f"{root}/billing/invoice.py", "content": "..."}, 0),
        tool_result("s2", "t1", 1),
        assistant_line("s2", "MEMORY:convention:Invoices are plain totals.", 2),
        assistant_line("s2", "MEMORY:convention:Orders carry their fees.", 3),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines).replace("CWD", root) + "\n")
    first, second = ingest_file(code_store, path).created
    assert [a.spec for a in anchors_of(code_store, first)] == ["billing/invoice.py"]
    assert anchors_of(code_store, second) == []


def test_citations_are_paths_with_an_extension_and_lines():
    assert [str(s) for s in cited("see src/a.py:10-20, lib/b.ts:3 and http://x.io:80 or v1.2:3 x.py:0")] == [
        "src/a.py:10-20", "lib/b.ts:3", "v1.2:3"]


def test_an_edited_file_is_placed_under_the_cwd_as_pathlib_places_it():
    # The placing is kept for the files edited lately: kept or not, it is pathlib's.
    cases = [("/w/app", "src/a.py"), ("/w/app/", "src/a.py"), ("/w//app", "./src//a.py"),
             ("/w/app", "/abs/b.py"), (None, "src/a.py"), ("", "src/a.py"), ("/w/app", "../up.py")]
    for _ in range(2):  # the second round is answered from what was kept
        for cwd, edited in cases:
            expected = str(Path(cwd) / edited) if cwd and not Path(edited).is_absolute() else edited
            assert _in_cwd(cwd, edited) == expected
