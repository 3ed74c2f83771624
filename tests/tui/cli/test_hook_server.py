"""The hook server (`memdeck hook serve`) and the warm path of the prompt and session-start hooks,
as real processes: a server started as a process, the hook run as Claude Code and the other
agents run it. What the server answers is byte for byte what the hook's own process prints, and a
served session start writes the store as its own process does (the agent's process it records
is the asking hook's parent); it sees what was written after it started; a hook that finds no
server, a stale socket or a killed server runs in its own process, as before; the server leaves
no socket behind when it ends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from store import Config, FrozenClock, Store
from tests.cli_support import memdeck_command
from tests.data_support import DATA, worked_on
from tui.cli import hook_wire

pytestmark = pytest.mark.slow

READY_S = 120.0  # longer than any start on a loaded machine; only a server that never starts meets it
PROMPT = "Why do webhook deliveries time out after a retry?"


def claude(prompt: str | None = PROMPT, session: str = "sess-warm", cwd: Path | str = "/") -> bytes:
    """Exactly the fields Claude Code sends a UserPromptSubmit hook."""
    payload = {"session_id": session, "transcript_path": "/nonexistent/t.jsonl", "cwd": str(cwd),
               "permission_mode": "default", "hook_event_name": "UserPromptSubmit"}
    if prompt is not None:
        payload["prompt"] = prompt
    return json.dumps(payload).encode()


def agent_payload(name: str, cwd: Path) -> bytes:
    text = (DATA / "agents" / name).read_text(encoding="utf-8")
    return text.replace("@CWD@", str(cwd)).replace("@TRANSCRIPT@", "").encode()


@pytest.fixture
def runtime():
    """A short folder for the sockets (a socket's path holds about 100 bytes; pytest's are long)."""
    folder = tempfile.mkdtemp(prefix="mdk-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def stocked(db_path):
    """The test's store, with a memory about webhooks among unrelated ones."""
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        store.add("Webhook deliveries retry three times with exponential backoff; the retry timeout "
                  "is 30 seconds per webhook delivery.", type="pattern")
        store.add("The payment retry loop backs off exponentially from 1 s", type="pattern", confidence=0.9)
        store.add("Payments go through the ledger service, never straight to the DB", type="constraint",
                  confidence=0.95)
        for text in ("Invoices are numbered per tenant and year.", "The PDF renderer needs the fonts folder mounted."):
            store.add(text, type="convention")
    return db_path


