"""Transcripts for the ingest and hook tests: the real ones (in ../shared, and the project's own),
lines of Claude Code's format written by a test, a hook's JSON input, and a snapshot of
everything ingest writes, to compare before and after."""

from __future__ import annotations

import json
from collections import Counter

from tests.data_support import DATA, FIXTURES

TRANSCRIPTS = FIXTURES / "transcripts"
CLAUDE_2_1 = TRANSCRIPTS / "DRMacIver__claude-reliability__snapshot-tests__tests__coverage-test-fix__transcript.jsonl"
CLAUDE_1_0_108 = TRANSCRIPTS / "d-kimuson__claude-code-viewer__mock-global-claude-dir__projects__sample-project__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
SUBAGENT = TRANSCRIPTS / "d-kimuson__claude-code-viewer__mock-global-claude-dir__projects__sample-project__agent-test-hash-123.jsonl"
CLAUDE_1_0_98 = TRANSCRIPTS / "d-kimuson__claude-code-viewer__mock-global-claude-dir__projects__sample-project__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
# The project's own small transcript in Claude Code's format: a test fails, a file is edited, it passes.
OWN_TRANSCRIPT = DATA / "transcripts" / "fail-then-pass.jsonl"


def snapshot(store) -> tuple:
    """Everything ingest writes, to compare before and after."""
    rows = lambda sql: store.db.execute_sql(sql).fetchall()  # noqa: E731
    return (rows("SELECT id, confidence, status, tags, meta FROM memory ORDER BY id"),
            rows("SELECT memory_id, kind, confidence_after FROM event ORDER BY id"),
            rows("SELECT session_id, seq, kind, summary, memory_id FROM activity ORDER BY id"),
            rows("SELECT id, files_touched, meta FROM session ORDER BY id"))


def assistant_line(session: str, text: str, n: int = 0) -> str:
    return json.dumps({"type": "assistant", "sessionId": session, "uuid": f"u{n}",
                       "timestamp": "2026-02-01T10:00:00Z",
                       "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}})


def user_line(session: str, content, n: int = 0) -> str:
    return json.dumps({"type": "user", "sessionId": session, "uuid": f"p{n}", "timestamp": "2026-02-01T10:00:00Z",
                       "message": {"role": "user", "content": content}})


def hook_input(event: str, session_id: str, transcript, cwd, **extra) -> str:
    """What Claude Code writes to a hook's stdin."""
    return json.dumps({"session_id": session_id, "transcript_path": str(transcript), "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": event, **extra})


def kinds(store, session_id) -> dict[str, int]:
    """How many activities of each kind a session's log holds."""
    return dict(Counter(a.kind for a in store.activities(session_id)))
