"""What a tool failing again and again taught, read from what the session does next (issue 28):
the agent saying why it fails or what it must do (`cause`), or a call doing the same work that
then works (`same_work`). A failure the agent only retried or left teaches nothing a person keeps.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP = re.compile(r"\*\*|__|`|^\s*(?:[-*•]|\d+[.)])\s+")
# Words that say why something fails, or what it takes.
_CAUSE = re.compile(
    r"\b(?:because|since|means|due to|caused by|related to|not installed|isn'?t installed|(?:is|are) not (?:found|available|set)|"
    r"not found|(?:is|are) missing|doesn'?t exist|does not exist|need to|needs to|have to|has to|must|instead|"
    r"the (?:issue|problem|reason|cause) (?:is|was)|not an? \w+ (?:issue|problem|error)|"
    r"porque|hay que|tengo que|no está instalad[oa])\b", re.I)
# Words of an error or a command that name nothing in particular.
_GENERIC = frozenset(
    "error errors failed failing fails fail exit code command line with found from this that file files near "
    "token unexpected could cannot will have been were there when what into make sure please the and for not "
    "run runs running test tests npm npx node python bash true false none null".split())
_WORDS = re.compile(r"[a-z][a-z0-9_-]{3,}")


def cause(text: str, about: str) -> str | None:
    """The sentence of the agent's words that names something of the failure (`about`: its error
    line and call) and says why it fails or what it takes ("basedpyright is not installed in
    the shell"), without markup; None when no sentence does."""
    names = {w for w in _WORDS.findall(about.lower()) if w not in _GENERIC}
    if not names:
        return None
    for sentence in _SENTENCE.split(text[:2000]):
        plain = _MARKUP.sub("", sentence).strip()
        if plain and not plain.endswith("?") and _CAUSE.search(plain) and names & set(_WORDS.findall(plain.lower())):
            return plain[:200]
    return None


def _words(command: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9_]+", command)


def same_work(tool: str, failed: str, now: str) -> bool:
    """A call that does the work a failed one tried: the same file for a file tool; for a shell
    command the same program (`.venv/bin/pip` is `pip`) with a word of the failed command's
    arguments past its subcommand ("npm run test:unit" → "npm test"; "git checkout main" →
    "git checkout -f main", not "git status")."""
    if tool != "Bash":
        return bool(failed) and failed == now
    failed_first, now_first = failed.split(maxsplit=1), now.split(maxsplit=1)
    if not failed_first or not now_first or PurePosixPath(failed_first[0]).name != PurePosixPath(now_first[0]).name:
        return False
    program = PurePosixPath(failed_first[0]).name
    wanted = {w.lower() for w in _words(failed)[2:]} - {program.lower()}
    return bool(wanted & {w.lower() for w in _words(now)[1:]})