class Servers:
    """Hook servers of one test, each ended when the test ends: those it started itself, and those
    a hook started (found by their sockets in the test's own folder)."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd
        self.started: list[subprocess.Popen] = []
        self.wheres: list[hook_wire.Where] = []

    def where(self, db: Path | str) -> hook_wire.Where:
        where = hook_wire.Where(str(db), self.env)
        self.wheres.append(where)
        return where

    def start(self, db: Path | str, *args: str, ready: bool = True) -> subprocess.Popen:
        """`memdeck --db DB hook serve ARGS` as a process; once it answers, with `ready`."""
        where = self.where(db)
        self.log = self.cwd / f"server-{len(self.started)}.log"
        with open(self.log, "wb") as log:
            process = subprocess.Popen([*memdeck_command(), "--db", str(db), "hook", "serve", *args], env=self.env,
                                       cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self.started.append(process)
        if ready:
            self.wait_ready(where, process)
        return process

    def wait_ready(self, where: hook_wire.Where, process: subprocess.Popen | None = None) -> dict:
        deadline = time.monotonic() + READY_S
        while True:
            try:
                return hook_wire.ask(where.socket, "status")["status"]
            except OSError:
                pass
            if process is not None and process.poll() is not None:
                raise AssertionError(f"the server exited {process.returncode} before it served")
            assert time.monotonic() < deadline, "the hook server did not start"
            time.sleep(0.05)

    def status(self, db: Path | str) -> dict:
        return hook_wire.ask(self.where(db).socket, "status")["status"]

    def stop_all(self) -> None:
        folder = Path(hook_wire.folder(self.env))
        for path in sorted(folder.glob("*.sock")) if folder.is_dir() else ():
            try:
                pid = hook_wire.ask(str(path), "status")["status"]["pid"]
            except OSError:
                continue
            os.kill(pid, signal.SIGTERM)
            _wait_gone(pid)
        for process in self.started:
            if process.poll() is None:
                process.terminate()
            process.wait(timeout=60)


def _wait_gone(pid: int) -> None:
    """Until the process `pid` (not this one's child) has ended: gone, or a zombie."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not end")


@pytest.fixture
def servers(runtime, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MEMDECK_NO_SERVE", "MEMDECK_DB")}
    env["XDG_RUNTIME_DIR"] = runtime
    made = Servers(env, tmp_path)
    yield made
    made.stop_all()


def hook(env: dict, db: Path | str, payload: bytes, *args: str, cold: bool = False, cwd: Path | None = None,
         which: str = "user-prompt-submit", **extra: str) -> subprocess.CompletedProcess:
    """`memdeck hook WHICH ARGS` (the prompt hook unless said) as an agent runs it, on the store
    `db`; `cold`: with the warm path off (MEMDECK_NO_SERVE=1), as the hook ran before."""
    env = {**env, "MEMDECK_DB": str(db), **extra, **({"MEMDECK_NO_SERVE": "1"} if cold else {})}
    return subprocess.run([*memdeck_command(), "hook", which, *args], input=payload,
                          capture_output=True, env=env, cwd=cwd or "/", timeout=120)


def twin(db: Path, tmp_path: Path) -> Path:
    """A copy of the store, for the hook's own process to answer from."""
    copy = tmp_path / "twin.db"
    shutil.copy(db, copy)
    return copy


def test_the_servers_answer_is_byte_for_byte_the_hooks_own(servers, stocked, tmp_path):
    """Each prompt hook is run twice from the same state: through the server on the store, and in
    its own process on a copy; exit code, stdout and stderr are the same bytes, answer or refusal."""
    cold_db = twin(stocked, tmp_path)
    servers.start(stocked)
    cases = [
        ((), claude(cwd=tmp_path)),
        ((), claude(cwd=tmp_path)),  # the session has these memories now: nothing
        ((), claude("Add bluetooth pairing for android tablets", session="sess-other", cwd=tmp_path)),
        (("--budget", "60", "--hat", "creator"), claude(session="sess-budget", cwd=tmp_path)),
        ((), claude(None, cwd=tmp_path)),  # no prompt: one line on stderr, exit 0
        ((), b"not json at all"),
        ((), b'{"prompt": "caf\xe9"}'),  # not UTF-8
        ((), b" " * (2 << 20)),  # more than the hook reads
        ((), b""),
        (("--agent", "codex"), agent_payload("codex/user-prompt-submit.json", tmp_path)),
        (("--agent", "gemini"), agent_payload("gemini/before-agent.json", tmp_path)),
        (("--agent", "cursor"), agent_payload("cursor/before-submit-prompt.json", tmp_path)),
    ]
    for args, payload in cases:
        warm = hook(servers.env, stocked, payload, *args)
        cold = hook(servers.env, cold_db, payload, *args, cold=True)
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr), args
    assert b"Webhook deliveries retry three times" in hook(servers.env, cold_db, claude(session="s-9"), cold=True).stdout
    assert servers.status(stocked)["answered"] == len(cases)  # every one was the server's


def test_a_memory_and_a_setting_written_after_the_server_started_are_seen(servers, stocked, tmp_path):
    servers.start(stocked)
    kafka = claude("Why does the kafka consumer lag behind?", session="sess-k", cwd=tmp_path)
    assert b"kafka" not in hook(servers.env, stocked, kafka).stdout
    with Store.open(stocked, project="demo", config=Config.defaults()) as store:
        store.add("The kafka consumer lags when its partition count is below the worker count.", type="pitfall")
    seen = hook(servers.env, stocked, kafka.replace(b"sess-k", b"sess-k2"))
    assert b"kafka consumer lags" in seen.stdout, seen.stderr
    # A config file the server had not read before: read at the next hook, as a hook's own
    # process reads it (here one it refuses, in one line).
    config = tmp_path / "config-home" / "memdeck" / "config.yml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("injection:\n  prompt_budget: many\n", encoding="utf-8")
    refused = hook(servers.env, stocked, kafka.replace(b"sess-k", b"sess-k3"))
    own = hook(servers.env, stocked, kafka.replace(b"sess-k", b"sess-k3"), cold=True)
    assert refused.stderr.startswith(b"memdeck hook: ") and b"prompt_budget" in refused.stderr
    assert (refused.returncode, refused.stdout, refused.stderr) == (own.returncode, own.stdout, own.stderr)
    assert servers.status(stocked)["answered"] == 3


def test_a_stale_socket_and_a_killed_server_leave_the_hook_to_its_own_process(servers, stocked, tmp_path):
    env = {**servers.env, "MEMDECK_SERVE_VERBOSE": "1"}
    cold_db = twin(stocked, tmp_path)
    where = servers.where(stocked)
    os.makedirs(where.folder, mode=0o700)
    # A socket file no server listens on, as a server killed with SIGKILL leaves it.
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(where.socket)
    left.close()
    prompt = claude(cwd=tmp_path)
    fell_back = hook(env, stocked, prompt, MEMDECK_SERVE_VERBOSE="1")
    cold = hook(env, cold_db, prompt, cold=True)
    assert fell_back.returncode == cold.returncode == 0 and fell_back.stdout == cold.stdout != b""
    assert fell_back.stderr.startswith(b"memdeck hook: the hook server did not answer")
    assert fell_back.stderr.count(b"\n") == 1
    # The hook that found none started one (the stale socket removed), as the next prompt finds.
    status = servers.wait_ready(where)
    os.kill(status["pid"], signal.SIGKILL)
    _wait_gone(status["pid"])
    assert os.path.exists(where.socket)  # SIGKILL leaves it
    again = claude(session="sess-2", cwd=tmp_path)
    after_kill = hook(servers.env, stocked, again)
    assert after_kill.returncode == 0 and b"Webhook deliveries retry three times" in after_kill.stdout
    assert after_kill.stdout == hook(servers.env, cold_db, again, cold=True).stdout


def test_the_server_ends_when_idle_or_told_and_takes_its_socket_along(servers, stocked):
    where = servers.where(stocked)
    idle = servers.start(stocked, "--idle", "0.5", ready=False)
    assert idle.wait(timeout=READY_S) == 0
    log = servers.log.read_text()
    assert "serving" in log and "exiting: no hook for 0.5 s" in log
    assert not os.path.exists(where.socket)
    for sig in (signal.SIGTERM, signal.SIGINT):
        server = servers.start(stocked)
        server.send_signal(sig)
        assert server.wait(timeout=READY_S) == 0
        assert not os.path.exists(where.socket)
    server = servers.start(stocked)
    stop = subprocess.run([*memdeck_command(), "--db", str(stocked), "hook", "serve", "--stop"], env=servers.env,
                          capture_output=True, text=True, timeout=120)
    assert stop.returncode == 0 and "stopping" in stop.stderr
    assert server.wait(timeout=READY_S) == 0
    status = subprocess.run([*memdeck_command(), "--db", str(stocked), "hook", "serve", "--status"],
                            env=servers.env, capture_output=True, text=True, timeout=120)
    assert status.returncode == 4 and "no hook server runs" in status.stderr


def test_only_the_user_may_reach_the_socket(servers, stocked):
    servers.start(stocked)
    where = servers.where(stocked)
    assert stat.S_IMODE(os.lstat(where.folder).st_mode) == 0o700
    found = os.lstat(where.socket)
    assert stat.S_ISSOCK(found.st_mode) and stat.S_IMODE(found.st_mode) == 0o600
    assert found.st_uid == os.getuid()


def test_a_folder_others_may_enter_is_neither_served_from_nor_asked(servers, stocked, tmp_path):
    where = servers.where(stocked)
    os.makedirs(where.folder, mode=0o755)
    os.chmod(where.folder, 0o755)
    server = subprocess.run([*memdeck_command(), "--db", str(stocked), "hook", "serve"], env=servers.env,
                            capture_output=True, text=True, timeout=120)
    assert server.returncode == 2 and "not safe" in server.stderr and "mode 755" in server.stderr
    # A socket someone put there is not asked: what it says would go into the agent's prompt.
    planted = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    planted.bind(where.socket)
    planted.listen(1)
    try:
        result = hook(servers.env, stocked, claude(cwd=tmp_path), MEMDECK_SERVE_VERBOSE="1")
        planted.settimeout(0)
        with pytest.raises(BlockingIOError):
            planted.accept()
    finally:
        planted.close()
    assert result.returncode == 0 and b"Webhook deliveries retry three times" in result.stdout
    assert b"may be entered by other users" in result.stderr


def test_the_session_start_hook_starts_one_detached_and_the_prompt_hook_uses_it(servers, stocked, tmp_path):
    start = subprocess.run([*memdeck_command(), "hook", "session-start"], env={**servers.env, "MEMDECK_DB": str(stocked)},
                           input=claude(cwd=tmp_path).replace(b"UserPromptSubmit", b"SessionStart"),
                           capture_output=True, timeout=120, cwd="/")
    # `run` read the hook's stdout and stderr to their end: the server keeps neither open.
    assert start.returncode == 0 and b"Payments go through the ledger service" in start.stdout
    where = servers.where(stocked)
    status = servers.wait_ready(where)
    parent = int(Path(f"/proc/{status['pid']}/stat").read_text().rsplit(")", 1)[1].split()[1])
    assert parent != os.getpid()  # not this process's child: the hook's, gone, was its grandparent
    assert hook(servers.env, stocked, claude(cwd=tmp_path)).returncode == 0
    assert servers.status(stocked)["answered"] == 1
    # It runs in a session of its own, in /, its stdin and stdout /dev/null, its stderr its log.
    assert os.getsid(status["pid"]) != os.getsid(0)
    assert os.readlink(f"/proc/{status['pid']}/cwd") == "/"
    assert [os.readlink(f"/proc/{status['pid']}/fd/{fd}") for fd in (0, 1, 2)] == ["/dev/null", "/dev/null", where.log]


def claude_start(source: str = "startup", session: str = "sess-start", cwd: Path | str = "/") -> bytes:
    """Exactly the fields Claude Code sends a SessionStart hook; `source`: startup, resume, clear
    (a new session id) or compact."""
    return json.dumps({"session_id": session, "transcript_path": "/nonexistent/t.jsonl", "cwd": str(cwd),
                       "hook_event_name": "SessionStart", "source": source}).encode()


def written(db: Path) -> dict:
    """What the hooks wrote to a store, without what the clock alone decides (times, and a
    decayed confidence's last digits): the sessions (the agent's processes among them), their
    logs, and each memory's confidence, status, uses and events."""
    conn = sqlite3.connect(db)
    try:
        return {
            "sessions": conn.execute(
                "SELECT s.id, p.name, s.agent, s.hat, s.task, s.ended_at IS NULL, s.source_path, s.files_touched, "
                "s.meta FROM session s JOIN project p ON p.id = s.project_id ORDER BY s.id").fetchall(),
            "activities": conn.execute(
                "SELECT session_id, seq, kind, summary, memory_id, detail FROM activity "
                "ORDER BY session_id, seq").fetchall(),
            "memories": conn.execute(
                "SELECT id, round(confidence, 4), status, use_count, last_used_at IS NULL, version FROM memory "
                "ORDER BY id").fetchall(),
            "events": conn.execute(
                "SELECT memory_id, kind, actor, session_id, round(confidence_before, 4), round(confidence_after, 4), author "
                "FROM event ORDER BY memory_id, id").fetchall(),
        }
    finally:
        conn.close()


def test_a_served_session_start_is_its_own_process_byte_for_byte_and_in_the_store(servers, stocked, tmp_path):
    """A second session start on the store (a new session, a resume, a /clear, a compaction; each
    agent's) is answered by the server the first one started: exit code, stdout and stderr are
    those of the hook's own process on a copy of the store, and so is what it writes there: the
    session recorded with the agent's process (the hook's parent and grandparent, not the
    server's), the memories it shows, and decay. It starts no other server."""
    with Store.open(stocked, project="demo", config=Config.defaults(),
                    clock=FrozenClock(time.time() - 200 * 86400)) as store:
        old = store.add("The staging cluster is rebuilt every sunday night", type="context").memory.id
        worked_on(store, store.now(), 200)  # decay counts the days the project was worked on
    cold_db = twin(stocked, tmp_path)
    # The store's first session start runs in its own process, and starts the server; here in
    # another project, so that the demo project's decay is left to the served session starts.
    first = [hook(servers.env, db, claude_start(session="sess-first", cwd=tmp_path), which="session-start", cold=cold,
                  MEMDECK_PROJECT="other") for db, cold in ((stocked, False), (cold_db, True))]
    assert first[0].returncode == 0 and (first[0].stdout, first[0].stderr) == (first[1].stdout, first[1].stderr)
    where = servers.where(stocked)
    server = servers.wait_ready(where)
    assert server["answered"] == 0
    codex, gemini = (agent_payload(f"{name}/session-start.json", tmp_path) for name in ("codex", "gemini"))
    cases = [
        ((), claude_start("startup", cwd=tmp_path)),
        ((), claude_start("resume", cwd=tmp_path)),
        ((), claude_start("compact", cwd=tmp_path)),
        ((), claude_start("clear", session="sess-cleared", cwd=tmp_path)),
        (("--task", "webhook delivery retries", "--hat", "creator"), claude_start(session="sess-task", cwd=tmp_path)),
        (("--budget", "60"), claude_start(session="sess-budget", cwd=tmp_path)),
        (("--agent", "codex"), codex),
        (("--agent", "codex"), codex.replace(b'"startup"', b'"resume"')),
        (("--agent", "gemini"), gemini),
        (("--agent", "gemini"), gemini.replace(b'"startup"', b'"resume"')),
        (("--agent", "gemini"), gemini.replace(b'"startup"', b'"clear"').replace(b"6f0c2b8e", b"7a1d3c9f")),
        (("--agent", "cursor"), agent_payload("cursor/session-start.json", tmp_path)),
    ]
    malformed = [(args, payload) for args in ((), ("--agent", "codex"), ("--agent", "gemini"), ("--agent", "cursor"))
                 for payload in (b"not json at all", b'{"cwd": "caf\xe9"}', b"[1, 2]", b" " * (2 << 20))]
    answers = []
    for args, payload in cases + malformed:
        warm = hook(servers.env, stocked, payload, *args, which="session-start")
        answers.append(warm.stdout)
        cold = hook(servers.env, cold_db, payload, *args, which="session-start", cold=True)
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr), args
        assert warm.returncode == 0, (args, warm.stderr)
        if (args, payload) in malformed:
            assert warm.stderr.startswith(b"memdeck hook: ") and warm.stderr.count(b"\n") == 1, (args, warm.stderr)
        else:
            assert warm.stderr == b"" and len(warm.stdout.decode()) <= 10_000, (args, warm.stderr)
    assert b"Payments go through the ledger service" in answers[0]
    # Every one was the server's, and no other server was started beside it.
    after = servers.status(stocked)
    assert (after["pid"], after["answered"]) == (server["pid"], len(cases) + len(malformed))
    assert sorted(os.listdir(where.folder)) == sorted(os.path.basename(path) for path in (where.socket, where.lock, where.log))
    served, own = written(stocked), written(cold_db)
    assert served == own
    # The agent's process recorded is the hook's parent (this test) and grandparent, in both.
    sessions = {row[0]: json.loads(row[-1]) for row in served["sessions"]}
    for session in ("sess-start", "sess-cleared", "sess-task", "019a7c2e-5d1b-7f30-9b64-2f1c0e8d4a11",
                    "7a1d3c9f-4a7d-4c1e-9d35-0b8e2f71c9aa", "c2f6e1d4-8b3a-4f0e-a7c9-51d2e0b4f6a3"):
        assert sessions[session]["pids"] == [os.getpid(), os.getppid()], session
    assert server["pid"] not in {pid for meta in sessions.values() for pid in meta.get("pids", ())}
    # The demo project's decay ran in a served session start.
    assert [event[1] for event in served["events"] if event[0] == old] == ["created", "decayed"]


