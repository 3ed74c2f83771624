"""One way to print: every line the command line writes goes through `tui.cli.output`, which spells
out control characters (an OSC 52 sequence in a hat would otherwise write the clipboard) and makes
bidi and zero-width characters visible; fields from outside are cleaned when ingest takes them in.
"""

from __future__ import annotations

import ast
import json
import os
import pty
import re
import subprocess

import pytest

from store import Config, Store
from store.engine.redaction import INVISIBLE
from tests.cli_support import memdeck_command
from tui.visible import one_line, visible
from tests.data_support import ROOT

CLI = ROOT / "tui" / "cli"
OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # sets the clipboard to `rm -rf ~`
HOSTILE = f"{OSC52}\u202etxt.exe\u200b\x9b31m"
# What must never reach a terminal raw: C0 (but newline and tab), DEL, C1, bidi and invisible.
RAW = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{INVISIBLE}]")


def writes_to_the_terminal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
        return "print()"
    if (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr", "__stdout__", "__stderr__")
            and isinstance(node.value, ast.Name) and node.value.id == "sys"):
        return f"sys.{node.attr}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write" \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "os":
        return "os.write()"
    return None


# The hook's warm path runs before `tui.cli.output` may be imported (it imports the store): these
# functions of it write the bytes the hook server's output module made, as they are, and the one
# line MEMDECK_SERVE_VERBOSE asks for.
BEFORE_OUTPUT = {"hook_wire.py": {"_asked", "_write", "_say"}}


def test_no_command_module_but_the_output_module_writes_to_stdout_or_stderr():
    offenders = []
    for path in sorted(CLI.glob("*.py")):
        if path.name == "output.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        exempt = {id(node) for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
                  and function.name in BEFORE_OUTPUT.get(path.name, ()) for node in ast.walk(function)}
        for node in ast.walk(tree):
            found = writes_to_the_terminal(node)
            if found and id(node) not in exempt:
                offenders.append(f"{path.name}:{node.lineno}: {found}")
    assert offenders == []


def test_visible_spells_out_controls_bidi_and_zero_width_and_keeps_text():
    assert visible(HOSTILE) == "\\x1b]52;c;cm0gLXJmIH4=\\x07\\u202etxt.exe\\u200b\\x9b31m"
    assert visible("tags\U000e0041\ufeff\u2066") == "tags\\U000e0041\\ufeff\\u2066"
    assert visible("line one\n\tindented — é 𝄞 中文") == "line one\n\tindented — é 𝄞 中文"
    assert one_line("a\nb\r\nc\td") == "a b c d"


@pytest.fixture
def hostile_store(db_path):
    """A store whose every field a command prints holds an escape sequence and invisible text."""
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        # memdeck refuses such a project name now; a store an older memdeck wrote may hold one.
        store.db.execute_sql("INSERT INTO project (name, root, created_at) VALUES (?, NULL, ?)",
                             (f"evil{HOSTILE}", store.now()))
        for project in ("demo", f"evil{HOSTILE}"):
            store.add(f"Content {HOSTILE} with a line\nand more", type="pattern", title=f"Title {HOSTILE}",
                      hat=f"hat{HOSTILE}", scope=f"scope{HOSTILE}", tags=[f"tag{HOSTILE}"],
                      session_id=f"sess{HOSTILE}", task=f"task{HOSTILE}", project=project, reinforce=False)
        pending = store.add(f"Pending {HOSTILE}", type="fix", hat=f"hat{HOSTILE}", status="pending",
                            session_id=f"sess{HOSTILE}").memory
        trashed = store.add(f"Trashed {HOSTILE}", type="fix", hat=f"hat{HOSTILE}").memory
        store.trash.delete([trashed.id])
        yield store, pending, trashed


def run_on_terminal(args: list[str], env: dict) -> str:
    """The command run with a terminal as its stdout and stderr, as a person runs it."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([*memdeck_command(), *args], stdin=subprocess.DEVNULL, stdout=follower,
                                   stderr=follower, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=120) in (0, 1)
    finally:
        os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


COMMANDS = [
    ["list"], ["list", "--all-projects"], ["search", "Content"], ["inbox"], ["trash"], ["stats"], ["projects"],
    ["export", "--format", "ralph"], ["export", "--format", "yaml"], ["export"], ["list", "--json"],
    ["prime", "--task", "content", "--explain"],
]


@pytest.mark.slow
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_hostile_values_in_every_field_reach_the_terminal_spelled_out(hostile_store, db_path, args):
    env = {**os.environ, "MEMDECK_DB": str(db_path), "MEMDECK_PROJECT": "demo"}
    shown = run_on_terminal(args, env)
    assert not RAW.search(shown), (args, shown)
    assert "\\u202e" in shown or "\\x1b" in shown or args[0] in ("stats", "prime"), (args, shown)


def test_show_spells_out_each_field(hostile_store, run_cli):
    store, pending, _ = hostile_store
    result = run_cli("show", pending.id)
    assert result.returncode == 0 and not RAW.search(result.stdout)
    assert "hat:        hat\\x1b]52;c;cm0gLXJmIH4=\\x07\\u202etxt.exe\\u200b\\x9b31m" in result.stdout


def test_json_output_escapes_what_a_terminal_would_act_on_and_keeps_the_data(hostile_store, run_cli):
    result = run_cli("list", "--json", "--all-projects")
    assert not RAW.search(result.stdout)
    assert "\\u202e" in result.stdout and "\\u001b]52" in result.stdout
    assert {m["hat"] for m in json.loads(result.stdout)} == {f"hat{HOSTILE}"}


def test_an_export_into_a_pipe_or_a_file_is_exact(hostile_store, run_cli, tmp_path):
    """Ralph's format has no escapes: into a pipe it goes as it is (a terminal gets it spelled
    out, above), so the file round-trips."""
    result = run_cli("export", "--format", "ralph")
    assert f"> Content {HOSTILE} with a line\n> and more" in result.stdout


def test_argparse_messages_go_through_the_output_function_too(run_cli):
    result = run_cli("list", "--sort", f"x{OSC52}")
    assert result.returncode == 2 and not RAW.search(result.stderr) and "\\x1b]52" in result.stderr


def test_ingest_cleans_every_field_at_the_door(run_cli, db_path, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text(f"MEMORY:gotcha{HOSTILE}:Restart the worker after a deploy\n\n"
                    f"[MEMORY:timing:svc{HOSTILE}] Jellyfin takes 60 s to start\n")
    result = run_cli("ingest", str(text), "--session", f"s-{HOSTILE}", "--hat", f"creator{HOSTILE}",
                     "--task", f"deploy{HOSTILE}")
    assert result.returncode == 0, result.stderr
    assert not RAW.search(result.stderr)
    with Store.open(db_path, project="demo", config=Config.defaults()) as store:
        memories = store.db.execute_sql("SELECT hat, scope, tags, session_id, task FROM memory").fetchall()
        sessions = store.db.execute_sql("SELECT id, hat, task FROM session").fetchall()
    assert memories and sessions
    for row in [*memories, *sessions]:
        for value in row:
            assert value is None or not RAW.search(value), row
    # The escape sequences go whole (OSC 52 with its payload, the 8-bit CSI with its parameters).
    assert sessions == [("s-txt.exe", "creatortxt.exe", "deploytxt.exe")]
