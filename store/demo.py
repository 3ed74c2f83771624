"""The demo store: a few projects with months of believable history, built deterministically
from a seed and a fixed "now", so `memdeck demo`, the screenshots and the snapshot tests all
show the same store.

Everything is written through the real `Store` API with a frozen clock moved along the
timeline, so histories hold the same events real use produces: created, used, reinforced,
decayed, edited, superseded, merged-away deletes and trash. Two memories of the main project are
anchored to its code, a few files written beside the store (`code_folder`): one still holds, the
other's lines changed after it was anchored, so the anchors view (`v`) has a change to show.
`build_large` makes the synthetic 100,000-memory store the benchmarks use.

It stands on the facade's floor, not the engine's: it uses anchors (`store.anchors`) as a user does.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass
from pathlib import Path

from store.anchors.anchoring import anchor_memory
from store.anchors.verify import verify
from store.engine.clock import DAY, FrozenClock
from store.engine.config import Config
from store.engine.core import Change, Store, content_hash
from store.engine.errors import InvalidInput
from store.engine.models import EventRow, MemoryRow
from store.engine.vocabulary import HATS, TYPES

MINUTE = 60.0
TEAM = ("ana", "bo", "chen")  # who made the demo's changes (not the OS user: screenshots are the same everywhere)
INACTIVE_BELOW = 0.3  # `confidence.inactive_below` in the default config
MAIN_PROJECT = "eve-intel"


@dataclass(frozen=True)
class Seeded:
    """One demo memory: where it lives and what it says."""

    project: str
    type: str
    hat: str | None
    scope: str | None
    title: str
    content: str
    tags: str = ""
    files: str = ""
    source: str = "explicit"


MEMORIES: tuple[Seeded, ...] = (
    # eve-intel: a TypeScript service that follows zKillboard's killmail feed and ESI.
    Seeded("eve-intel", "pitfall", "critic", "zkill", "Websocket reconnect drops after idle",
           "The zKillboard websocket silently drops after ~10 min idle; nothing fires `close`.\n\n"
           "Send a `ping` frame every 30 s and treat two missed `pong`s as a disconnect.",
           "websocket,retry", "src/feed/socket.ts"),
    Seeded("eve-intel", "fix", "creator", "zkill", "Retry backoff must cap at 60 s",
           "Exponential backoff for the feed reconnect must cap at 60 s with jitter, or a long "
           "outage leaves the client sleeping for hours after zKillboard is back.",
           "retry,backoff", "src/feed/reconnect.ts"),
    Seeded("eve-intel", "pitfall", "critic", "esi", "ESI rate limit returns 420, not 429",
           "ESI's error limiter answers **420** with `X-Esi-Error-Limit-Reset`; generic 429 "
           "handling never sees it. Read the header and pause the whole ESI queue.",
           "esi,rate-limit", "src/esi/client.ts"),
    Seeded("eve-intel", "decision", "planner", "zkill", "Chose polling RedisQ over SSE for the killmail feed",
           "RedisQ long-polling survives proxies that buffer server-sent events; the latency cost "
           "(~2 s) is fine for intel. Revisit if zKillboard drops RedisQ.",
           "feed,architecture", "src/feed/*.ts"),
    Seeded("eve-intel", "architecture", "planner", None, "Three stages: feed → enrich → notify",
           "Killmails flow through three queues: `feed` (raw killmail ids), `enrich` (ESI lookups "
           "for names, systems, ship types) and `notify` (Discord webhooks). Each stage is its own "
           "worker and can be restarted alone.", "queues", "src/pipeline/*.ts"),
    Seeded("eve-intel", "dependency", "explorer", "esi", "esi.js pinned to 3.x for the swagger client",
           "`esi.js` 4.x generates the client at runtime from the swagger spec and breaks our "
           "typed wrappers; stay on 3.x until `src/esi/types.ts` is regenerated.",
           "esi,deps", "package.json"),
    Seeded("eve-intel", "constraint", "planner", "discord", "Discord webhooks allow 30 messages a minute",
           "A webhook accepts 30 messages per minute per channel; batch kills into embeds of up to "
           "10 and queue the rest rather than dropping them.", "discord,rate-limit", "src/notify/discord.ts"),
    Seeded("eve-intel", "pattern", "creator", "enrich", "Cache ESI names by id forever, prices for an hour",
           "Names of characters, corps, systems and types never change for an id: cache them with no "
           "expiry. Market prices go stale: one hour.", "cache,esi", "src/enrich/cache.ts"),
    Seeded("eve-intel", "convention", "editor", None, "Killmail ids are strings end to end",
           "Killmail ids exceed 2^31 and JSON numbers lose precision in some clients: keep ids as "
           "strings from the feed to the database.", "types", "src/types/killmail.ts"),
    Seeded("eve-intel", "context", "explorer", None, "Staging runs against Tranquility, not Singularity",
           "There is no Singularity feed on zKillboard, so staging reads live Tranquility data with "
           "notifications pointed at #intel-staging.", "staging", ".env.staging"),
    Seeded("eve-intel", "preference", "editor", None, "Prefer small PRs with the migration first",
           "The maintainer reviews database migrations apart from the code that uses them: open the "
           "migration PR first.", "review"),
    Seeded("eve-intel", "timing", "explorer", "esi", "ESI cache headers expire at downtime, 11:00 UTC",
           "Most ESI routes set `Expires` to the next downtime at 11:00 UTC; a job that refreshes "
           "at 10:55 gets stale data for the whole day.", "esi,downtime", "src/jobs/refresh.ts"),
    Seeded("eve-intel", "behavior", "critic", "zkill", "RedisQ returns null package when idle",
           "An idle RedisQ poll returns `{\"package\": null}` after 10 s; that is not an error and "
           "must not count toward the failure budget.", "feed", "src/feed/redisq.ts"),
    Seeded("eve-intel", "remediation", "creator", "notify", "Stuck notify queue: drain with the replay script",
           "When Discord is down for a long time the notify queue grows; after recovery run "
           "`npm run replay -- --since 2h` instead of restarting, which drops the backlog.",
           "runbook,discord", "scripts/replay.ts"),
    Seeded("eve-intel", "maintenance", "editor", None, "Rotate the ESI refresh token every 90 days",
           "CCP expires SSO refresh tokens we do not use for 90 days; the weekly job touches it, but "
           "after a long outage re-authorize with `npm run sso`.", "sso,esi", "scripts/sso.ts"),
    Seeded("eve-intel", "fix", "creator", "enrich", "Resolve unknown type ids through /universe/names",
           "New ships appear in killmails before the SDE update; fall back to ESI "
           "`/universe/names` in batches of 1000 ids.", "sde,esi", "src/enrich/types.ts"),
    Seeded("eve-intel", "pitfall", "explorer", "enrich", "Structure kills have no solar system in the feed",
           "Citadel killmails from RedisQ sometimes lack `solar_system_id` until ESI's killmail "
           "endpoint is queried; do not drop them.", "structures", "src/enrich/killmail.ts"),
    Seeded("eve-intel", "decision", "planner", "storage", "SQLite over Postgres for the kill archive",
           "A single writer and ~40k kills a day fit SQLite in WAL mode; Postgres adds an operated "
           "service for nothing. Archive older than 90 days to parquet.", "storage", "src/db/*.ts"),
    Seeded("eve-intel", "pattern", "critic", "notify", "Dedup notifications by killmail id and channel",
           "The same kill can arrive twice after a reconnect: keep a 24 h set of "
           "`(killmail_id, channel)` pairs before posting.", "dedup", "src/notify/dedup.ts"),
    Seeded("eve-intel", "convention", "editor", None, "Tests name the behaviour, not the function",
           "Test names read like `drops duplicate kills after reconnect`, never `test_dedup_2`.", "tests"),
    Seeded("eve-intel", "pitfall", "creator", "esi", "ESI 502s come in bursts after downtime",
           "Right after 11:00 UTC, ESI answers 502 for a few minutes; retrying immediately burns the "
           "error limit. Back off for 5 minutes when the first 502 follows downtime.",
           "esi,downtime", "src/esi/client.ts"),
    Seeded("eve-intel", "architecture", "planner", "notify", "Webhook formatting lives in one module",
           "All Discord embed formatting is in `src/notify/format.ts` so the colour and field "
           "rules stay the same for every channel.", "discord", "src/notify/format.ts"),
    Seeded("eve-intel", "context", "explorer", "zkill", "zKillboard asks for a User-Agent with contact",
           "Requests without a descriptive User-Agent (with an email) get throttled first.", "http"),
    Seeded("eve-intel", "pitfall", "critic", None,
           "Log lines hold [bold]markup[/bold] and \x1b[31mescapes\x1b[0m",
           "Pilot names are user input. One was `[bold red]CCP[/]` and another "
           "`[link=https://evil.example]free isk[/link]`; a raw escape `\x1b[2J` cleared the "
           "operator's terminal and a bell `\x07` rang. Log them as data, never as markup.",
           "security,logging", "src/log.ts"),
    Seeded("eve-intel", "fix", "editor", "notify", "Escape Discord markdown in pilot names",
           "Pilot names with `*` or `_` broke embeds; escape Discord markdown before formatting.",
           "discord", "src/notify/format.ts"),
    Seeded("eve-intel", "dependency", "explorer", None, "Node 20 is required for fetch keep-alive",
           "The undici agent options we rely on landed in Node 20; CI and the Dockerfile pin it.",
           "node,ci", "Dockerfile,.nvmrc"),
    Seeded("eve-intel", "behavior", "explorer", "enrich", "ESI names endpoint rejects duplicate ids",
           "`POST /universe/names` answers 400 if the same id appears twice in the body; dedupe "
           "before batching.", "esi", "src/enrich/names.ts"),
    Seeded("eve-intel", "timing", "critic", "notify", "Batch window of 5 s keeps big fights readable",
           "During large fights, posting every kill floods the channel; a 5 s batch window keeps "
           "it readable without delaying solo kills noticeably.", "discord,batching"),
    # ledger-api: a Python payments service.
    Seeded("ledger-api", "constraint", "planner", "payments", "Amounts are integer minor units",
           "Never store money as float: amounts are integers in minor units with an ISO 4217 "
           "currency code beside them.", "money", "ledger/models.py"),
    Seeded("ledger-api", "pitfall", "critic", "payments", "Idempotency keys expire after 24 h at the PSP",
           "The payment provider forgets idempotency keys after 24 h; retries of older requests "
           "must look up the payment first.", "idempotency", "ledger/psp/client.py"),
    Seeded("ledger-api", "decision", "planner", None, "Double-entry journal, never update balances",
           "Balances are derived from journal entries; an UPDATE of a balance column is a bug.",
           "accounting", "ledger/journal.py"),
    Seeded("ledger-api", "pattern", "creator", "payments", "Outbox table for webhooks",
           "Write webhook events to the outbox in the same transaction as the journal entry; a "
           "worker delivers them.", "outbox", "ledger/outbox.py"),
    Seeded("ledger-api", "fix", "creator", "reports", "Month-end report must use the ledger's timezone",
           "Reports grouped by UTC day split Australian customers' month-end; group by the "
           "ledger's configured timezone.", "timezone", "ledger/reports/*.py"),
    Seeded("ledger-api", "convention", "editor", None, "Alembic migrations are reversible",
           "Every migration has a working `downgrade`; CI runs upgrade, downgrade, upgrade.",
           "migrations", "migrations/*.py"),
    Seeded("ledger-api", "remediation", "creator", "payments", "Replaying a failed settlement file",
           "Settlement files that failed parsing go to `settlements/failed/`; fix the row and run "
           "`ledger settle --replay FILE`; it is idempotent.", "runbook"),
    Seeded("ledger-api", "maintenance", "editor", None, "Vacuum the audit table monthly",
           "The audit table grows ~2 GB a month; the monthly job partitions and vacuums it.", "db"),
    Seeded("ledger-api", "context", "explorer", None, "Sandbox PSP rejects amounts ending in 51",
           "The provider's sandbox declines any amount ending in 51 minor units on purpose.",
           "testing,psp"),
    Seeded("ledger-api", "preference", "editor", None, "Type hints everywhere, mypy strict in ledger/",
           "The team runs mypy --strict on `ledger/`; new modules must pass it.", "typing"),
    # pixel-forge: a Rust image pipeline.
    Seeded("pixel-forge", "architecture", "planner", "decode", "Decoders run on a rayon pool, encoders on tokio",
           "CPU-bound decoding uses the rayon pool; encoders stream to S3 on tokio. Never block a "
           "tokio worker with decoding.", "concurrency", "src/pipeline.rs"),
    Seeded("pixel-forge", "pitfall", "critic", "decode", "EXIF orientation is applied twice with image 0.24",
           "`image` 0.24 applies EXIF orientation on decode; our own rotate step turned photos "
           "upside down. Remove the manual rotate.", "exif", "src/decode/jpeg.rs"),
    Seeded("pixel-forge", "dependency", "explorer", "encode", "libavif needs nasm in the build image",
           "The avif feature builds libavif from source and needs `nasm`; the CI image has it, "
           "local macOS builds need `brew install nasm`.", "avif,build", "Cargo.toml"),
    Seeded("pixel-forge", "fix", "creator", "encode", "Clamp quality to 1..=100 before webp encode",
           "libwebp panics on quality 0; the API accepted it. Clamp and return a 422 on bad input.",
           "webp,validation", "src/encode/webp.rs"),
    Seeded("pixel-forge", "behavior", "explorer", None, "S3 multipart needs parts of at least 5 MiB",
           "All parts but the last must be 5 MiB or more, or CompleteMultipartUpload fails late.",
           "s3", "src/store/s3.rs"),
    Seeded("pixel-forge", "timing", "critic", "decode", "Thumbnails over 40 ms mean the cache is cold",
           "Warm thumbnails take 3–8 ms; anything over 40 ms is a cache miss and worth a metric.",
           "perf", "src/thumb.rs"),
)

# Heuristic candidates waiting in the inbox.
CANDIDATES: tuple[Seeded, ...] = (
    Seeded("eve-intel", "fix", "creator", "esi", "Check X-Esi-Error-Limit-Remain before retrying",
           "Before retrying an ESI error, read `X-Esi-Error-Limit-Remain`; below 10 wait for the reset.",
           "esi", "src/esi/client.ts", "automatic"),
    Seeded("eve-intel", "pitfall", "explorer", "zkill", "RedisQ queueID must be unique per process",
           "Two workers sharing a RedisQ `queueID` each get half the kills.", "feed", "", "automatic"),
    Seeded("eve-intel", "context", "explorer", None, "The npm test suite needs a running Redis",
           "`npm test` fails with ECONNREFUSED unless Redis listens on 6379; use `docker compose up redis`.",
           "tests,redis", "", "automatic"),
    Seeded("ledger-api", "pitfall", "critic", "payments", "Refunds can exceed the captured amount with fees",
           "Partial refunds plus fee reversals can exceed the capture; validate against the net.",
           "refunds", "ledger/refunds.py", "automatic"),
)

# What each candidate's rule saw: (the rule, [(line, kind, minutes before it was proposed, text)]).
CANDIDATE_EVIDENCE: dict[str, tuple[str, list[tuple[int, str, int, str]]]] = {
    "Check X-Esi-Error-Limit-Remain before retrying": ("fix", [
        (212, "tool_error", 14, "npm test -- esi: FAILED esi/client.test.ts › retries stop at the error limit"),
        (240, "tool_result", 3, "npm test -- esi: passed")]),
    "RedisQ queueID must be unique per process": ("rejection", [
        (88, "rejection", 6, "No: two workers must never share a queueID, each gets half the kills. "
                             "Derive it from the hostname and pid.")]),
    "The npm test suite needs a running Redis": ("pitfall", [
        (31, "tool_error", 40, "Bash: Error: connect ECONNREFUSED 127.0.0.1:6379"),
        (47, "tool_error", 33, "Bash: Error: connect ECONNREFUSED 127.0.0.1:6379"),
        (63, "tool_error", 25, "Bash: Error: connect ECONNREFUSED 127.0.0.1:6379")]),
}

# Memories that end in the trash (deleted by a person after review).
TRASHED: tuple[Seeded, ...] = (
    Seeded("eve-intel", "context", "explorer", None, "The feed used to run on a Raspberry Pi",
           "Before 2025 the feed ran on a Raspberry Pi under the desk; irrelevant now.", "history"),
    Seeded("eve-intel", "preference", "editor", None, "Use tabs in TypeScript files",
           "Someone preferred tabs; the repo's prettier config uses two spaces.", "style"),
)

SESSIONS = (
    # (project, hat, task, days before now)
    ("eve-intel", "explorer", "Map the killmail pipeline and its external APIs", 120),
    ("eve-intel", "planner", "Plan the move from SSE to RedisQ", 95),
    ("eve-intel", "creator", "Implement ESI caching and rate limiting", 60),
    ("eve-intel", "critic", "Review the reconnect logic in the feed client before release", 21),
    ("eve-intel", "editor", "Tidy notification formatting and naming", 7),
    ("eve-intel", "critic", "Audit logging of user-controlled names", 2),
    ("ledger-api", "planner", "Design the settlement import", 80),
    ("ledger-api", "creator", "Build the webhook outbox", 30),
    ("pixel-forge", "creator", "Add avif and webp encoders", 45),
)


def build_demo(path: Path | str, *, now: float, seed: int = 7) -> Path:
    """Create the demo store at `path` (which must not exist yet) as of `now`."""
    path = Path(path)
    rng = random.Random(seed)
    clock = FrozenClock(now)
    code = _write_code(code_folder(path))
    with Store.open(path, project=MAIN_PROJECT, config=Config.defaults(), clock=clock,
                    project_root=code) as store:
        sessions, latest = _sessions(store, clock, rng, now)
        memory_ids = []
        for n, item in enumerate(MEMORIES):
            store.author = TEAM[n % len(TEAM)]  # each change's author: a team shares the store
            memory_ids.append(_memory(store, clock, rng, now, item, sessions))
        store.author = TEAM[0]
        _log_created(store)
        _supersede(store, clock, memory_ids, now)
        for item in CANDIDATES:
            drawn = rng.uniform(0.2, 3)
            session_id, start = latest.get((item.project, item.hat), (None, 0.0))
            # Noticed during the hat's latest session, near its end: the evidence is stamped
            # inside the session it names, never months after the session ended.
            clock.at = start + SESSION_SECONDS * (0.75 + 0.025 * drawn) if session_id else now - drawn * DAY
            rule, seen = CANDIDATE_EVIDENCE.get(item.title, (None, []))
            evidence = [{"line": line, "kind": kind, "at": clock.at - minutes * 60, "text": text,
                         "session": session_id} for line, kind, minutes, text in seen]
            store.add(item.content, type=item.type, title=item.title, tags=item.tags, hat=item.hat,
                      scope=item.scope, file_refs=item.files, source="automatic", status="pending",
                      project=item.project, memory_id=_id(rng, clock.at), actor="ingest",
                      session_id=session_id, reinforce=False,
                      meta={"heuristic": rule, "evidence": evidence} if rule else None)
        for item in TRASHED:
            memory_id = _memory(store, clock, rng, now, item, sessions)
            clock.at = now - rng.uniform(0.5, 1.5) * DAY  # after the last event of its history
            store.trash.delete([memory_id], actor="ui")
        _anchor(store, clock, code, dict(zip((m.title for m in MEMORIES), memory_ids)), now)
        clock.at = now
    return path


# -- the main project's code, for its anchors ------------------------------------------------------

# Each file as it was when its memory was anchored, and as it is now (None: unchanged), with the
# lines anchored. The 420 handling was "simplified" away after the pitfall was learned: the memory
# that warns about it is now stale, which is the story anchors exist to tell.
CODE: dict[str, tuple[str, str | None]] = {
    "src/esi/client.ts": (
        "import { sleep } from '../util/sleep';\n"
        "\n"
        "export async function esiGet(url: string): Promise<Response> {\n"
        "  const response = await fetch(url);\n"
        "  if (response.status === 420) {\n"
        "    // The error limiter: pause the whole ESI queue until it resets.\n"
        "    const reset = Number(response.headers.get('X-Esi-Error-Limit-Reset') ?? '60');\n"
        "    await sleep(reset * 1000);\n"
        "    return esiGet(url);\n"
        "  }\n"
        "  return response;\n"
        "}\n",
        "import { sleep } from '../util/sleep';\n"
        "\n"
        "export async function esiGet(url: string): Promise<Response> {\n"
        "  const response = await fetch(url);\n"
        "  if (response.status === 429) {\n"
        "    // Too many requests: wait a minute and try again.\n"
        "    const wait = 60_000;\n"
        "    await sleep(wait);\n"
        "    return esiGet(url);\n"
        "  }\n"
        "  return response;\n"
        "}\n",
    ),
    "src/enrich/cache.ts": (
        "const NAME_TTL = Infinity; // names never change for an id\n"
        "const PRICE_TTL = 60 * 60 * 1000; // market prices go stale within the hour\n"
        "\n"
        "export const ttlFor = (kind: 'name' | 'price') => (kind === 'name' ? NAME_TTL : PRICE_TTL);\n",
        None,
    ),
}
ANCHORED = (
    ("ESI rate limit returns 420, not 429", "src/esi/client.ts:5-10"),
    ("Cache ESI names by id forever, prices for an hour", "src/enrich/cache.ts:1-2"),
)
_MADE_BY_DEMO = ".memdeck-demo"  # in a code folder the demo wrote, so a rebuild may write it again


def code_folder(path: Path) -> Path:
    """Where the demo store at `path` keeps its main project's code: `demo.db` → `demo-code/`."""
    return path.with_name(f"{path.stem}-code")


