"""The detail pane: one memory's metadata, its content rendered as Markdown (of escaped text,
so markup and terminal escapes in a memory are shown, never obeyed), where it came from, and
its history of events."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.api import Anchor, event_note, Event, Memory, Session
from tui.text import bar, one_line, stamp, visible

# How each anchor status is marked in the pane: the sign and the theme colour.
ANCHOR_MARKS = {"fresh": ("✓", "green"), "moved": ("↷", "cyan"), "changed": ("⚠", "yellow"),
                "missing": ("✗", "red")}
AUTHOR_WIDTH = 12  # a longer author's name is cut with an ellipsis in the history


@dataclass(frozen=True)
class MemoryDetail:
    """What the pane shows, loaded together off the UI thread."""

    memory: Memory
    events: tuple[Event, ...]
    session: Session | None
    anchors: tuple[Anchor, ...] = ()


def _event_note(event: Event) -> str:
    detail = event.detail or {}
    if event.kind == "edited":
        return ", ".join(detail.get("changes", {}))
    if event.kind in ("status_changed", "deleted", "restored"):
        return f"{detail.get('from', '')} → {detail.get('to', '')}".strip(" →")
    if event.kind == "merged":
        return f"into {detail['into']}" if "into" in detail else f"from {len(detail.get('from', []))}"
    if event.kind == "superseded":
        return f"by {detail.get('by', '')}" + (f": {detail['note']}" if detail.get("note") else "")
    if "verdict" in detail:  # an agent's feedback
        return detail["verdict"] + (f": {detail['note']}" if detail.get("note") else "")
    if event.kind == "reinforced" and "similarity" in detail:
        return f"similarity {detail['similarity']}"
    if event.kind in ("anchored", "checked"):
        return event_note(event.kind, detail)
    return event.actor


class DetailPane(VerticalScroll):
    """Follows the list's cursor; the screen hands it a `MemoryDetail`."""

    DEFAULT_CSS = """
    DetailPane { padding: 0 1; }
    DetailPane > #detail-meta { margin-bottom: 1; }
    DetailPane > #detail-content { margin-bottom: 1; }
    DetailPane > .detail--heading { text-style: bold; color: $text-muted; }
    DetailPane > #detail-history { width: auto; }
    """

    detail: MemoryDetail | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="detail-meta")
        yield Static(id="detail-content")
        yield Static("History", classes="detail--heading", id="detail-history-heading")
        yield Static(id="detail-history")

    def show(self, detail: MemoryDetail | None) -> None:
        self.detail = detail
        heading = self.query_one("#detail-history-heading")
        if detail is None:
            self.border_title = "No memory"
            self.query_one("#detail-meta", Static).update(Text("Nothing to show here.", style="dim"))
            self.query_one("#detail-content", Static).update("")
            self.query_one("#detail-history", Static).update("")
            heading.display = False
            return
        from rich.markdown import Markdown  # 50 ms of imports: after the list's first paint

        memory = detail.memory
        heading.display = True
        self.border_title = memory.id
        self.query_one("#detail-meta", Static).update(self._meta(detail))
        self.query_one("#detail-content", Static).update(
            Markdown(visible(memory.content), hyperlinks=False))
        self.query_one("#detail-history", Static).update(self._history(detail.events))
        self.scroll_home(animate=False)

    def _meta(self, detail: MemoryDetail) -> Text:
        m = detail.memory
        text = Text()
        text.append(one_line(m.title) + "\n", style="bold")
        text.append(f"{m.type} · {m.hat or 'no hat'} · scope: {one_line(m.scope) or '-'} · {m.status}"
                    f"{' · protected' if m.protected else ''}\n", style="dim")
        if m.layer != "own":  # a team layer's memory (docs/team.md)
            text.append(f"layer: {m.layer} (read-only here)\n", style="dim")
        elif getattr(getattr(self.app, "layer", None), "several", False):
            text.append("layer: own\n", style="dim")
        text.append(f"confidence {m.confidence:.2f} ")
        text.append(bar(m.confidence, 8), style="green")
        text.append(f"  used {m.use_count}×  source {m.source}\n")
        if m.tags:
            text.append("tags: " + one_line(", ".join(m.tags)) + "\n")
        if m.file_refs:
            text.append("files: " + one_line(", ".join(m.file_refs)) + "\n")
        for anchor in detail.anchors:
            sign, colour = ANCHOR_MARKS.get(anchor.status, ("?", ""))
            text.append(f"{sign} {anchor.status:<8}", style=colour)
            text.append(one_line(anchor.spec))
            text.append(f"  since {anchor.since()}\n", style="dim")
        text.append(f"created {stamp(m.created_at)} · updated {stamp(m.updated_at)}"
                    + (f" · last used {stamp(m.last_used_at)}" if m.last_used_at else "") + "\n", style="dim")
        if detail.session is not None:
            s = detail.session
            text.append(one_line(f"from session {s.id[:8]}… {s.hat or ''} {s.agent or ''} · {stamp(s.started_at)}") + "\n",
                        style="dim")
        elif m.session_id:
            text.append(f"from session {one_line(m.session_id)}\n", style="dim")
        if m.task:
            text.append("task: " + one_line(m.task) + "\n", style="dim")
        if m.meta.get("superseded_by"):
            text.append(f"superseded by {m.meta['superseded_by']}\n", style="yellow")
        if m.supersedes:
            text.append(f"supersedes {m.supersedes}\n", style="dim")
        text.rstrip()
        return text

    def _history(self, events: tuple[Event, ...]) -> Table:
        """Time, who (the event's author: a person, from migration 9 on), what, the confidence, a
        note. Every cell is a `Text`: a string cell of a Rich table is parsed as markup, and an
        author, an actor or a verdict's note comes from outside (`[red]` must show as typed)."""
        table = Table.grid(padding=(0, 1))
        table.add_column(style="dim", no_wrap=True)
        table.add_column(style="italic", no_wrap=True, overflow="ellipsis", max_width=AUTHOR_WIDTH)
        table.add_column(no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(style="dim", overflow="ellipsis", no_wrap=True)
        for event in events:
            table.add_row(Text(stamp(event.at, "%m-%d %H:%M")), Text(one_line(event.author or "")),
                          Text(event.kind), Text(event.confidence_change()), Text(one_line(_event_note(event))))
        return table