def test_a_served_session_start_starts_no_server(servers, stocked, tmp_path):
    """The hook the server runs is answered by a server already: it starts none, even where the
    hook's own environment names a socket folder no server is in."""
    servers.start(stocked)
    where = servers.where(stocked)
    elsewhere = tempfile.mkdtemp(prefix="mdk-")
    try:
        conn = hook_wire.connect(where.socket)
        deadline = time.monotonic() + 60
        request = {"op": "hook", "protocol": hook_wire.PROTOCOL, "code": hook_wire.code_identity(),
                   "store": where.store, "argv": ["hook", "session-start"], "cwd": str(tmp_path), "umask": 0o022,
                   "env": {**servers.env, "MEMDECK_DB": str(stocked), "XDG_RUNTIME_DIR": elsewhere},
                   "streams": {"stdout": ["utf-8", "strict", False], "stderr": ["utf-8", "backslashreplace", False]},
                   "stdin": {"none": False, "problem": None}, "ancestors": [os.getpid()]}
        hook_wire.send_json(conn, request, deadline)
        hook_wire.send_frame(conn, claude_start(cwd=tmp_path), deadline)
        assert hook_wire.recv_json(conn, 1 << 16, deadline)["ready"] is True
        hook_wire.send_frame(conn, b"go", deadline)
        assert hook_wire.recv_json(conn, 1 << 16, deadline)["exit"] == 0
        assert b"Payments go through the ledger service" in hook_wire.recv_frame(conn, 1 << 20, deadline)
        assert hook_wire.recv_frame(conn, 1 << 20, deadline) == b""
        conn.close()
        # The hook's own process would have made the folder there (and started a server in it).
        assert os.listdir(elsewhere) == []
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)
    with Store.open(stocked, project="demo", config=Config.defaults()) as store:
        assert store.sessions.get("sess-start").meta["pids"] == [os.getpid()]


