"""The review pane of the inbox and the trash: a candidate's lesson, the evidence it comes from
(the transcript lines, with their session, line number and time) and the memories it resembles,
the first of which `m` merges it into. Every field is shown as text, never as markup."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.api import Memory, Session
from tui.text import bar, one_line, stamp, visible


@dataclass(frozen=True)
class ReviewDetail:
    """What the pane shows, loaded together off the UI thread."""

    memory: Memory
    session: Session | None
    resembling: tuple[tuple[Memory, float], ...]  # (memory, similarity 0-100), most similar first


class ReviewPane(VerticalScroll, can_focus=False):
    """Follows the table's cursor; the screen hands it a `ReviewDetail`."""

    DEFAULT_CSS = """
    ReviewPane { padding: 0 1; }
    ReviewPane > Static { margin-bottom: 1; }
    ReviewPane > .review--heading { text-style: bold; color: $text-muted; margin-bottom: 0; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="review-meta")
        yield Static(id="review-content")
        yield Static("Evidence", classes="review--heading", id="review-evidence-heading")
        yield Static(id="review-evidence")
        yield Static("Resembles", classes="review--heading", id="review-resembling-heading")
        yield Static(id="review-resembling")

    detail: ReviewDetail | None = None

    def show(self, detail: ReviewDetail | None) -> None:
        self.detail = detail
        headings = self.query(".review--heading")
        if detail is None:
            self.border_title = "Nothing selected"
            self.query_one("#review-meta", Static).update(Text("Nothing to review here.", style="dim"))
            for part in ("content", "evidence", "resembling"):
                self.query_one(f"#review-{part}", Static).update("")
            headings.set(display=False)
            return
        headings.set(display=True)
        memory = detail.memory
        self.border_title = memory.id
        self.query_one("#review-meta", Static).update(self._meta(detail))
        self.query_one("#review-content", Static).update(Text(visible(memory.content)))
        self.query_one("#review-evidence", Static).update(self._evidence(detail))
        self.query_one("#review-resembling", Static).update(self._resembling(detail))
        self.scroll_home(animate=False)

    @staticmethod
    def _meta(detail: ReviewDetail) -> Text:
        m = detail.memory
        text = Text()
        text.append(one_line(m.title) + "\n", style="bold")
        rule = m.meta.get("heuristic")
        text.append(f"{m.type} · {m.status} · {m.source}" + (f" ({one_line(rule)})" if rule else "") + "\n",
                    style="dim")
        text.append(f"confidence {m.confidence:.2f} ")
        text.append(bar(m.confidence, 8), style="green")
        if m.file_refs:
            text.append("\nfiles: " + one_line(", ".join(m.file_refs)))
        proposal = m.meta.get("proposal")
        if isinstance(proposal, dict):  # store.engine.sameness: it may repeat, update or contradict another
            text.append(f"\nmay {'contradict' if proposal.get('kind') == 'contradiction' else proposal.get('kind')} "
                        f"{one_line(str(proposal.get('other')))} · v shows both", style="bold yellow")
        return text

    @staticmethod
    def _evidence(detail: ReviewDetail) -> Text | Table:
        evidence = detail.memory.meta.get("evidence") or []
        if not evidence:
            session = detail.memory.session_id
            return Text(f"no evidence lines recorded{f' (session {one_line(session[:8])}…)' if session else ''}",
                        style="dim")
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(style="dim", no_wrap=True)
        table.add_column(ratio=1)
        session = None
        for item in evidence:
            if item.get("session") != session:
                session = item.get("session")
                started = (f" · started {stamp(detail.session.started_at)}"
                           if detail.session is not None and detail.session.id == session else "")
                shown = one_line(session) if len(session or "") <= 20 else one_line(session[:8]) + "…"
                table.add_row(Text("session", style="dim"), Text(shown + started, style="dim"))
            where = f"line {item.get('line', '?')}"
            if item.get("at"):
                where += f" {stamp(item['at'], '%m-%d %H:%M')}"
            table.add_row(where, Text(f"{one_line(item.get('kind', ''))}: {one_line(item.get('text', ''))}"))
        return table

    @staticmethod
    def _resembling(detail: ReviewDetail) -> Text:
        if not detail.resembling:
            return Text("nothing in the store like it", style="dim")
        text = Text()
        for n, (memory, similarity) in enumerate(detail.resembling):
            if n:
                text.append("\n")
            text.append(f"{'m →' if n == 0 else '   '} ", style="bold" if n == 0 else "")
            text.append(f"{similarity:.0f}% ", style="dim")
            text.append(f"{memory.type} {memory.status} {memory.confidence:.2f} ", style="dim")
            text.append(one_line(memory.title))
        return text