def _write_code(folder: Path) -> Path:
    """The code as it was when anchored. A folder of that name the demo did not make is
    refused: the demo never writes over someone's files."""
    if folder.exists() and not (folder / _MADE_BY_DEMO).exists():
        raise InvalidInput(f"{folder} exists and is not a demo's code folder: choose another --path")
    for name, (before, _after) in CODE.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(before, encoding="utf-8")
    (folder / _MADE_BY_DEMO).write_text("written by `memdeck demo`; rebuilt with it\n", encoding="utf-8")
    return folder


def _anchor(store: Store, clock: FrozenClock, code: Path, ids: dict[str, str], now: float) -> None:
    """Anchor the memories to the code as it was, change the code, and check: as a user's
    `memdeck verify` would find it two days ago."""
    for title, spec in ANCHORED:
        # After the rest of its history (a timeline never runs backwards), before the check.
        clock.at = min(now - 3 * DAY, max(now - 20 * DAY, store.events(ids[title])[-1].at + 3600))
        anchor_memory(store, ids[title], [spec], actor="ui")
    for name, (_before, after) in CODE.items():
        if after is not None:
            (code / name).write_text(after, encoding="utf-8")
    clock.at = now - 2 * DAY
    verify(store, [ids[title] for title, _ in ANCHORED])


