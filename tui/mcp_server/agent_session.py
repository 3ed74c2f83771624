"""One MCP connection as a memdeck session: what each tool does to the store, and the activity
it leaves in the session's log, so the workbench's live session view shows an agent searching,
remembering and judging memories as it happens.

Nothing here imports the MCP SDK: tools answer plain dicts and raise memdeck's own errors,
which the server turns into tool errors. The store is opened on the first call, not at start,
so a damaged or missing store is an answer to each call (and a repaired one is picked up)
instead of a server that fails to start.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from typing import Any, Callable, Mapping, Sequence

from store.api import iso, InvalidInput, MemdeckError, StoreError, Memory

import peewee  # after the store, which imports it without psycopg

# Where the agent's session id is found in the server's environment, first match wins.
SESSION_ENV = ("MEMDECK_SESSION", "CLAUDE_CODE_SESSION_ID")
# What the agent sees of a memory in search results.
SNIPPET_CHARS = 160
MAX_LIMIT = 100
# The longest memory id taken (ids are `mem-…`, an import's at most this long), and the longest
# search query or task: an argument is a stranger's, and neither is echoed nor logged whole.
MAX_ID_CHARS = 128
MAX_QUERY_CHARS = 4_000
# The most of a message or a query an entry of the session log keeps.
LOG_CHARS = 300


class AgentSession:
    """The tools of `memdeck mcp`, bound to one store and one memdeck session.

    `open_store` opens the store (the command passes `Store.open` with its options). The project
    of a call is its `project` argument, else `default_project` (the client's root, set by the
    server), else the store's own (the server's working directory).
    """

    def __init__(self, open_store: Callable[[], Any], *, agent: str = "mcp",
                 environ: Mapping[str, str] | None = None, pinned: bool = False) -> None:
        # `pinned`: the user chose the project (`--project`, `$MEMDECK_PROJECT`): every call
        # stays in it (the store's project), whatever project or memory id the agent names.
        self.pinned = pinned
        self._open_store = open_store
        self._store = None
        self._layers = None
        self.agent = agent
        self.default_project: str | None = None
        self.session_id: str | None = None  # made when the first call reaches the store
        self.environ = os.environ if environ is None else environ
        self._joined: tuple[tuple, str | None] | None = None  # (store state, agent session) last found
        # The last `context`: its task, and each memory's evidence for it (what `not_relevant`
        # feedback records).
        self.last_task: str | None = None
        self.last_evidence: dict[str, dict[str, float]] = {}

    # -- the store, the project, the session --------------------------------------------------

    @property
    def store(self):
        if self._store is None:
            self._store = self._open_store()
        return self._store

    @property
    def layers(self):
        """The own store and the layers read beside it (store.layers.layers; docs/team.md)."""
        if self._layers is None:
            from store.api import Layers

            self._layers = Layers.open(self.store)
        return self._layers

    def project(self, explicit: str | None) -> str:
        if explicit is not None:
            if not explicit.strip():
                raise InvalidInput("project must be a project's name, not empty")
            if self.pinned and explicit.strip() != self.store.project:
                raise InvalidInput(f"this server is pinned to project {self.store.project!r}; "
                                   f"it does not reach project {explicit.strip()!r}")
            return explicit.strip()
        if self.pinned:
            return self.store.project
        return self.default_project or self.store.project

    def _begin(self, project: str) -> str:
        """The memdeck session of this call: the agent's own session when it is known (its id in
        the environment, or the session a hook of the same agent process recorded; checked
        again at each call, so a `/clear` that starts a new agent session is followed), else
        one of the server's own, made at the first call."""
        joined = self._agent_session(project)
        if joined is not None and joined != self.session_id:
            self.store.sessions.ensure(joined, project=project, agent=self.agent, meta={"mcp": True})
            self.session_id = joined
        elif self.session_id is None:
            # Random from the start: lists cut session ids after a few characters.
            session_id = f"mcp-{secrets.token_hex(6)}"
            self.store.sessions.ensure(session_id, project=project, agent=self.agent, meta={"via": "mcp"})
            self.session_id = session_id
        return self.session_id

    def _agent_session(self, project: str) -> str | None:
        """The agent session this server belongs to: the newest of the one its environment names
        (`MEMDECK_SESSION`, or Claude Code's `CLAUDE_CODE_SESSION_ID`) and the newest live
        session a session-start hook recorded with this server's parent process among its
        ancestors. Read again only when the store changed."""
        from store.api import clean_field

        store = self.store
        changes = store.backend.own_changes()
        key = (project, store.data_version(), changes)
        if self._joined is not None and self._joined[0] == key:
            return self._joined[1]
        named = next((clean_field(self.environ[name].strip()[:200]) for name in SESSION_ENV
                      if self.environ.get(name, "").strip()), None)
        parent = os.getppid()
        hooked = next((s for s in store.sessions.recent(project, limit=50)
                       if s.ended_at is None and s.meta.get("via") == "hook"
                       and parent in (s.meta.get("pids") or ())), None)
        chosen = named
        if hooked is not None and hooked.id != named:
            try:
                older = named is None or store.sessions.get(named).started_at <= hooked.started_at
            except MemdeckError:  # the named session is not recorded yet: the hook's is newer
                older = True
            chosen = hooked.id if older else named
        self._joined = (key, chosen)
        return chosen

    def _log(self, kind: str, summary: str, *, memory_id: str | None = None,
             detail: dict[str, Any] | None = None) -> None:
        self.store.sessions.append_activity(self.session_id, kind, shortened(summary), memory_id=memory_id, detail=detail)

    def run(self, tool: str, project: str | None, work: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
        """Run one tool call in `project`. Store trouble becomes memdeck's error with a message
        for the agent; a failed call is logged as a `tool_error` when the store can take it."""
        try:
            name = self.project(project)
            self._begin(name)
            return work(name)
        except MemdeckError as exc:
            self._log_failure(tool, str(exc))
            raise
        except (sqlite3.DatabaseError, peewee.DatabaseError) as exc:
            from store.api import refusal

            # A team store's refusal (this user's role may not): its one line, not store trouble.
            error = refusal(exc, self._store.db if self._store is not None else None) or store_trouble(exc)
            self._log_failure(tool, str(error))
            raise error from None

    def _log_failure(self, tool: str, message: str) -> None:
        if self.session_id is None:
            return
        try:
            self._log("tool_error", f"memdeck {tool}: {message}")
        except (MemdeckError, sqlite3.DatabaseError, peewee.DatabaseError):
            pass  # the store that failed the call may not take the entry either

    def close(self) -> None:
        """The connection ended: the session ends with it."""
        if self._store is None:
            return
        try:
            if self.session_id is not None:
                from store.api import settle_listings

                # The session ends: the lines its last primes listed that were not opened count.
                settle_listings(self._store, self.session_id, self.layers.keep_listing)
                self._store.sessions.update(self.session_id, ended_at=self._store.now())
        except (MemdeckError, sqlite3.DatabaseError, peewee.DatabaseError):
            pass
        finally:
            if self._layers is not None:
                self._layers.close()
                self._layers = None
            self._store.close()
            self._store = None

    # -- the tools ----------------------------------------------------------------------------

    def search(self, query: str, type: str | None = None, hat: str | None = None, limit: int = 10,
               project: str | None = None) -> dict[str, Any]:
        from store.api import MemoryFilter

        def work(name: str) -> dict[str, Any]:
            if not query.strip():
                raise InvalidInput("query must have some words to search for")
            check_length("query", query, MAX_QUERY_CHARS)
            if not 1 <= limit <= MAX_LIMIT:
                raise InvalidInput(f"limit must be from 1 to {MAX_LIMIT}, not {limit}")
            store = self.store
            flt = MemoryFilter(project=name, statuses=("active",),
                               types=(store.check_type(type),) if type else (),
                               hats=(hat.strip(),) if hat and hat.strip() else ())
            hits = self.layers.search(query, flt, limit=limit)
            found = [summary(h.memory) for h in hits]
            self._log("lookup", f"searched {shortened(query)!r}: {len(found)} found",
                      detail={"query": shortened(query), "ids": [m["id"] for m in found]})
            return {"project": name, "memories": found}

        return self.run("search", project, work)

    def context(self, task: str, hat: str | None = None, paths: Sequence[str] | None = None,
                budget: int | None = None, project: str | None = None) -> dict[str, Any]:
        def work(name: str) -> dict[str, Any]:
            check_length("task", task, MAX_QUERY_CHARS)
            result = self._prime(name, hat, task, paths or (), budget)
            self.last_task = task
            self.last_evidence = {r.memory.id: {k: r.signals.get(k, 0.0) for k in ("relevance", "cosine")}
                                  for r in result.included}
            return {"project": name, "block": result.block,
                    "ids": [r.memory.id for r in result.included],
                    "layers": {r.memory.id: r.memory.layer for r in result.included},
                    "tokens": result.tokens, "budget": result.budget}

        return self.run("context", project, work)

    def _prime(self, project: str, hat: str | None, task: str, paths: Sequence[str], budget: int | None):
        # `prime`'s own path, recorded as `prime --record` records it: usage boost, `used`
        # events, an `injected` entry in this session's log. What this session remembered is
        # in: the agent asked, and its own context may have been compacted since.
        from store.api import InjectionContext, prime

        context = InjectionContext(hat=(hat or "").strip() or None, task=task, paths=tuple(paths),
                                   session_id=self.session_id, own_memories=True, budget=budget,
                                   project=project)
        return prime(self.store, context, record=True, layers=self.layers)

    def remember(self, content: str, type: str, title: str | None = None,
                 tags: Sequence[str] | str | None = None, paths: Sequence[str] | str | None = None,
                 hat: str | None = None, scope: str | None = None,
                 project: str | None = None) -> dict[str, Any]:
        def work(name: str) -> dict[str, Any]:
            from store.api import add_anchored, path_part

            # `memdeck add`'s rules: a memory that repeats an active one reinforces it. The paths
            # are its file refs, and anchors where they name files (or lines: `a.py:10-20`) that
            # exist; the rest are skipped, not refused (docs/anchors.md).
            refs = [paths] if isinstance(paths, str) else list(paths or ())
            result, _ = add_anchored(self.store, content, refs, strict=False, type=type, title=title,
                                     tags=tags, file_refs=[path_part(p) for p in refs], hat=hat, scope=scope, source="explicit",
                                     status="active", session_id=self.session_id, project=name, actor="mcp")
            memory = result.memory
            kind = "memory_created" if result.created else "memory_reinforced"
            self._log(kind, f"{result.action} {memory.id}: {memory.title}", memory_id=memory.id,
                      detail={"type": memory.type, "confidence": memory.confidence})
            return {"id": memory.id, "action": result.action, "confidence": memory.confidence,
                    "project": memory.project}

        return self.run("remember", project, work)

    def get(self, id: str, project: str | None = None) -> dict[str, Any]:
        def work(name: str) -> dict[str, Any]:
            memory = self._memory(id, project)
            task = self._opened(memory)
            history = [e.to_json() for e in self.layers.store(memory.layer).events(memory.id)]
            return {**memory.to_json(), "history": history, **({"opened_for": task} if task else {})}

        return self.run("get", project, work)

    def feedback(self, id: str, verdict: str, note: str | None = None, replacement: str | None = None,
                 project: str | None = None) -> dict[str, Any]:
        from store.api import give

        def work(name: str) -> dict[str, Any]:
            # A team memory's feedback goes to the team store, as this database user; the team
            # file's memories are read-only (store.layers.feedback; docs/team.md).
            memory = self._memory(id, project)
            result = give(self.layers, memory, verdict, note=note, replacement=replacement,
                          session_id=self.session_id, actor="mcp", task=self.last_task,
                          evidence=self.last_evidence.get(memory.id), guarded=True,
                          held_because=self._burst())
            change = f"{result.before.confidence:.2f} → {result.after.confidence:.2f}"
            if result.held is not None:
                change = f"held for review ({result.held.id}): {result.why_held}"
            self._log("feedback", f"{verdict} {memory.id}: {change}", memory_id=memory.id,
                      detail={"verdict": verdict, **({"note": note} if note else {}),
                              **({"replacement": result.replacement.id} if result.replacement else {}),
                              **({"held": result.held.id} if result.held else {})})
            return {"verdict": verdict, "layer": memory.layer, **result.to_json()}

        return self.run("feedback", project, work)

    def _opened(self, memory: Memory) -> str | None:
        """The agent opened `memory`: a lookup, and if a prime of this session listed it (a line
        of its index, or in its block) and the session had not opened it yet, evidence it was
        wanted for that prime's task (`store.engine.openings`). The task, or None."""
        from store.api import OPENED, keep_opened, opening, opening_detail

        store = self.store
        task = opening(store, self.session_id, memory.id)
        with store.transaction():
            if task is not None:
                if memory.layer == "own":
                    keep_opened(store, memory, task, session_id=self.session_id, actor="mcp")
                else:  # another layer's: kept for you in the own store, as its verdicts are
                    self.layers.keep_listing(memory.id, OPENED, task, self.session_id)
            self._log("lookup", f"{'opened' if task else 'read'} {memory.id}: {memory.title}", memory_id=memory.id,
                      detail=opening_detail(task) if task else None)
        return task

    def _burst(self) -> str:
        """Why this verdict is held as part of a burst: the session already gave
        `sessions.feedback_limit` verdicts (held ones count too); else ''."""
        limit = int(self.store.config.sessions.feedback_limit)
        given = len(self.store.sessions.activities(self.session_id, kinds=["feedback"]))
        return f"more than {limit} verdicts in this session" if given >= limit else ""

    def _memory(self, memory_id: str, project: str | None) -> Memory:
        """The memory `memory_id`, from the first layer holding it (marked with its layer); with
        an explicit project, one of that project only. An id
        no memory could have is refused without being quoted back."""
        memory_id = memory_id.strip()
        if not memory_id or len(memory_id) > MAX_ID_CHARS or not memory_id.isprintable():
            raise InvalidInput(f"not a memory id (ids look like mem-20260301-a1b2, at most {MAX_ID_CHARS} characters)")
        memory = self.layers.get(memory_id)
        if self.pinned and memory.project != self.store.project:
            raise InvalidInput(f"memory {memory.id} belongs to project {memory.project!r}; this server "
                               f"is pinned to project {self.store.project!r}")
        if project is not None and memory.project != project.strip():
            raise InvalidInput(f"memory {memory.id} belongs to project {memory.project!r}, not {project.strip()!r}")
        if memory.status == "deleted":
            raise InvalidInput(f"memory {memory.id} is in the trash")
        return memory

    # -- the resource and the prompt ----------------------------------------------------------

    def memory_text(self, memory_id: str) -> str:
        """`memdeck://memory/{id}`: the memory and its history as Markdown."""

        def work(name: str) -> dict[str, Any]:
            memory = self._memory(memory_id, None)
            self._opened(memory)
            return {"text": render_memory(memory, self.layers.store(memory.layer).events(memory.id))}

        return self.run("resource", None, work)["text"]

    def prime_block(self, hat: str | None, task: str) -> str:
        """The `prime` prompt: the block `context` gives, for a person to put into the chat."""

        def work(name: str) -> dict[str, Any]:
            block = self._prime(name, hat, task, (), None).block
            return {"block": block or f"(memdeck: no memory of project {name!r} is relevant enough to inject)"}

        return self.run("prime", None, work)["block"]


def shortened(text: str, limit: int = LOG_CHARS) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_length(name: str, text: str, limit: int) -> None:
    if len(text) > limit:
        raise InvalidInput(f"{name} is {len(text)} characters long, over the limit of {limit}")


def summary(memory: Memory) -> dict[str, Any]:
    flat = " ".join(memory.content.split())
    snippet = flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"
    return {"id": memory.id, "type": memory.type, "title": memory.title,
            "confidence": memory.confidence, "snippet": snippet, "layer": memory.layer}


def render_memory(memory: Memory, events) -> str:
    fields = [("type", memory.type), ("status", memory.status), ("confidence", f"{memory.confidence:.2f}"),
              ("project", memory.project), ("hat", memory.hat), ("scope", memory.scope),
              ("tags", ", ".join(memory.tags)), ("files", ", ".join(memory.file_refs)),
              ("source", memory.source), ("created", iso(memory.created_at))]
    lines = [f"# {' '.join(memory.title.split())}", ""]
    lines += [f"- {label}: {value}" for label, value in fields if value]
    lines += ["", memory.content, "", "## History", ""]
    for event in events:
        after = "" if event.confidence_after is None else f" → {event.confidence_after:.2f}"
        note = f" ({event.detail['note']})" if event.detail.get("note") else ""
        lines.append(f"- {iso(event.at)} {event.kind}{after} by {event.actor}{note}")
    return "\n".join(lines) + "\n"


def store_trouble(exc: Exception) -> StoreError:
    """The message for an SQLite error met mid-call: a busy store, or a damaged one."""
    if "locked" in str(exc) or "busy" in str(exc):
        return StoreError("the store is busy: another process held its write lock too long; "
                          "nothing was changed, try again")
    return StoreError(f"the store could not be read or written ({exc}); it may be damaged: "
                      "`memdeck doctor` checks it")

