"""The detail pane: one memory with its provenance, ages, revision history and fact group.

Everything shown is loaded by an op off the GUI thread (``load_details``); superseded revisions
are labelled "never recalled" because search and recall never return a superseded fact.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from vodou_desktop.errors import NotFound
from vodou_desktop.governance.ages import format_age
from vodou_desktop.ui.browser.results_model import fact_age
from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter, Vault
from vodou_desktop.vault import query as q

OWNER_VIEW = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)
MAX_REVISIONS = 50


@dataclass(frozen=True)
class FactDetails:
    fact: Fact
    revisions: list[Fact] = field(default_factory=list)  # oldest first, this fact included
    group: list[Fact] = field(default_factory=list)  # other members of its fact group


def load_details(vault: Vault, fact_id: int) -> FactDetails:
    """Read a fact, its lineage (predecessors and successors) and its group, in one read."""
    return vault.read(lambda conn: _details(conn, fact_id))


def _details(conn, fact_id: int) -> FactDetails:  # type: ignore[no-untyped-def]
    fact = q.get_fact(conn, fact_id, OWNER_VIEW)
    older, newer = [], []
    current = fact
    while current.predecessor_id and len(older) < MAX_REVISIONS:
        current = _maybe(conn, current.predecessor_id)  # type: ignore[assignment]
        if current is None:
            break
        older.append(current)
    current = fact
    while current.superseded_by and len(newer) < MAX_REVISIONS:
        current = _maybe(conn, current.superseded_by)  # type: ignore[assignment]
        if current is None:
            break
        newer.append(current)
    group = []
    if fact.fact_group is not None:
        group = [f for f in q.facts_in_group(conn, fact.fact_group, OWNER_VIEW) if f.id != fact.id]
    return FactDetails(fact, [*reversed(older), fact, *newer], group)


def _maybe(conn, fact_id: int) -> Fact | None:  # type: ignore[no-untyped-def]
    try:
        return q.get_fact(conn, fact_id, OWNER_VIEW)
    except NotFound:
        return None


def details_html(details: FactDetails) -> str:
    """The pane's content as rich text (links open in the system browser)."""
    fact = details.fact
    esc = html.escape
    parts = [f"<p style='font-size:13pt'>{esc(fact.text)}</p>"]
    state = _state(fact)
    if state:
        parts.append(f"<p><b>{esc(state)}</b></p>")
    rows = [
        ("Kind", fact.kind), ("Project", fact.project or "global"), ("Scope", fact.scope),
        ("Tier", fact.tier), ("Source", f"{fact.source_kind}" + (f" · {fact.tool}" if fact.tool else "")),
        ("Title", fact.title), ("Created", format_age(fact.created_at, "instant")),
        ("Valid", fact_age(fact) if fact.valid_at else None), ("Revision", str(fact.revision)),
    ]
    table = "".join(f"<tr><td><i>{esc(k)}</i></td><td>{esc(v)}</td></tr>" for k, v in rows if v)
    parts.append(f"<table cellspacing=4>{table}</table>")
    if fact.source_url:
        parts.append(f"<p>Source: {_link(fact.source_url)}</p>")
    if fact.page_url and fact.page_url != fact.source_url:
        parts.append(f"<p>Page ({esc(fact.page_set_by or '')}): {_link(fact.page_url)}</p>")
    if len(details.revisions) > 1:
        parts.append("<p><b>Revision history</b></p><ol>" + "".join(
            f"<li>{_revision_line(r, fact, details.revisions[i - 1] if i else None)}</li>"
            for i, r in enumerate(details.revisions)) + "</ol>")
    if details.group:
        parts.append("<p><b>Same fact group</b></p><ul>" + "".join(
            f"<li>{esc(g.text)}{' (canonical)' if g.is_canonical else ''}</li>" for g in details.group) + "</ul>")
    return "".join(parts)


def _state(fact: Fact) -> str:
    if fact.forgotten:
        return f"Forgotten {format_age(fact.invalid_at, 'instant')} ({fact.invalidated_by or 'no reason'})"
    if fact.superseded_by:
        return "Superseded — never recalled"
    return ""


def _revision_line(rev: Fact, shown: Fact, previous: Fact | None = None) -> str:
    label = f"r{rev.revision}: {html.escape(rev.text)}"
    if previous is not None and previous.project != rev.project:
        label += (f" <i>(moved from {html.escape(previous.project or 'global')}"
                  f" to {html.escape(rev.project or 'global')})</i>")
    if rev.superseded_by:
        label += " <i>(superseded — never recalled)</i>"
    return f"<b>{label}</b>" if rev.id == shown.id else label


def _link(url: str) -> str:
    safe = html.escape(url, quote=True)
    return f"<a href=\"{safe}\">{html.escape(url)}</a>"


class DetailPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.body = QLabel(wordWrap=True, openExternalLinks=True, textFormat=Qt.TextFormat.RichText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.body.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.details: FactDetails | None = None
        layout = QVBoxLayout(self)
        layout.addWidget(self.body, 1)
        self.show_empty()

    def show_empty(self) -> None:
        self.details = None
        self.body.setText("<p style='color:gray'>Select a memory to see where it came from.</p>")

    def show_details(self, details: FactDetails) -> None:
        self.details = details
        self.body.setText(details_html(details))
