"""`memdeck demo`'s store holds nothing in the future, and every piece of evidence and every log
entry is stamped inside the session it names."""

from __future__ import annotations

from datetime import datetime, timezone

from store.engine.config import Config
from store.engine.core import Store
from store.demo import MAIN_PROJECT, build_demo
from tui.cli.ui import demo_now


def test_the_demo_now_is_never_after_the_time_it_was_built():
    morning = datetime(2026, 3, 1, 8, 30, 15, tzinfo=timezone.utc).timestamp()
    assert demo_now(morning) <= morning and morning - demo_now(morning) < 60


def test_nothing_in_the_demo_is_in_the_future_or_outside_its_session(tmp_path):
    now = datetime(2026, 3, 1, 8, 30, tzinfo=timezone.utc).timestamp()
    path = build_demo(tmp_path / "demo.db", now=now)
    with Store.open(path, project=MAIN_PROJECT, config=Config.defaults()) as store:
        sql = store.db.execute_sql
        for column in ("created_at", "updated_at", "last_used_at", "status_changed_at"):
            assert sql(f"SELECT COUNT(*) FROM memory WHERE {column} > ?", (now,)).fetchone()[0] == 0, column
        assert sql("SELECT COUNT(*) FROM event WHERE at > ?", (now,)).fetchone()[0] == 0
        sessions = {sid: (start, end) for sid, start, end in sql("SELECT id, started_at, ended_at FROM session")}
        outside = sql("SELECT a.session_id, a.kind, a.at FROM activity a JOIN session s ON s.id = a.session_id "
                      "WHERE a.at < s.started_at OR a.at > s.ended_at").fetchall()
        assert outside == []
        for (meta,) in sql("SELECT meta FROM memory WHERE status = 'pending'"):
            import json

            for evidence in json.loads(meta or "{}").get("evidence", []):
                if evidence.get("session"):
                    start, end = sessions[evidence["session"]]
                    assert start <= evidence["at"] <= end, evidence
