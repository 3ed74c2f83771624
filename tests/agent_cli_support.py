"""The agents' own command lines for tests: each installed from npm into a temporary prefix
(never into the clone), or the test skipped, saying why."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli"}


def installed(prefix: Path, command: str) -> Path:
    """The agent's CLI, installed from npm into `prefix`, or a skip saying why it is not."""
    binary = prefix / command / "node_modules" / ".bin" / command
    if binary.exists():
        return binary
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed here")
    try:
        done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix / command),
                               PACKAGES[command]], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm did not install {PACKAGES[command]} within 10 minutes")
    if done.returncode != 0 or not binary.exists():
        pytest.skip(f"npm could not install {PACKAGES[command]}: {done.stderr.strip().splitlines()[-1:]}")
    return binary
