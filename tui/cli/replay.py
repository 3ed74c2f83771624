"""`memdeck replay PATH…` (a history run through the hooks, with the re-teachings it finds) and
`memdeck eval-replay LABELS.yaml…` (the same scored against labelled lessons). docs/replay.md."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from store.api import InvalidInput
from tui.cli import values
from tui.cli.output import info, out, print_json, progress, stderr_is_terminal

MAX_SESSIONS = 2000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay", help="run a project's past sessions through memdeck and count the lessons taught twice",
        description="Read the sessions under each PATH (SpecStory .specstory/history/*.md, aider "
                    ".aider.chat.history.md, Codex rollout-*.jsonl, Claude Code *.jsonl; folders or files), "
                    "and replay them in time order into a scratch store, on the sessions' own clock: the "
                    "session-start block, the block the user-prompt-submit hook would inject at each "
                    "prompt, what the stop hook captures at the end. Prints sessions, prompts, candidates, "
                    "memories kept, tokens injected per prompt, and the re-teachings found: a lesson "
                    "captured again that an earlier session had already taught. Your own store is not "
                    "touched unless --into-my-store is given.")
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    p.add_argument("--review", choices=("all", "none"), default="all",
                   help="all: accept every candidate (default); none: only what needs no review")
    p.add_argument("--keep", type=Path, default=None, metavar="FILE",
                   help="keep the replay's store in FILE (a new file), to browse it with memdeck --db FILE")
    p.add_argument("--into-my-store", action="store_true",
                   help="replay into your own store (--db) instead of a scratch one: it keeps what is captured")
    p.add_argument("--max-sessions", type=values.count, default=MAX_SESSIONS, metavar="N",
                   help=f"refuse a history of more sessions than this (default {MAX_SESSIONS})")
    p.add_argument("--name", default=None, help="the project's name in the replay (default: the first PATH's)")
    p.add_argument("--open", action="store_true", help="show the replay in the workbench's replay screen")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_replay)

    p = sub.add_parser(
        "eval-replay", help="replay labelled histories and score the lessons taught twice",
        description="For each label file (docs/replay.md; ../shared/eval/replay/*.yaml), replay its "
                    "project's history and score it: lessons captured before their first repeat, repeats "
                    "prevented (a memory about the lesson injected in the session before the repeating "
                    "prompt), those arriving only with the repeat, misses by cause, and the cost (tokens "
                    "per prompt, share of prompts injecting, candidates per session).")
    p.add_argument("labels", nargs="+", type=Path, metavar="LABELS.yaml")
    p.add_argument("--review", choices=("all", "none"), default="all")
    p.add_argument("--folds", choices=("project",), default=None,
                   help="project: leave-one-project-out, each project scored with settings chosen on the others")
    p.add_argument("--lessons", action="store_true", help="list every lesson and each repeat's outcome")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_eval_replay)


class Progress:
    """Progress on stderr: a bar redrawn in place on a terminal, else a line every tenth."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.tty = stderr_is_terminal()
        self.shown = -1

    def __call__(self, done: int, total: int, name: str, project: str = "", unit: str = "sessions") -> None:
        label = f"{self.what}{' ' + project if project else ''}"
        if self.tty:
            filled = int(30 * done / total) if total else 30
            progress(f"{label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {unit}", done=done == total)
            return
        tenth = int(10 * done / total) if total else 10
        if tenth != self.shown or done == total:
            self.shown = tenth
            info(f"{label}: {done}/{total} {unit}")


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "n/a"


def cmd_replay(ctx) -> int:
    from store.api import read_histories, open_scratch, replay, report_json, report_lines

    args = ctx.args
    if not args.paths:
        raise InvalidInput("replay needs a PATH: a folder or file of session history (docs/replay.md)")
    if args.keep is not None and args.into_my_store:
        raise InvalidInput("--keep and --into-my-store name two stores: use one")
    if args.keep is not None and args.keep.exists():
        raise InvalidInput(f"{args.keep}: already exists; --keep writes a new store")
    histories = read_histories(args.paths, limit=args.max_sessions)
    name = args.name or (args.paths[0].resolve().name if args.paths[0].is_dir() else args.paths[0].resolve().parent.name)
    if histories.reordered:
        info(f"memdeck replay: {histories.reordered} sessions were read out of time order; replayed in time order")
    progress = Progress("replay")
    with tempfile.TemporaryDirectory(prefix="memdeck-replay-") as tmp:
        if args.into_my_store:
            store = ctx.store
        else:
            store = open_scratch(Path(tmp), name)
        try:
            result = replay(store, histories.sessions, review=args.review, progress=progress)
        finally:
            if not args.into_my_store:
                store.close()
        result.duplicates = histories.duplicates
        if args.keep is not None:
            import shutil

            shutil.copyfile(Path(tmp) / "replay.db", args.keep)
        if args.json:
            print_json(report_json(result))
        else:
            for line in report_lines(result):
                out(line)
        if args.open:
            # The workbench on the replay's store (yours with --into-my-store), on the replay screen.
            run_replay_app(result, ctx.store_path() if args.into_my_store else Path(tmp) / "replay.db").run()
    return 0


