"""The few questions anchors ask git, by running `git` as a subprocess (no dependency).

Every function answers None (or nothing) when the folder is not in a git repository, git is not
installed, or git fails: anchors then work with what the files alone tell. Blob ids are computed
here without git, the way `git hash-object` does, so capturing an anchor costs one git call.

The repository is a stranger's (a clone): its `.git/config` and `.gitattributes` can name
programs for git to run (`core.fsmonitor` at every index refresh, hooks, external diff and
textconv drivers, clean/smudge filters, a pager, gpg through `log.showSignature`). memdeck runs
git with each of those turned off (`SAFE_CONFIG`, `--no-ext-diff --no-textconv`, the filters
a repository defines emptied), without optional locks (no index written, so no hook on it),
and reads files at a commit with `cat-file`, which runs nothing.

A stored commit id is a stranger's too (an imported file, a memory a team member shared): git
reads an argument that begins with `-` as an option (`--output=FILE` writes a file), so a
commit id is used only when it is one, hex digits (`is_commit_id`); anything else asks git
nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import os
import re

TIMEOUT = 10.0
# Settings that would have git run a program the repository names, each turned off.
SAFE_CONFIG = (
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "pager.diff=false",
    "pager.log=false", "pager.show=false", "diff.external=", "log.showSignature=false",
    "gpg.program=false", "core.sshCommand=false", "credential.helper=", "core.askPass=false",
    "protocol.allow=never", "core.attributesFile=/dev/null",
)
_FILTER_KEY = re.compile(rb"^filter\.(.+)\.(?:clean|smudge|process)$", re.DOTALL)
# A commit id as git writes one: SHA-1 or SHA-256, whole or abbreviated.
_COMMIT_ID = re.compile(r"[0-9a-f]{4,64}")


def is_commit_id(text: str | None) -> bool:
    """Whether `text` is a commit id (hex digits), safe to hand git as one."""
    return bool(text) and _COMMIT_ID.fullmatch(text) is not None


def _git(root: Path, *args: str, work_tree: bool = False) -> bytes | None:
    """git's output as bytes, or None if git is missing, fails or takes too long. Every call
    runs with the repository's filters off (`work_tree` is kept for the callers that read the
    working tree; the filters are off for all)."""
    # Imported here: `prime` imports this module on every run and calls git only when a file
    # anchored to went missing.
    import subprocess

    command = ["git", "--no-pager", "-C", str(root)]
    for setting in SAFE_CONFIG:
        command += ["-c", setting]
    env = _safe_env()
    env.update(_config_env(env, _no_filters(root)))
    try:
        done = subprocess.run([*command, *args], capture_output=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _safe_env() -> dict:
    # No system-wide attributes file either (the repository's own .gitattributes names the
    # filters, whose programs are emptied by name below).
    return {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_ATTR_NOSYSTEM": "1"}


def _config_env(env: dict, settings: list[tuple[bytes, bytes]]) -> dict:
    """`settings` as git's GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n variables
    (git 2.31 and later), after any the environment holds: unlike `-c key=value`, a key there
    is taken whole, `=` and bytes that are not UTF-8 included."""
    try:
        start = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    except ValueError:
        start = 0
    added: dict = {}
    for n, (key, value) in enumerate(settings, start):
        added[f"GIT_CONFIG_KEY_{n}"] = key
        added[f"GIT_CONFIG_VALUE_{n}"] = value
    if settings:
        added["GIT_CONFIG_COUNT"] = str(start + len(settings))
    return added


def _no_filters(root: Path) -> list[tuple[bytes, bytes]]:
    """Settings emptying each clean/smudge/process filter the repository's config defines, by its
    name as bytes, exactly as the config holds it (a filter is named by `.gitattributes`, so each
    is turned off by its name). Reading config runs nothing."""
    import subprocess

    command = ["git", "-C", str(root)]
    for setting in SAFE_CONFIG:
        command += ["-c", setting]
    try:
        done = subprocess.run([*command, "config", "--null", "--name-only", "--get-regexp", r"^filter\."],
                              capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL, env=_safe_env())
    except (OSError, subprocess.SubprocessError):
        return []
    names = {m.group(1) for key in done.stdout.split(b"\0") if (m := _FILTER_KEY.match(key))}
    return [(b"filter." + name + b"." + part, b"false" if part == b"required" else b"")
            for name in sorted(names) for part in (b"clean", b"smudge", b"process", b"required")]


def run(root: Path, *args: str, work_tree: bool = False) -> str | None:
    """git's output as text, or None if git is missing, fails or takes too long."""
    out = _git(root, *args, work_tree=work_tree)
    return None if out is None else out.decode("utf-8", "replace")


def blob_id(data: bytes) -> str:
    """The id git gives a file with these bytes (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def head_commit(root: Path) -> str | None:
    """HEAD's commit id, or None outside git (or in a repository with no commit yet)."""
    out = run(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() or None if out else None


def renames_since(root: Path, commit: str) -> dict[str, str]:
    """Old path -> new path for the files renamed between `commit` and the working tree
    (committed renames and `git mv` alike), as git's rename detection sees them."""
    if not is_commit_id(commit):
        return {}
    out = run(root, "diff", "--no-ext-diff", "--no-textconv", "--name-status", "-M", "-z", commit, "--",
              work_tree=True)
    if not out:
        return {}
    fields = out.split("\0")
    found: dict[str, str] = {}
    index = 0
    while index < len(fields) and fields[index]:
        status = fields[index]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                found[fields[index + 1]] = fields[index + 2]
            index += 3
        else:
            index += 2
    return found


def file_at(root: Path, commit: str, path: str) -> bytes | None:
    """The file's bytes at `commit`, or None if it was not there."""
    if not is_commit_id(commit):
        return None
    return _git(root, "cat-file", "blob", f"{commit}:{path}")


def commits_touching(root: Path, commit: str, path: str, limit: int = 20) -> list[str]:
    """`abc1234 subject` of each commit after `commit` that changed `path`, newest first."""
    if not is_commit_id(commit):
        return []
    out = run(root, "log", "--no-show-signature", "--no-ext-diff", "--no-textconv", f"--max-count={limit}",
              "--format=%h %s", "--follow", f"{commit}..HEAD", "--", path)
    return [line for line in (out or "").splitlines() if line.strip()]


def diff_since(root: Path, commit: str, old_path: str, new_path: str) -> str | None:
    """`git diff` of the file from `commit` to the working tree, following a rename."""
    if not is_commit_id(commit):
        return None
    paths = [old_path] if old_path == new_path else [old_path, new_path]
    return run(root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "-U3", commit, "--", *paths,
               work_tree=True)