@pytest.mark.parametrize("off", [{"MEMDECK_NO_SERVE": "1"}, {"config": "sessions:\n  hook_server_minutes: 0\n"}])
def test_none_is_started_when_it_is_off(servers, stocked, tmp_path, off):
    env = {**servers.env, "MEMDECK_DB": str(stocked)}
    if "config" in off:
        config = tmp_path / "config-home" / "memdeck" / "config.yml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(off["config"], encoding="utf-8")
    else:
        env.update(off)
    start = subprocess.run([*memdeck_command(), "hook", "session-start"], env=env,
                           input=claude(cwd=tmp_path).replace(b"UserPromptSubmit", b"SessionStart"),
                           capture_output=True, timeout=120, cwd="/")
    assert start.returncode == 0
    assert not os.path.exists(servers.where(stocked).lock)


def test_a_project_file_cannot_start_or_keep_one(tmp_path):
    """A cloned repository's `.memdeck.yml` does not decide what runs on this machine."""
    (tmp_path / ".memdeck.yml").write_text("sessions:\n  hook_server_minutes: 1440\n", encoding="utf-8")
    assert Config.load(tmp_path).sessions.hook_server_minutes == 10


def test_a_client_of_other_code_is_refused_and_the_server_makes_way(servers, stocked):
    server = servers.start(stocked)
    where = servers.where(stocked)
    conn = hook_wire.connect(where.socket)
    deadline = time.monotonic() + 60
    hook_wire.send_json(conn, {"op": "status", "protocol": hook_wire.PROTOCOL, "code": ["/other/venv", "x", "/other"]},
                        deadline)
    hook_wire.send_frame(conn, b"", deadline)
    assert "other code" in hook_wire.recv_json(conn, 1 << 16, deadline)["refused"]
    conn.close()
    assert server.wait(timeout=READY_S) == 0 and not os.path.exists(where.socket)