# How long each demo session lasts: its log's steps come first, the memories it learned (5 to 50
# minutes in) and the candidates it left come before its end.
SESSION_SECONDS = 3600.0


def _id(rng: random.Random, at: float) -> str:
    return f"mem-{int(at)}-{rng.getrandbits(16):04x}"


def _sessions(store: Store, clock: FrozenClock, rng: random.Random, now: float) -> tuple[dict, dict]:
    """Sessions with activity logs; returns the first and the latest (session id, start) per
    (project, hat)."""
    first: dict[tuple[str, str], tuple[str, float]] = {}
    latest: dict[tuple[str, str], tuple[str, float]] = {}
    for project, hat, task, days in SESSIONS:
        start = now - days * DAY + rng.uniform(8, 16) * 3600
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        clock.at = start
        store.sessions.ensure(session_id, project=project, agent="claude-code", hat=hat, task=task,
                             started_at=start)
        steps = [
            ("prompt", task),
            ("thinking", "Start from the entry points and the config."),
            ("tool_use", "Read src/feed/socket.ts" if project == "eve-intel" else "Read README.md"),
            ("tool_result", "218 lines"),
            ("assistant", "The reconnect path never resets the backoff after a success."),
            ("tool_use", "Bash npm test" if project == "eve-intel" else "Bash make test"),
            ("tool_error", "exit 1: 2 failing tests"),
            ("marker", f"[MEMORY:{'pitfall' if hat == 'critic' else 'pattern'}:{project}] noted"),
            ("memory_created", "stored a memory from the marker"),
            ("candidate", "a heuristic candidate went to the inbox"),
            ("summary", f"Done: {task.lower()}."),
        ]
        for seq, (kind, summary) in enumerate(steps):
            store.sessions.append_activity(session_id, kind, summary, at=start + seq * 47, seq=seq)
        store.sessions.update(session_id, ended_at=start + SESSION_SECONDS,
                             files_touched=["src/feed/socket.ts"] if project == "eve-intel" else [])
        first.setdefault((project, hat), (session_id, start))
        latest[(project, hat)] = (session_id, start)
    return first, latest


