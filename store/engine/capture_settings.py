"""The settings of ingest and capture (config sections `ingest` and `capture`), as the other
sections' in `store.engine.settings`: each field's doc says what it does and where its value came
from."""

# No `from __future__ import annotations`: the loader reads each field's type from `Field.type`.

from dataclasses import dataclass
from typing import Any  # noqa: F401 (field types may name it)

from store.engine.setting_fields import FRACTION, section, setting  # noqa: F401

@dataclass(frozen=True)
class IngestSettings:
    marker_status: str = setting("active", "active | pending: where explicit markers go. Policy: a marker is the "
                                           "agent's explicit choice (seed 001 stores parsed markers as active "
                                           "memories).",
                            choices=("active", "pending"))
    max_length: int = setting(4000, "Characters; longer memories are cut and tagged. Policy.")
    repeated_error: int = setting(3, "The same tool error this often in a session is a pitfall candidate. Seed 003 "
                                     "(learnFromFailure).")


@dataclass(frozen=True)
class CaptureConfidence:
    """The confidence of each kind of inbox candidate, from the strength of its signal: what a
    signal starts at (`start_*`), what raises it (`raise_*`) or lowers it (`lower_*`), and the
    most it reaches (`cap_*`). store/capture/wording.py reads them as one table (`step.*` keys,
    signed); the heuristics apply it. All are policy, set when the rules were written and
    checked on the capture evals (`memdeck eval-capture`, docs/capture.md), not fitted."""

    start_rejection: float = setting(0.6, "A tool call the user rejected with a reason.", at_most=FRACTION)
    start_rule: float = setting(0.6, "A rule in the user's own strong words (never, always, don't, make sure).",
                                at_most=FRACTION)
    start_weak_rule: float = setting(0.5, "A rule in weaker words (instead, should, prefer).", at_most=FRACTION)
    start_opening_rule: float = setting(0.5, "A rule inside the opening prompt (the prompt itself is the task).",
                                        at_most=FRACTION)
    start_choice: float = setting(0.55, "A choice the user states, or their answers to the agent's questions.",
                                  at_most=FRACTION)
    start_question: float = setting(0.5, "A question about a bug (kept only if the agent agrees).", at_most=FRACTION)
    start_said: float = setting(0.45, "Anything else the user says (kept only if the agent agrees).", at_most=FRACTION)
    start_correction: float = setting(0.55, "The user's words right after stopping the agent (an interrupt or a "
                                            "bare rejection).", at_most=FRACTION)
    start_remember: float = setting(0.65, "The user asks the agent to remember something or update its memory.",
                                    at_most=FRACTION)
    start_approved: float = setting(0.5, "A proposal or plan of the agent's that the user approved with a bare yes.",
                                    at_most=FRACTION)
    start_hook: float = setting(0.65, "A hook that blocked the agent.", at_most=FRACTION)
    start_fix: float = setting(0.5, "A check that failed, then passed after edits.", at_most=FRACTION)
    start_repeated_error: float = setting(0.45, "The same tool error `ingest.repeated_error` times.", at_most=FRACTION)
    start_said_again: float = setting(0.5, "A sentence the user said in an earlier session of the project and says "
                                            "again (`capture.said_again`).", at_most=FRACTION)
    raise_rule_words: float = setting(0.1, "A rejection's reason or a correction worded as a rule.", at_most=FRACTION)
    lower_task_local: float = setting(0.25, "Tied to the task in hand (for now, this time): puts a remark under "
                                            "`capture.min_confidence`.", at_most=FRACTION)
    lower_choice_task_local: float = setting(0.2, "A stated choice about this task only.", at_most=FRACTION)
    lower_short: float = setting(0.1, "A rejection's reason of fewer than five words.", at_most=FRACTION)
    lower_long: float = setting(0.1, "A message over 400 characters: more often a specification than a rule.",
                                at_most=FRACTION)
    raise_agreed: float = setting(0.15, "The agent opens its reply by agreeing it was wrong.", at_most=FRACTION)
    raise_files: float = setting(0.05, "The agent changed files in response.", at_most=FRACTION)
    raise_repeated: float = setting(0.1, "The same lesson said again in the session.", at_most=FRACTION)
    raise_error_repeat: float = setting(0.05, "Each further repeat of a tool error.", at_most=FRACTION)
    cap_words: float = setting(0.9, "The most a signal from words reaches.", at_most=FRACTION)
    cap_repeated_error: float = setting(0.7, "The most a repeated tool error reaches.", at_most=FRACTION)

    def table(self) -> dict[str, float]:
        """As wording's table: `start.rule`, `step.task_local` (negative: it lowers), `cap.words`..."""
        out: dict[str, float] = {}
        for name in self.__dataclass_fields__:
            kind, _, rest = name.partition("_")
            value = getattr(self, name)
            key = {"start": "start", "cap": "cap"}.get(kind, "step")
            out[f"{key}.{rest}"] = -value if kind == "lower" else value
        return out