def test_a_request_is_refused_unless_it_is_a_served_hook_on_this_store(servers, stocked, tmp_path):
    servers.start(stocked)
    where = servers.where(stocked)
    base = {"op": "hook", "protocol": hook_wire.PROTOCOL, "code": hook_wire.code_identity(), "store": where.store,
            "argv": ["hook", "user-prompt-submit"], "cwd": str(tmp_path), "umask": 0o022,
            "env": {**servers.env, "MEMDECK_DB": str(stocked)},
            "streams": {"stdout": ["utf-8", "strict", False], "stderr": ["utf-8", "backslashreplace", False]},
            "stdin": {"none": False, "problem": None}, "ancestors": [os.getpid(), os.getppid()]}
    other = str(tmp_path / "other.db")
    for change, why in (({"argv": ["delete", "--all"]}, "not a hook"),
                        ({"argv": ["hook", "stop"]}, "not a hook"),
                        ({"argv": ["hook", "user-prompt-submit", "--help"]}, "not a hook"),
                        ({"argv": ["hook", "session-start", "--help"]}, "not a hook"),
                        ({"argv": ["hook", "user-prompt-submit", "--task", "x"]}, "not a hook"),
                        ({"argv": ["--db", other, "hook", "user-prompt-submit"]}, "another store"),
                        ({"env": {**base["env"], "MEMDECK_DB": other}}, "another store"),
                        ({"cwd": "relative/folder"}, "no folder"),
                        ({"env": {"A=B": "c"}}, "no environment"),
                        ({"streams": {"stdout": ["no-such-codec", "strict", False]}}, "no streams"),
                        ({"umask": "022"}, "no umask"),
                        ({"ancestors": None}, "no ancestors"),
                        ({"ancestors": []}, "no ancestors"),
                        ({"ancestors": [True]}, "no ancestors"),
                        ({"ancestors": [1, 2, 3]}, "no ancestors"),
                        ({"ancestors": [-1]}, "no ancestors")):
        conn = hook_wire.connect(where.socket)
        deadline = time.monotonic() + 60
        hook_wire.send_json(conn, {**base, **change}, deadline)
        hook_wire.send_frame(conn, claude(), deadline)
        assert why in hook_wire.recv_json(conn, 1 << 16, deadline)["refused"], change
        conn.close()
    # A header past the limit is not read: the connection is closed, and the server goes on.
    conn = hook_wire.connect(where.socket)
    conn.sendall((hook_wire.MAX_HEADER + 1).to_bytes(4, "big"))
    assert conn.recv(16) == b""
    conn.close()
    assert servers.status(stocked)["answered"] == 0