def cmd_eval_replay(ctx) -> int:
    from store.api import MISS_CAUSES, REPLAY_GRID, evaluate_replay as evaluate, replay_totals as totals

    args = ctx.args
    progress = Progress("eval-replay")
    scores = evaluate(args.labels, review=args.review, folds=args.folds == "project",
                      progress=lambda project, i, n, name: progress(i, n, name, project,
                                                                    "runs" if project == "grid" else "sessions"))
    total = totals(scores)
    if args.json:
        print_json({"projects": {s.project: s.to_json() for s in scores},
                    "total": {key: total[key] for key in ("lessons", "repeats", "captured", "prevented",
                                                          "at_the_repeat", "tokens_per_prompt",
                                                          "prompts_injecting", "candidates_per_session")}
                    | {"misses": total["misses"], "reteachings": total["reteachings"],
                       "held_twice": total["held_twice"]}})
        return 0
    if args.folds:
        out("leave-one-project-out: each project scored with the settings chosen on the others"
            + ("" if REPLAY_GRID else " (no setting to choose: the defaults)"))
    for s in scores:
        data = s.to_json()
        verdicts = ", ".join(f"{k} {v}" for k, v in s.verdicts.most_common())
        out(f"{s.project}: {s.sessions} sessions, {s.prompts} prompts · lessons captured before their first "
            f"repeat {s.captured}/{s.lessons} · repeats prevented {s.prevented}/{s.repeats} "
            f"({_share(s.prevented, s.repeats)}), at the repeat {s.at_the_repeat}")
        out("  misses: " + ", ".join(f"{c.replace('_', ' ')} {s.misses.get(c, 0)}" for c in MISS_CAUSES)
            + (f" ({verdicts})" if verdicts else ""))
        out(f"  cost: {data['tokens_per_prompt']} tokens per prompt, {data['prompts_injecting']:.0%} of prompts "
            f"injecting, {data['candidates_per_session']} candidates per session"
            + (f"; settings {s.settings}" if s.settings else ""))
        out(f"  re-teachings found without labels: {s.detected} of the {s.could_detect} repeats that came after "
            f"a memory about the lesson was kept; lessons held by two memories or more at the end: {s.held_twice}")
        for problem in s.unplaced:
            out(f"  label not placed: {problem}")
        if args.lessons:
            for lesson in s.details:
                outcomes = ", ".join(r["outcome"].replace("_", " ") for r in lesson["repeats"])
                out(f"  {lesson['id']} {'captured' if lesson['captured'] else 'not captured'}: {outcomes or 'no repeat'}"
                    f" · {lesson['lesson'][:70]}")
    out(f"total: lessons captured {total['captured']}/{total['lessons']} ({_share(total['captured'], total['lessons'])})"
        f" · repeats prevented {total['prevented']}/{total['repeats']} ({_share(total['prevented'], total['repeats'])}),"
        f" at the repeat {total['at_the_repeat']} · {total['tokens_per_prompt']} tokens per prompt, "
        f"{total['prompts_injecting']:.0%} of prompts injecting, {total['candidates_per_session']} candidates per session"
        f" · lessons held twice {total['held_twice']}")
    return 0


def run_replay_app(replay, store_path: Path, still: bool = False):
    """The workbench on the replay's store, opened on the replay screen (`memdeck replay --open`)."""
    from tui.app import MemdeckApp
    from tui.screens.replay import ReplayScreen

    class ReplayApp(MemdeckApp):
        CSS_PATH = str(Path(sys.modules[MemdeckApp.__module__].__file__).parent / "app.tcss")

        def on_mount(self) -> None:
            # Textual runs MemdeckApp's own on_mount after this one (the main screen): the
            # replay screen goes over it once that is done.
            self.call_after_refresh(self.push_screen, ReplayScreen(replay))

    return ReplayApp(store_path, project=replay.project, live=False, still=still)