def _memory(store: Store, clock: FrozenClock, rng: random.Random, now: float, item: Seeded,
            sessions: dict) -> str:
    """Add one memory some months back, then play a history of use, reinforcement, decay and edits."""
    session_id, at = sessions.get((item.project, item.hat), (None, 0.0))
    if session_id is None or rng.random() < 0.4:  # typed in by a person some months back
        session_id, at = None, now - rng.uniform(20, 150) * DAY
    else:
        at += rng.uniform(5, 50) * MINUTE  # learned during the session
    clock.at = at
    source = item.source if session_id or item.source != "explicit" else "operator"
    memory_id = store.add(
        item.content, type=item.type, title=item.title, tags=item.tags, hat=item.hat, scope=item.scope,
        file_refs=item.files, source=source, project=item.project, memory_id=_id(rng, at),
        session_id=session_id, task=store.sessions.get(session_id).task if session_id else None,
        actor="ingest" if session_id else "ui", reinforce=False,
    ).memory.id
    while at < now - 2 * DAY:
        at += rng.uniform(3, 25) * DAY
        if at >= now:
            break
        clock.at = at
        roll = rng.random()
        if roll < 0.3:  # another of the team uses or changes it (a roll already drawn: the demo is the same)
            store.author = TEAM[(TEAM.index(store.author) + 1) % len(TEAM)]
        memory = store.get(memory_id)
        if roll < 0.5:
            store.record_usage([memory_id], session_id=session_id)
        elif roll < 0.65 and memory.status == "active":
            store.add(item.content, type=memory.type, scope=memory.scope, project=item.project,
                      source="explicit", actor="ingest", session_id=session_id)  # reinforces
        elif roll < 0.85 and not memory.protected:
            after = round(max(0.1, memory.confidence - rng.choice((0.05, 0.1))), 6)
            status = "inactive" if after < INACTIVE_BELOW and memory.status == "active" else memory.status
            store.apply_changes([Change(memory_id, memory.confidence, after, memory.status, status,
                                        {"policy": "grace-weekly"})], "decayed", actor="decay")
        elif roll < 0.92:
            store.edit(memory_id, tags=[*memory.tags, "reviewed"], actor="ui")
        else:
            store.edit(memory_id, protected=True, actor="ui")
    return memory_id


