"""The skill text: what an agent is told so that it records memories memdeck can ingest.

Seed 002's "Using Project Memories" skill, adapted to memdeck: both marker grammars (seed 000's
`MEMORY:type:content` and seed 001's `[MEMORY:type:scope] text`), memdeck's types, and the rule
that only the agent's own text counts. `memdeck skill` prints it; the types listed are the
store's effective vocabulary, so extra types from config show up too.
"""

from __future__ import annotations

from store.engine.vocabulary import Vocabulary

_SKILL = """\
## Recording project memories

This project keeps long-term memories across agent sessions with memdeck. Memories relevant to
your task are already in your context (the project knowledge section). When you learn something
a future session should know, write a memory marker in your own reply, on its own line:

    MEMORY:pattern:Tests use table-driven cases with t.Run subtests
    [MEMORY:pitfall:billing-api] Retries must reuse the idempotency key, or charges double.

- The word after `MEMORY:` is the type: {types}.
- In the bracket form, an optional second part names the scope: the service or component the
  memory is about (`[MEMORY:timing:jellyfin]`).
- The text runs to the end of the line, and on through the lines right below it until a blank
  line, so a longer memory can carry its context:

      [MEMORY:fix] Context: `npm run build` failed with "generate is not a function".
      Solution: pin next to 15.3 in package.json.
      Prevention: run the build before committing dependency bumps.

When to record a memory:
- you discover how this codebase does something (pattern, convention, architecture);
- you make a decision and know why (decision, constraint);
- you solve a problem that may come back (fix), or hit something that does not work (pitfall).

Be specific ("API handlers live in internal/api/, one file per resource", not "good structure"),
say why, one learning per marker, one or two sentences. Repeating a memory that is already known
reinforces it; that is fine. Never put secrets in a memory: they are redacted anyway.
Markers inside code blocks and in quoted text are not recorded, only the ones you write yourself.
"""


def skill_text(vocabulary: Vocabulary | None = None) -> str:
    types = (vocabulary or Vocabulary()).types
    return _SKILL.format(types=", ".join(types))