@dataclass(frozen=True)
class SaidAgainSettings:
    """A sentence said again: what the user told the agent in an earlier session of the project
    (an instruction, or one naming a file, a command or a flag) and tells it again, whatever its
    words, is a standing lesson (store/capture/said_again.py)."""

    min_shared: int = setting(3, "Content words (not stop words, 3 letters or more) two sentences share at least to be "
                                 "one said again; 0: off. Chosen by leave-one-project-out on the replay sets "
                                 "(`memdeck eval-replay --folds project`, docs/replay.md).")
    overlap: float = setting(0.6, "And the share of the shorter sentence's content words they share. Policy, "
                                  "from the replay sets' teaching turns (docs/capture.md).", at_most=FRACTION)
    per_session: int = setting(3, "A session proposes at most this many sentences said again. Policy.")
    earlier_prompts: int = setting(5000, "The project's most recent prompts of other sessions compared with. Policy: "
                                         "it bounds the work of a stop hook in a long-lived project.")


@dataclass(frozen=True)
class CaptureSettings:
    min_confidence: float = setting(0.45, "Weaker inbox candidates are dropped (task-local remarks score below). "
                                          "Policy, checked on the capture eval.", at_most=FRACTION)
    max_per_session: int = setting(24, "A session proposes at most this many, the first ones: a long session's "
                                       "late rules were lost at 12. Chosen by leave-one-project-out on the replay "
                                       "sets (`memdeck eval-replay --folds project`): 2 of 3 folds chose 24 from "
                                       "12/24 (12 before, a policy; docs/replay.md).")
    similarity: int = setting(80, "rapidfuzz token_sort_ratio (0-100) of two candidates of one session (their first "
                                  "300 characters) at or above which the second strengthens the first instead of "
                                  "being proposed (101: never). Policy.", at_most=101)
    follow_files: int = setting(8, "Files the agent edits after a signal, named in its candidate. Policy.")
    max_evidence: int = setting(8, "Evidence lines kept on a candidate, over all the sessions that repeat it. "
                                   "Policy.")
    resemblance: int = setting(50, "rapidfuzz token_set_ratio (0-100) at or above which review shows a memory as "
                                   "one the candidate resembles (a memory to merge it into). Policy.", at_most=100)
    check_commands: tuple[str, ...] = setting(
        ("test", "pytest", "jest", "vitest", "mocha", "build", "lint", "tsc", "mypy", "ruff", "flake8", "eslint",
         "cargo", "go vet", "make", "check", "compile", "gradle", "mvn", "ctest", "tox", "nox", "rspec", "phpunit"),
        "A failing command counts for fail-edit-pass only if it names one of these (a check). Seed 000's "
        "'quality gate passed after failure'; the list is a policy.")
    confidence: CaptureConfidence = section(CaptureConfidence, "The confidence of each kind of candidate.")
    said_again: SaidAgainSettings = section(SaidAgainSettings, "A sentence the user says again in a later "
                                                                  "session is a standing lesson.")
