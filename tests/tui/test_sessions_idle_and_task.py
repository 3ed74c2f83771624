"""A session the session-start hook opened and nothing stopped stops being live after
`sessions.idle_minutes`, on the sessions screen too; the task column shows the first user prompt
of a session started without a task."""

from __future__ import annotations

import json

from ui_support import demo_db, demo_template  # noqa: F401 (fixtures)

from store.engine import session_log
from store.engine.clock import FrozenClock
from store.engine.config import Config
from store.engine.core import Store
from store.demo import MAIN_PROJECT
from store.capture.ingest import IngestOptions, ingest_file
from tui.screens import sessions as sessions_screen
from tui.screens.sessions import SessionTable
from tui.testing import DEMO_NOW, demo_app, settle
from ui_support import pilot_test


def test_a_hook_session_is_live_until_idle_and_says_its_first_prompt(tmp_path, run_cli, db_path):
    payload = json.dumps({"session_id": "hook-only", "cwd": str(tmp_path), "hook_event_name": "SessionStart"})
    run_cli("add", "Retry backoff caps at 30 s", "--type", "fix", check=True, cwd=tmp_path)
    run_cli("hook", "session-start", input=payload, check=True, cwd=tmp_path)
    with Store.open(db_path, config=Config.defaults()) as store:
        (found,) = [s for s in session_log.summaries(store, project=store.project) if s.session.id == "hook-only"]
        assert found.live
    idle = 60 * float(Config.defaults().sessions.idle_minutes)
    clock = FrozenClock(found.session.started_at + idle + 1)
    with Store.open(db_path, clock=clock, config=Config.defaults()) as store:
        (found,) = [s for s in session_log.summaries(store) if s.session.id == "hook-only"]
        assert not found.live and found.ended_at == found.last_at


def _transcript(path, session_id: str, prompt: str) -> None:
    lines = [{"type": "user", "sessionId": session_id, "uuid": "p0", "timestamp": "2026-03-01T11:00:00Z",
              "message": {"role": "user", "content": prompt}},
             {"type": "assistant", "sessionId": session_id, "uuid": "a0", "timestamp": "2026-03-01T11:00:05Z",
              "message": {"role": "assistant", "content": [{"type": "text", "text": "On it."}]}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_the_first_prompt_is_the_task_of_a_session_without_one(tmp_path):
    with Store.open(tmp_path / "s.db", project="p", config=Config.defaults()) as store:
        _transcript(tmp_path / "t.jsonl", "no-task", "Make the feed reconnect with jitter")
        ingest_file(store, tmp_path / "t.jsonl", IngestOptions())
        (found,) = session_log.summaries(store)
        assert found.session.task is None and found.task == "Make the feed reconnect with jitter"
        assert found.to_json()["first_prompt"] == "Make the feed reconnect with jitter"


def test_the_sessions_screen_drops_live_once_idle_and_shows_the_prompt(demo_db, monkeypatch):
    monkeypatch.setattr(sessions_screen, "LIVE_RECHECK_SECONDS", 0.05)
    clock = FrozenClock(DEMO_NOW)
    with Store.open(demo_db, project=MAIN_PROJECT, clock=clock, config=Config.defaults()) as store:
        store.sessions.ensure("hooked", agent="claude-code", started_at=DEMO_NOW)
        store.db.execute_sql("INSERT INTO activity (session_id, seq, at, kind, summary) VALUES (?, 0, ?, 'prompt', ?)",
                             ("hooked", DEMO_NOW, "Find why the killmail feed stalls"))

    @pilot_test
    async def flow():
        app = demo_app(demo_db, clock=clock)
        async with app.run_test(size=(160, 45)) as pilot:
            await settle(pilot)
            app.open_sessions("hooked")
            await settle(pilot)
            table = app.screen.query_one(SessionTable)
            row = table._row_cells["hooked"]
            assert str(row["live"]) == "●" and str(row["task"]) == "Find why the killmail feed stalls"
            clock.advance(seconds=60 * float(app.store.config.sessions.idle_minutes) + 1)
            for _ in range(100):
                await pilot.pause(0.05)
                await settle(pilot)
                if str(table._row_cells["hooked"]["live"]) == "":
                    break
            assert str(table._row_cells["hooked"]["live"]) == ""

    flow()
