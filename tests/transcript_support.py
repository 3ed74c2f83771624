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
    return dict(Counter(a.kind for a in store.sessions.activities(session_id)))


class Conversation:
    """A Claude Code transcript written by a test, one call at a time, in the test's own words:
    `said` (the user), `replied` (the agent), `called` and `answered` (a tool call and its result),
    `stopped` (the user interrupts). `lines` are 1-based, as the ingest numbers them."""

    def __init__(self, session: str = "own-words", cwd: str = "/home/dev/app") -> None:
        self.session, self.cwd, self.records = session, cwd, []

    def _add(self, kind: str, content) -> int:
        n = len(self.records) + 1
        self.records.append({"type": kind, "sessionId": self.session, "cwd": self.cwd, "isSidechain": False,
                             "uuid": f"{self.session}-{n}", "timestamp": f"2026-02-01T10:{n // 60:02d}:{n % 60:02d}Z",
                             "message": {"role": kind, "content": content}})
        return n

    def said(self, text: str) -> int:
        return self._add("user", text)

    def replied(self, text: str) -> int:
        return self._add("assistant", [{"type": "text", "text": text}])

    def called(self, tool: str, **tool_input) -> int:
        return self._add("assistant", [{"type": "tool_use", "id": f"call{len(self.records) + 1}", "name": tool,
                                        "input": tool_input}])

    def answered(self, output: str, error: bool = False) -> int:
        call = next(r for r in reversed(self.records) if r["type"] == "assistant"
                    and r["message"]["content"][0]["type"] == "tool_use")["message"]["content"][0]["id"]
        return self._add("user", [{"type": "tool_result", "tool_use_id": call, "content": output, "is_error": error}])

    def stopped(self) -> int:
        return self._add("user", [{"type": "text", "text": "[Request interrupted by user]"}])

    def noted(self, text: str) -> int:
        """A system record: Claude Code's note that a hook ran ("PreToolUse:Bash [...] completed successfully")."""
        n = len(self.records) + 1
        self.records.append({"type": "system", "sessionId": self.session, "cwd": self.cwd, "isSidechain": False,
                             "uuid": f"{self.session}-{n}", "timestamp": f"2026-02-01T10:{n // 60:02d}:{n % 60:02d}Z",
                             "content": text, "isMeta": False, "level": "info"})
        return n

    def write(self, path):
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path
