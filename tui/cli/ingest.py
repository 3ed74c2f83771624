"""Commands of the write path: ingest, the review inbox (inbox, accept, reject), the agents' hooks
(hook session-start, hook user-prompt-submit, hook stop, each with --agent; hook install sets
up Claude Code's) and the skill text (skill)."""

from __future__ import annotations

import argparse
import os
import signal
import shlex
import sqlite3
import sys
from pathlib import Path

from store.api import InvalidInput, MemdeckError
from tui.cli import hook_wire, values
from tui.cli.claude_setup import register_hook_install
from tui.cli.hook_input import HookInputError, read_payload
from tui.cli.hook_server import register as register_hook_serve
from tui.cli.output import (
    MEMORY_HEADERS, flush, info, memory_rows, one_line, out, print_json, stdout_bytes, table, write_data,
)

FORMAT_CHOICES = ("auto", "transcript", "stream-json", "text")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest", help="read an agent session: markers become memories, activities the session log",
        description="Read a Claude Code transcript, `claude -p --output-format stream-json` output or "
                    "plain text (PATH, or - for stdin). Markers in the agent's own text become memories; "
                    "tool failures become inbox candidates. Ingesting the same input again changes "
                    "nothing; a transcript that grew is read from where the last ingest stopped. "
                    "Exit 1 when some lines could not be read (they are listed).")
    p.add_argument("path", metavar="PATH|-")
    p.add_argument("--format", default="auto", choices=FORMAT_CHOICES, help="default: detected")
    p.add_argument("--session", default=None, metavar="ID",
                   help="the session (default: the id in the transcript; for text, one per file)")
    p.add_argument("--hat", default=None, help="the hat of the agent that wrote it")
    p.add_argument("--task", default=None, help="the task the session worked on")
    p.add_argument("--follow", action="store_true",
                   help="keep reading the file as it grows, until Ctrl-C or SIGTERM")
    p.add_argument("--idle-exit", type=values.seconds, default=None, metavar="SECONDS",
                   help="with --follow: stop after this long without new lines")
    p.add_argument("--tee", action="store_true", help="copy stdin to stdout unchanged (with PATH -)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.set_defaults(handler=cmd_ingest)

    p = sub.add_parser("inbox", help="candidate memories awaiting review (status pending)")
    p.add_argument("--limit", type=values.count, default=100, help="at most this many (0 for all)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_inbox)

    for name, verb in (("accept", "make pending memories active"), ("reject", "move pending memories to the trash")):
        p = sub.add_parser(name, help=verb)
        p.add_argument("ids", nargs="*", metavar="ID")
        p.add_argument("--all", action="store_true", help="every memory in the inbox")
        p.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
        p.set_defaults(handler=cmd_review, verdict=name)

    hook = sub.add_parser("hook", help="the agents' hooks (read the hook's JSON on stdin): Claude Code, Codex CLI, "
                                       "Gemini CLI, Cursor")
    hooks = hook.add_subparsers(dest="hook", metavar="HOOK", required=True)
    p = hooks.add_parser("session-start", help="run decay, then print the memories for the new session")
    p.add_argument("--hat", default=None)
    p.add_argument("--task", default="", help="what the session is about (without it, only critical memories pass prime's relevance gate)")
    p.add_argument("--budget", type=values.count, default=None, metavar="TOKENS")
    _agent_option(p)
    p.set_defaults(handler=cmd_hook_session_start)
    p = hooks.add_parser("user-prompt-submit",
                         help="print the memories about the user's prompt that this session has not had yet")
    p.add_argument("--hat", default=None)
    p.add_argument("--budget", type=values.count, default=None, metavar="TOKENS",
                   help="tokens (default: injection.prompt_budget, 600)")
    _agent_option(p)
    p.set_defaults(handler=cmd_hook_user_prompt_submit)
    p = hooks.add_parser("stop", help="ingest the session's transcript")
    p.add_argument("--hat", default=None)
    _agent_option(p)
    p.set_defaults(handler=cmd_hook_stop)
    register_hook_install(hooks)
    register_hook_serve(hooks)

    p = sub.add_parser("skill", help="print the instructions that teach an agent to write memory markers")
    p.set_defaults(handler=cmd_skill)


def _agent_option(p: argparse.ArgumentParser) -> None:
    from tui.cli.agents import AGENTS

    p.add_argument("--agent", choices=tuple(AGENTS), default="claude-code",
                   help="the agent that runs the hook: how its JSON is read and the answer written "
                        "(default claude-code; docs/agents.md)")


# -- ingest ------------------------------------------------------------------------------------

class _Stop:
    """SIGINT/SIGTERM end a following ingest after the batch in hand is committed."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self) -> bool:
        return self.requested

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def _handle(self, signum, frame) -> None:
        self.requested = True


def cmd_ingest(ctx) -> int:
    from store.api import IngestOptions, ingest_file, ingest_stream

    args = ctx.args
    if args.tee and args.path != "-":
        raise InvalidInput("--tee copies stdin: use it with PATH -")
    if args.tee and args.json:
        raise InvalidInput("--tee and --json both write to stdout: use one")
    if args.idle_exit is not None and not args.follow:
        raise InvalidInput("--idle-exit goes with --follow")
    stop = _Stop()
    stop.install()
    options = IngestOptions(format=args.format, session_id=args.session, hat=args.hat, task=args.task,
                            follow=args.follow, idle_exit=args.idle_exit)
    store = ctx.store
    if args.path == "-":
        tee = stdout_bytes() if args.tee else None
        report = ingest_stream(store, sys.stdin.fileno(), options, tee=tee, stopping=stop)
    else:
        report = ingest_file(store, Path(args.path), options, stopping=stop)
    if args.json:
        print_json(report.to_json())
    else:
        print_summary(report, ctx.args.project)
    return 1 if report.unreadable else 0


def print_summary(report, project: str | None = None) -> None:
    """The ingest summary, on stderr (stdout may be carrying the --tee copy). `project`: the
    --project the command was given, repeated in the hint to review the inbox."""
    counts = ", ".join(f"{kind} {n}" for kind, n in report.records.most_common())
    if report.lines == 0 and not report.incomplete_tail:
        info(f"nothing new in {report.source} (session {report.session_id}): all of it was ingested before")
        return
    info(f"ingested {report.lines} lines of {report.source} into session {report.session_id} ({report.format})")
    if counts:
        info(f"  records: {counts}")
    if report.already:
        info(f"  skipped {report.already} lines ingested before")
    memories = (f"{len(report.created)} created, {len(report.reinforced)} reinforced"
                if report.markers else "none")
    info(f"  markers: {report.markers} → memories {memories}")
    for rejected in report.rejected:
        where = f"line {rejected['line']}" + (f" (text line {rejected['text_line']})" if "text_line" in rejected else "")
        info(f"  rejected marker, {where}: {rejected['reason']}: {rejected['source']}")
    for fallback in report.fallback:
        info(f"  unknown type {fallback['word']!r} kept under the fallback type, tagged: {fallback['memory_id']}")
    if report.quoted:
        info(f"  {report.quoted} quoted marker(s) not taken (prompts, tool output, code blocks)")
    if report.redacted:
        info(f"  {report.redacted} memor{'y' if report.redacted == 1 else 'ies'} had secrets redacted")
    if report.cut:
        info(f"  {report.cut} memor{'y' if report.cut == 1 else 'ies'} cut to ingest.max_length")
    if report.candidates:
        new = len(report.new_candidates)
        repeats = len(set(report.candidates) - set(report.new_candidates))
        again = f", {repeats} already there reinforced" if repeats else ""
        where = f" --project {shlex.quote(project)}" if project else ""
        info(f"  inbox: {new} new candidate{'' if new == 1 else 's'}{again}; review with: memdeck{where} inbox")
    if report.files_touched:
        info(f"  files touched: {len(report.files_touched)}")
    if report.invalid_utf8:
        info(f"  {report.invalid_utf8} line(s) were not valid UTF-8 (read with replacement characters)")
    if report.incomplete_tail:
        info(f"  the last line is unfinished ({report.incomplete_tail} bytes): left for the next ingest")
    for bad in report.unreadable:
        info(f"  unreadable line {bad['line']}: {bad['reason']} (recorded in the session log)")


# -- the review inbox --------------------------------------------------------------------------

def _inbox(store, limit: int | None):
    from store.api import MemoryFilter, list_memories

    return list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=limit)


def cmd_inbox(ctx) -> int:
    ctx.check_named_project()
    args, store = ctx.args, ctx.store
    memories = _inbox(store, None if args.limit == 0 else args.limit)
    if args.json:
        print_json([m.to_json() for m in memories])
        return 0
    proposals = len(store.relations.proposals())  # updates, contradictions, duplicates (store.engine.sameness)
    more = f"; {proposals} open {'proposal' if proposals == 1 else 'proposals'}: memdeck proposals" if proposals else ""
    if not memories:
        info(f"the inbox of project {store.project!r} is empty{more}")
        return 0
    table([[*row, m.source, m.session_id or "-"] for row, m in zip(memory_rows(memories), memories)],
          (*MEMORY_HEADERS, "source", "session"))
    info("accept with: memdeck accept ID…   reject (to the trash) with: memdeck reject ID…" + more)
    return 0


def cmd_review(ctx) -> int:
    args, store = ctx.args, ctx.store
    accepting = args.verdict == "accept"
    if args.all == bool(args.ids):
        raise InvalidInput(f"give memory ids or --all (not both): memdeck {args.verdict} ID… | --all")
    memories = _inbox(store, None) if args.all else store.get_many(args.ids)
    not_pending = [f"{m.id} ({m.status})" for m in memories if m.status != "pending"]
    if not_pending:
        raise InvalidInput(f"not in the inbox: {', '.join(not_pending)}; {args.verdict} only acts on pending memories")
    verb = "accept" if accepting else "reject"
    if args.dry_run:
        for m in memories:
            out(f"would {verb}: {m.id}  {one_line(m.title, 60)}")
        info(f"would {verb} {len(memories)}")
        return 0
    ids = [m.id for m in memories]
    if ids:
        store.set_status(ids, "active" if accepting else "deleted", actor="cli")
        if accepting:  # the agent verdicts held in them are applied (docs/mcp.md, Guard rails)
            from store.api import settle

            settle(store, ids, actor="cli")
    for m in memories:
        out(f"{verb}ed: {m.id}  {one_line(m.title, 60)}")
    undo = "" if accepting or not ids else f"; undo with: memdeck restore {' '.join(ids)}"
    info(f"{verb}ed {len(ids)}{' (moved to the trash)' if not accepting and ids else ''}{undo}")
    return 0


# -- the agents' hooks -------------------------------------------------------------------------

def _enter_project(turn) -> None:
    # The store's project is detected from the directory the agent runs in, not the hook's own.
    # The agent starts the hook there too: a cwd it could not spell in JSON (a folder name that
    # is not UTF-8 arrives with U+FFFD in it) leaves the hook where it was started.
    if turn.cwd and os.path.isdir(turn.cwd):
        os.chdir(turn.cwd)


def _session_id(turn) -> str | None:
    from store.api import clean_field

    return clean_field(turn.session_id[:200]) if turn.session_id else None


def _hook(name: str):
    """Hooks never block the agent and never hang: any failure, of any kind, is one line on
    stderr. For Claude Code, input that is not what it sends (not JSON, no prompt, no
    transcript) is exit 0, as there is nothing to do, and trouble with the store or a bug exit 1
    (never 2, which it reads as "block"); for the other agents every failure is exit 0, with the
    agent's "nothing to add" answer on stdout (Gemini CLI reads stdout as JSON, Cursor waits for
    an answer)."""

    def decorate(run):
        def handler(ctx) -> int:
            import peewee

            from store.api import describe
            from tui.cli.agents import agent_module

            agent = agent_module(ctx.args.agent)
            code = 1
            try:
                payload = read_payload()
                return run(ctx, payload, agent, agent.turn(payload))
            except MemdeckError as exc:
                problem, code = str(exc), (0 if isinstance(exc, HookInputError) else 1)
            except (sqlite3.DatabaseError, peewee.DatabaseError) as exc:
                problem = str(describe(exc, ctx.store_path()))
            except UnicodeError as exc:
                problem = f"text that is not valid ({exc})"
            except KeyboardInterrupt:
                problem = "interrupted"
            except Exception as exc:  # a bug must not block the agent either: said, in one line
                problem = f"failed: {type(exc).__name__}: {exc}"
            info(f"memdeck hook: {one_line(problem)}")
            if agent.NAME == "claude-code":
                return code
            write_data(agent.quiet(name))
            return 0

        return handler

    return decorate


def _answer(agent, name: str, result) -> int:
    """What the hook prints for the agent to add to the context: the block, in the agent's shape."""
    text = agent.answer(name, result.block or "")
    if text:
        write_data(text)
    return 0


@_hook("session-start")
def cmd_hook_session_start(ctx, payload: dict, agent, turn) -> int:
    from store.api import InjectionContext, prime, prime_session_start, run_decay

    _enter_project(turn)
    store = ctx.store
    run_decay(store)
    session_id = _session_id(turn)
    if session_id:
        # The agent's process (the hook's parent, or its shell's): the MCP server it starts finds
        # this session by it, and joins it (docs/mcp.md, One session). In the hook server, those
        # of the hook process that asked it (`hook_wire.ancestors`).
        store.sessions.ensure(session_id, meta={"via": "hook", "pids": hook_wire.ancestors(), "agent": agent.NAME})
    context = InjectionContext(hat=ctx.args.hat, task=ctx.args.task, session_id=session_id,
                               budget=ctx.args.budget)
    if ctx.args.task:
        result = prime(store, context, record=True, layers=ctx.layers)
    else:
        # No task yet: only the always-on memories, not counted as a use (the prompt hook brings
        # the task's memories when the user says what the task is).
        result = prime_session_start(store, context, record=True, layers=ctx.layers)
    _answer(agent, "session-start", result)
    _start_hook_server(ctx)
    return 0


@_hook("user-prompt-submit")
def cmd_hook_user_prompt_submit(ctx, payload: dict, agent, turn) -> int:
    """The prompt the user just submitted is the task (Claude Code's and Codex's
    UserPromptSubmit, Gemini CLI's BeforeAgent, Cursor's beforeSubmitPrompt). What the hook
    prints is added to the prompt's context; nothing is added when nothing is about it."""
    from store.api import InjectionContext, prime_for_prompt

    if turn.prompt is None:
        raise HookInputError(f"the hook input has no prompt: is this {agent.TITLE}'s {agent.EVENTS['user-prompt-submit']} hook?")
    _enter_project(turn)
    if agent.NAME == "cursor":
        # Cursor lets this hook allow or block a prompt, not add to it: nothing to prime.
        write_data(agent.quiet("user-prompt-submit"))
        return 0
    store = ctx.store
    context = InjectionContext(hat=ctx.args.hat, task=turn.prompt, session_id=_session_id(turn),
                               budget=ctx.args.budget)
    result = prime_for_prompt(store, context, record=True, layers=ctx.layers)
    _answer(agent, "user-prompt-submit", result)
    if hook_wire.found_none:  # no hook server answered this hook: one for the next prompts
        _start_hook_server(ctx)
    return 0


@_hook("stop")
def cmd_hook_stop(ctx, payload: dict, agent, turn) -> int:
    from store.api import IngestOptions, ingest_file, transcript_problem, history_format

    if agent.NAME != "claude-code":
        path = agent.capture(turn)
        if path is None:
            info(f"memdeck hook: nothing to ingest from {agent.TITLE}'s {agent.EVENTS['stop']}")
        else:
            _enter_project(turn)
            report = ingest_file(ctx.store, path, IngestOptions(format="transcript", session_id=_session_id(turn),
                                                                hat=ctx.args.hat))
            print_summary(report)
        return _answer(agent, "stop", _Nothing())
    transcript = turn.transcript
    if not transcript:
        raise HookInputError("the hook input has no transcript_path: is this Claude Code's Stop hook?")
    path = Path(transcript).expanduser()
    # Checked before the store is opened: input that is not a session creates nothing. A
    # SpecStory, aider or Codex history is read as `memdeck ingest` reads it (docs/replay.md).
    history = history_format(path)
    problem = None if history else transcript_problem(path)
    if problem:
        raise HookInputError(f"{transcript}: {problem}; nothing was ingested")
    if path.stat().st_size == 0:
        info(f"memdeck hook: {transcript} is empty: nothing to ingest")
        return 0
    _enter_project(turn)
    store = ctx.store
    report = ingest_file(store, path, IngestOptions(format="auto" if history else "transcript",
                                                    session_id=_session_id(turn),
                                                    hat=ctx.args.hat))
    print_summary(report, ctx.args.project)
    return 0


def _start_hook_server(ctx) -> None:
    """The hook server for the next hooks (`tui/cli/hook_server.py`), started once the agent has
    its answer: stdout is flushed first, as the start forks. Not by a hook the server runs: that
    one is up."""
    from tui.cli.hook_server import start
    from tui.cli.output import OutputError

    if hook_wire.served():
        return
    try:
        flush()
    except OutputError:
        return  # said once the hook ends, as before
    start(ctx)


class _Nothing:
    block = ""


def cmd_skill(ctx) -> int:
    from store.api import Config, detect_project, skill_text, Vocabulary

    # The skill needs the vocabulary, not the store: no store file is opened or created.
    _, root = detect_project()
    write_data(skill_text(Vocabulary.from_config(Config.load(root))))
    return 0