@pytest.mark.parametrize(("which", "payload", "shown"), [
    ("user-prompt-submit", claude(cwd="@CWD@"), b"Webhook deliveries retry three times"),
    ("session-start", claude_start(cwd="@CWD@"), b"Payments go through the ledger service"),
])
def test_a_served_hook_imports_nothing_of_the_store(servers, stocked, tmp_path, which, payload, shown):
    servers.start(stocked)
    probe = (f"import json, sys; sys.argv = ['memdeck', 'hook', {which!r}]\n"
             "from tui.cli.main import main\n"
             "code = main()\n"
             "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('store', 'peewee', 'numpy', 'yaml', "
             "'rapidfuzz', 'argparse') or m in ('tui.cli.program', 'tui.cli.output'))\n"
             "print(json.dumps({'code': code, 'loaded': loaded}), file=sys.stderr)\n")
    done = subprocess.run([os.path.join(os.path.dirname(memdeck_command()[0]), "python"), "-c", probe],
                          input=payload.replace(b"@CWD@", str(tmp_path).encode()), capture_output=True,
                          env={**servers.env, "MEMDECK_DB": str(stocked)}, timeout=120)
    report = json.loads(done.stderr.decode().strip().splitlines()[-1])
    assert report == {"code": 0, "loaded": []}
    assert shown in done.stdout
    assert servers.status(stocked)["answered"] == 1