def _log_created(store: Store) -> None:
    """Each session's log names the memories it learned, in time order, so the session log
    links to them."""
    rows = store.backend.memory_table.learned_in_sessions()
    for session_id, memory_id, type_, title, at in rows:
        store.sessions.append_activity(session_id, "memory_created", f"{type_}: {title}", at=at, memory_id=memory_id)


def _supersede(store: Store, clock: FrozenClock, memory_ids: list[str], now: float) -> None:
    """One explicit contradiction, so a history shows `superseded`, after everything else in the
    old memory's history (a timeline never runs backwards)."""
    old = memory_ids[MEMORIES.index(next(m for m in MEMORIES if m.title.startswith("Retry backoff")))]
    last_event = store.events(old)[-1].at
    clock.at = min(now - 3600, max(now - 4 * DAY, last_event + 3600))
    store.relations.supersede(old, "Exponential backoff for the feed reconnect caps at 30 s with full jitter; "
                    "60 s left the intel feed dark too long after short outages.",
                    title="Retry backoff caps at 30 s with full jitter", hat="critic",
                    tags="retry,backoff", file_refs="src/feed/reconnect.ts", actor="ui",
                    memory_id=f"mem-{int(clock.at)}-5e5e", source="operator")


def build_large(store: Store, count: int, *, seed: int = 11, project: str | None = None) -> None:
    """`count` synthetic memories (one `created` event each) inserted in bulk, for benchmarks."""
    rng = random.Random(seed)
    project_id = store.project_id(project)
    now = store.now()
    words = ("cache", "retry", "socket", "queue", "token", "index", "schema", "deploy", "config",
             "parser", "worker", "timeout", "webhook", "batch", "lock", "migration", "auth", "feed")
    with store.transaction():
        for start in range(0, count, 1000):
            rows, events = [], []
            for n in range(start, min(count, start + 1000)):
                picked = rng.sample(words, 4)
                title = f"{picked[0].title()} {picked[1]} needs care around {picked[2]} #{n}"
                content = f"When the {picked[0]} {picked[1]} meets the {picked[2]}, check {picked[3]} first."
                at = now - rng.uniform(0, 365) * DAY
                confidence = round(rng.uniform(0.2, 1.0), 2)
                memory_id = f"mem-{int(at)}-{n:06x}"
                rows.append(dict(
                    id=memory_id, project=project_id, type=rng.choice(TYPES), title=title,
                    content=content, confidence=confidence, tags=json.dumps(picked[:2]),
                    file_refs="[]", scope=rng.choice((None, "api", "worker", "ui")),
                    hat=rng.choice(HATS), source="explicit", status="active", protected=False,
                    created_at=at, updated_at=at, status_changed_at=at, use_count=rng.randint(0, 20),
                    content_hash=content_hash(content), meta="{}"))
                events.append(dict(memory=memory_id, kind="created", at=at, actor="bench",
                                   confidence_after=confidence, detail="{}"))
            MemoryRow.insert_many(rows).execute()
            EventRow.insert_many(events).execute()
        store.index_pending()
