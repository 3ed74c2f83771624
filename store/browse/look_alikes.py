"""The memories a candidate resembles, for review: before accepting a candidate, a person sees
what the store already knows like it, and can merge the candidate into one of them instead.

The full-text index proposes memories sharing any of the candidate's words (in the project, not
in the trash); rapidfuzz's token_set_ratio of title and content decides, and those at or above
`capture.resemblance` are kept, most similar first.

What is compared is each memory's specific text: the sentences machines wrap around it (the
heuristics' "X keeps failing: …", "failed 3 times in one session with the same error: …", Ralph's
`failure: cmd=…, exit=…, error=…, next=…` labels) are taken out first. Left in, they made two
different failures alike ("Bash keeps failing: TypeError…" was 77% like "Edit keeps failing: File
has not been read yet"), and `m` in the inbox would have merged them.
"""

from __future__ import annotations

import re

from store.engine.core import Store, normalize_text
from store.engine.records import Memory
from store.browse.search import MemoryFilter, full_text

CANDIDATES = 40  # full-text matches compared
_TEXT = 400  # characters of title and content compared


def resembling(store: Store, memory: Memory, *, limit: int = 3) -> list[tuple[Memory, float]]:
    """Up to `limit` other memories of the project like `memory`, with their similarity (0-100)."""
    from rapidfuzz import fuzz

    threshold = float(store.config.capture.resemblance)
    words = " ".join(sorted(set(normalize_text(f"{memory.title} {memory.content}").split()),
                            key=len, reverse=True)[:24])
    flt = MemoryFilter(project=memory.project, statuses=("active", "pending", "inactive"))
    wanted = _gist(memory)
    found = []
    for hit in full_text(store, words, flt, limit=CANDIDATES, mode="any"):
        if hit.memory.id == memory.id:
            continue
        score = fuzz.token_set_ratio(wanted, _gist(hit.memory))
        if score >= threshold:
            found.append((hit.memory, round(score, 1)))
    found.sort(key=lambda pair: (-pair[1], pair[0].id))
    return found[:limit]


# The fixed wording of machine-written memories (store/capture/heuristics.py, Ralph's failure
# records), matched on normalized text (lower case, single spaces).
_TEMPLATE = re.compile("|".join((
    r"\bkeeps failing:",
    r"\bfailed \d+ times in one session with the same error:",
    r"` fails[:;]", r"\bworks instead\b", r"\bthe agent found:", r"\bwhat worked:", r"\bfirst seen running \w+:",
    r"\bfix for `", r"` failing\b", r"` failed with:",
    r"\bit passed after changes to:",
    r"\bthe agent agreed:", r"\bchanged in response:",
    r"\bhook:",
    r"^failure:", r"^expected red:", r"\bcmd=", r",? ?exit=[^\s,]*,?", r",? ?error=", r",? ?next=",
)))


def _gist(memory: Memory) -> str:
    """Title and content as compared: normalized, without the wording machines put around them."""
    title, content = (_TEMPLATE.sub(" ", normalize_text(text)) for text in (memory.title, memory.content))
    return " ".join(f"{title} {content}".split())[:_TEXT]