def test_only_the_prompt_and_session_start_hooks_are_offered_to_the_server():
    served = hook_wire.served_db
    assert served(["hook", "user-prompt-submit"]) is None
    assert served(["hook", "session-start"]) is None
    assert served(["--db", "/s.db", "--project=x", "hook", "user-prompt-submit", "--agent", "codex", "--hat=h"]) == "/s.db"
    assert served(["--db=/s.db", "hook", "session-start", "--agent=gemini", "--task", "refunds", "--budget", "9"]) == "/s.db"
    for argv in (["hook", "stop"], ["hook", "install"], ["hook", "serve"], ["hook"], ["prime"],
                 ["hook", "user-prompt-submit", "--help"], ["hook", "session-start", "-h"],
                 ["hook", "user-prompt-submit", "--ag", "codex"], ["hook", "user-prompt-submit", "--agent", "emacs"],
                 ["hook", "session-start", "--agent", "emacs"], ["hook", "user-prompt-submit", "--task", "x"],
                 ["-h", "hook", "user-prompt-submit"], ["--db"], ["hook", "user-prompt-submit", "--budget"],
                 ["hook", "session-start", "--task"]):
        with pytest.raises(hook_wire.NotServed):
            served(argv)


def test_a_server_whose_store_was_replaced_makes_way(servers, stocked, tmp_path):
    """A copy put in the store's place (a restore): the server keeps things of the old file (the
    vectors it read), so it leaves the hook to its own process, and exits."""
    server = servers.start(stocked)
    replacement = tmp_path / "replacement.db"
    shutil.copy(stocked, replacement)
    os.replace(replacement, stocked)
    result = hook(servers.env, stocked, claude(cwd=tmp_path), MEMDECK_SERVE_VERBOSE="1")
    assert result.returncode == 0 and b"Webhook deliveries retry three times" in result.stdout
    assert b"its store was replaced" in result.stderr
    assert server.wait(timeout=READY_S) == 0


def test_a_server_whose_code_changed_on_disk_makes_way(tmp_path, monkeypatch):
    """An upgrade or a checkout changed a module the server runs: it says so, and exits."""
    import sys
    import types

    from tui.cli import hook_server

    module = tmp_path / "tui" / "changed.py"
    module.parent.mkdir()
    module.write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(hook_wire, "CODE_ROOT", str(tmp_path))
    monkeypatch.setitem(sys.modules, "tui_changed_for_test", types.SimpleNamespace(__file__=str(module)))
    server = hook_server.Server(hook_wire.Where(str(tmp_path / "s.db")), 60)
    server.started_ns = module.stat().st_mtime_ns
    assert server._changed_code() is None
    os.utime(module, ns=(server.started_ns + 10**9, server.started_ns + 10**9))
    assert server._changed_code() == str(module)
