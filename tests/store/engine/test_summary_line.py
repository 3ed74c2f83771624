"""A log summary is the same whether it is computed or remembered (`summary_line` keeps the
recent ones): the same head gives the same line whatever follows it, each width its own."""

from __future__ import annotations

from store.engine.redaction import _summary_of_head, redact, strip_controls, summary_line

SECRET = "sk-ant-" + "api03-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _computed(text: str, width: int = 200) -> str:
    """The summary worked out afresh, as it was before summaries were kept."""
    head, _ = strip_controls(text[: width + 120])
    head, _ = redact(head)
    flat = " ".join(head.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


TRICKY = [
    "",
    "   \n\t ",
    "system: \x1b[1mPreToolUse:Bash\x1b[22m [uv run .claude/hooks/pre_tool_use.py] completed successfully",
    "caf\u00e9 \u202etxt.exe\u200b and \U000e0041 tags",
    f"export ANTHROPIC_API_KEY={SECRET}",
    "x" * 250 + f" {SECRET}",  # a secret straddling the cut: redacted, not half shown
    "line\n" * 400,  # a huge output: only its head is read
    "İstanbul TOKEN=abc password: hunter2",
]


def test_a_remembered_summary_is_the_computed_one():
    _summary_of_head.cache_clear()
    for _ in range(2):  # the second round is answered from what was kept
        for text in TRICKY:
            for width in (200, 160, 80):
                assert summary_line(text, width) == _computed(text, width), (text[:40], width)
    assert _summary_of_head.cache_info().hits > 0


def test_the_same_head_gives_the_same_line_whatever_follows():
    head = "y" * 320
    assert summary_line(head + "tail one") == summary_line(head + f" {SECRET}") == _computed(head)
