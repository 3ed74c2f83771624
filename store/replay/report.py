"""What `memdeck replay` prints: the replay's figures and the re-teachings it found, as lines
for a person or as JSON."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from store.replay.engine import Replay


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _day(at: float) -> str:
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%d")


def figures(replay: Replay) -> dict[str, Any]:
    sessions = replay.sessions
    prompts = replay.prompts
    tokens = sum(s.start.tokens + sum(p.tokens for p in s.prompts) for s in sessions)
    injecting = sum(1 for s in sessions for p in s.prompts if p.ids)
    candidates = sum(len(s.candidates) for s in sessions)
    kept = replay.after[-1] if replay.after else {}
    reteachings = [r for s in sessions for r in s.reteachings]
    return {
        "project": replay.project, "review": replay.review, "sessions": len(sessions), "prompts": prompts,
        "first": _day(sessions[0].started_at) if sessions else None,
        "last": _day(sessions[-1].started_at) if sessions else None,
        "duplicates": len(replay.duplicates), "candidates": candidates,
        "candidates_per_session": round(candidates / len(sessions), 2) if sessions else 0.0,
        "memories_kept": sum(1 for m in kept.values() if m.status == "active"),
        "memories_pending": sum(1 for m in kept.values() if m.status == "pending"),
        "tokens_per_prompt": round(tokens / prompts, 1) if prompts else 0.0,
        "prompts_injecting": round(injecting / prompts, 3) if prompts else 0.0,
        "reteachings": len(reteachings),
        "said_for_you": sum(1 for r in reteachings if r.injected_before),
        "at_the_prompt": sum(1 for r in reteachings if not r.injected_before and r.at_the_prompt),
    }


def reteaching_rows(replay: Replay) -> list[dict[str, Any]]:
    rows = []
    first_seen: dict[str, int] = {}
    for session in replay.sessions:
        for memory_id in session.created:
            first_seen.setdefault(memory_id, session.index)
    for session in replay.sessions:
        for r in session.reteachings:
            earlier = replay.memory_before(r.session).get(r.memory_id)
            taught = first_seen.get(r.memory_id)
            prompt = session.prompts[r.prompt] if r.prompt < len(session.prompts) else None
            rows.append({
                "session": session.name, "day": _day(session.started_at), "prompt": r.prompt,
                "said": " ".join(prompt.text.split())[:200] if prompt else "",
                "memory_id": r.memory_id, "memory": earlier.title if earlier else "",
                "taught_in": replay.sessions[taught].name if taught is not None else None,
                "candidate_id": r.candidate_id, "similarity": round(r.similarity, 1),
                "injected_before": r.injected_before, "at_the_prompt": r.at_the_prompt,
            })
    return rows


def report_json(replay: Replay) -> dict[str, Any]:
    return {**figures(replay), "reteaching": reteaching_rows(replay),
            "sessions_detail": [{"name": s.name, "started": _day(s.started_at), "prompts": len(s.prompts),
                                 "candidates": len(s.candidates), "accepted": len(s.accepted),
                                 "tokens": s.start.tokens + sum(p.tokens for p in s.prompts)}
                                for s in replay.sessions]}


def report_lines(replay: Replay) -> list[str]:
    f = figures(replay)
    lines = [
        f"replay of {f['project']}: {_n(f['sessions'], 'session')} ({f['first']} to {f['last']}), "
        f"{_n(f['prompts'], 'prompt')}"
        + (f"; {_n(f['duplicates'], 'session')} saved twice, read once" if f["duplicates"] else ""),
        f"captured: {_n(f['candidates'], 'candidate')} ({f['candidates_per_session']} per session); memories kept "
        f"{f['memories_kept']}" + (f", {f['memories_pending']} left in the inbox" if f["memories_pending"] else "")
        + f" (review: {f['review']})",
        f"injected: {f['tokens_per_prompt']} tokens per prompt; {f['prompts_injecting']:.0%} of prompts got a block",
    ]
    if not f["reteachings"]:
        lines.append("re-teachings: none found (no lesson was captured twice)")
        return lines
    lines.append(f"re-teachings: {f['reteachings']}: a lesson captured again that an earlier session had taught. "
                 f"memdeck would have said it for you in {f['said_for_you']} of {f['reteachings']}"
                 + (f" ({f['at_the_prompt']} more arrived only with the prompt that said it again)"
                    if f["at_the_prompt"] else ""))
    for row in reteaching_rows(replay):
        mark = "said before" if row["injected_before"] else "with the prompt" if row["at_the_prompt"] else "not said"
        lines.append(f"  {row['day']} {row['session'][:48]} prompt {row['prompt'] + 1}: {mark}: "
                     f"{row['memory'][:70]!r} (first taught in {row['taught_in'] or 'an earlier session'})")
    return lines
