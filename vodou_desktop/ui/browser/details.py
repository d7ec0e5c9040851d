"""The detail pane: one memory with its provenance, ages, revision history and near-duplicates,
and the edit field that corrects it in place (Correct…, F2: the memory keeps its id and its row).

Everything shown is loaded by an op off the GUI thread (``load_details``); superseded revisions
are labelled "never recalled" because search and recall never return a superseded fact.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.errors import NotFound
from vodou_desktop.governance.ages import format_age
from vodou_desktop.ui.browser.results_model import fact_age
from vodou_desktop.ui.prompts import submit_on_ctrl_enter
from vodou_desktop.ui.style import problem_label
from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.records import SourceMessage
from vodou_desktop.words import TIER_WORDS, fact_source, kind_words, project_words

OWNER_VIEW = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)
MAX_REVISIONS = 50


@dataclass(frozen=True)
class FactDetails:
    fact: Fact
    revisions: list[Fact] = field(default_factory=list)  # oldest first, this fact included
    group: list[Fact] = field(default_factory=list)  # other members of its fact group
    conversation: list[tuple[str, Fact]] = field(default_factory=list)  # ("before"|"after", the turn next to it)
    message: SourceMessage | None = None  # the message it came from (an imported or captured conversation's)


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
    return FactDetails(fact, [*reversed(older), fact, *newer], group, _conversation(conn, fact),
                       q.source_message(conn, fact.id, OWNER_VIEW))


def _conversation(conn, fact: Fact) -> list[tuple[str, Fact]]:  # type: ignore[no-untyped-def]
    """The turns just before and after it in its conversation (current revisions, hidden ones marked)."""
    view = FactFilter(project=ALL_PROJECTS, include_forgotten=True)
    rows = q.thread_neighbour_ids(conn, [fact.id], view)
    near = {offset: other for _, offset, other in rows if offset in (-1, 1)}
    facts = {f.id: f for f in q.facts_by_ids(conn, list(near.values()), view)}
    return [(label, facts[near[o]]) for o, label in ((-1, "before"), (1, "after")) if near.get(o) in facts]


def _maybe(conn, fact_id: int) -> Fact | None:  # type: ignore[no-untyped-def]
    try:
        return q.get_fact(conn, fact_id, OWNER_VIEW)
    except NotFound:
        return None


def provenance_html(fact: Fact) -> str:
    """Project, kind, where it came from and when: always visible, however long the memory is."""
    esc = html.escape
    source = fact_source(fact)
    if fact.tool and fact.tool not in source and fact.source_kind not in ("cli", "panel"):
        source += f" · {fact.tool}"
    rows = [
        ("Project", project_words(fact.project)), ("Kind", kind_words(fact.kind)), ("Source", source),
        ("Saved", format_age(fact.created_at, "instant")),
        ("True as of", fact_age(fact) if fact.valid_at else None),
        ("Pinned", "yes" if fact.tier == "pinned" else None),
    ]
    cells = " &nbsp;·&nbsp; ".join(f"<i>{esc(k)}</i> {esc(v)}" for k, v in rows if v)
    parts = [f"<p>{cells}</p>"]
    state = _state(fact)
    if state:
        parts.append(f"<p><b>{esc(state)}</b></p>")
    if fact.source_url or fact.page_url:
        parts.append(f"<p>From {_link(fact.source_url or fact.page_url or '')}</p>")
    return "".join(parts)


def ranking_html(factors: list[tuple[str, str]]) -> str:
    """The score's factors with plain names (behind "How this was ranked")."""
    esc = html.escape
    return "<table cellspacing=2>" + "".join(
        f"<tr><td><i>{esc(k)}</i></td><td>{esc(v)}</td></tr>" for k, v in factors) + "</table>"


def details_html(details: FactDetails, why: str = "") -> str:
    """The scrolling body: the whole text, then why it matched, the title, history and group."""
    fact = details.fact
    esc = html.escape
    paragraphs = "".join(f"<p>{esc(p)}</p>" for p in fact.text.split("\n") if p.strip())
    parts = [paragraphs or f"<p>{esc(fact.text)}</p>"]
    if why:
        parts.append(f"<p><b>Why it matched:</b> {esc(why, quote=False)}</p>")
    rows = [("Page title", fact.title), ("Scope", fact.scope), ("Revision", str(fact.revision)),
            ("Trust", TIER_WORDS.get(fact.tier, fact.tier)),
            ("Confidence", None if fact.confidence is None else f"{fact.confidence:.0%}"
             + (" (the statement was hedged or tentative)" if fact.confidence < 0.8 else ""))]
    table = "".join(f"<tr><td><i>{esc(k)}</i></td><td>{esc(v)}</td></tr>" for k, v in rows if v)
    parts.append(f"<table cellspacing=4>{table}</table>")
    if fact.page_url and fact.page_url != fact.source_url:
        parts.append(f"<p>Linked to page ({esc(fact.page_set_by or '')}): {_link(fact.page_url)}</p>")
    if len(details.revisions) > 1:
        parts.append("<p><b>History</b> (earlier texts are kept here, never recalled)</p><ol>" + "".join(
            f"<li>{_revision_line(r, fact, details.revisions[i - 1] if i else None)}</li>"
            for i, r in enumerate(details.revisions)) + "</ol>")
    if details.group:
        parts.append("<p><b>Near-duplicates of this memory</b></p><ul>" + "".join(
            f"<li>{esc(g.text)}{' (the one ranked first)' if g.is_canonical else ''}</li>"
            for g in details.group) + "</ul>")
    if details.message is not None:
        parts.append(message_html(fact, details.message))
    if details.conversation:
        parts.append("<p><b>In its conversation</b></p><ul>" + "".join(
            f"<li><i>{esc(label)}:</i> {esc(turn.text)}{' (forgotten)' if turn.forgotten else ''}</li>"
            for label, turn in details.conversation) + "</ul>")
    return "".join(parts)


MESSAGE_SHOWN = 4_000  # characters of the source message the pane shows (``vodou mem show --json`` has all)


def message_html(fact: Fact, message: SourceMessage) -> str:
    """The message a memory came from: whose, when, and its text as the vault keeps it (ING-6)."""
    esc = html.escape
    when = f", {format_age(message.at, 'instant')}" if message.at else ""
    if message.role == "assistant":
        head = f"From the assistant's reply{when}, which you accepted" + (" in your next message" if
                                                                          message.accepted_in else "")
        text = message.accepted_in
    elif fact.kind == "conversation" and message.turn_ids == (fact.id,):
        return f"<p><i>Your message{esc(when)}, kept whole as this memory.</i></p>"
    else:
        head = f"From your message{when}"
        text = message.text
    body = ""
    if text:
        shown = text if len(text) <= MESSAGE_SHOWN else text[:MESSAGE_SHOWN].rstrip() + "…"
        body = "<blockquote>" + "".join(f"<p>{esc(p)}</p>" for p in shown.split("\n") if p.strip()) + "</blockquote>"
    elif message.role != "assistant":
        body = "<p><i>(the message itself is forgotten)</i></p>"
    return f"<p><b>{esc(head)}</b></p>{body}"


def title_of(text: str) -> str:
    """The memory's first line, for the two-line title (the body holds the whole text)."""
    return " ".join(text.split())


def _state(fact: Fact) -> str:
    if fact.forgotten:
        how = "Edit ▸ Undo brings it back" if (fact.invalidated_by or "").startswith("op-") else "hidden"
        return f"Forgotten {format_age(fact.invalid_at, 'instant')} ({how})"  # never the operation's raw id
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
    """Title (at most two lines), provenance (always visible), the edit field while correcting, and
    the rest in a scrolling area."""

    TITLE_LINES = 2
    save_wanted = Signal(int, str)  # the memory's id, its corrected text

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = QPlainTextEdit()
        self.editor.setAccessibleName("Corrected text")
        self.editor.setTabChangesFocus(True)
        submit_on_ctrl_enter(self.editor, self._save)
        self.save_button = QPushButton("Save")
        self.save_button.setToolTip("Save the corrected text (Ctrl+Enter); the memory keeps its id and the "
                                    "earlier text stays in its history, never recalled")
        self.cancel_button = QPushButton("Cancel")
        self.edit_problem = problem_label()
        self.editing = QWidget(visible=False)
        edit_layout = QVBoxLayout(self.editing)
        edit_layout.setContentsMargins(0, 0, 0, 0)
        edit_layout.addWidget(self.editor)
        edit_layout.addWidget(self.edit_problem)
        edit_buttons = QHBoxLayout()
        edit_buttons.addStretch(1)
        edit_buttons.addWidget(self.cancel_button)
        edit_buttons.addWidget(self.save_button)
        edit_layout.addLayout(edit_buttons)
        self.save_button.clicked.connect(self._save)
        self.cancel_button.clicked.connect(self.stop_editing)
        self._editing_id: int | None = None
        self.title = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.title.setStyleSheet("font-size: 13pt; font-weight: 600")
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.title.setAccessibleName("Memory title")
        self.provenance = QLabel(wordWrap=True, openExternalLinks=True, textFormat=Qt.TextFormat.RichText)
        self.provenance.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.provenance.setAccessibleName("Where this memory came from")
        self.provenance.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.body = QTextBrowser(openExternalLinks=True)
        self.body.setAccessibleName("Memory text and history")
        self.body.setFrameShape(QTextBrowser.Shape.NoFrame)
        self.ranked = QToolButton(text="How this was ranked", checkable=True, autoRaise=True,
                                  toolButtonStyle=Qt.ToolButtonStyle.ToolButtonTextBesideIcon,
                                  arrowType=Qt.ArrowType.RightArrow, visible=False)
        self.ranked.setAccessibleName("How this was ranked")
        self.ranking = QLabel(textFormat=Qt.TextFormat.RichText, visible=False, wordWrap=True)
        self.ranking.setAccessibleName("The score's factors")
        self.ranked.toggled.connect(self._show_ranking)
        self.details: FactDetails | None = None
        self._full_title = ""
        self.body_html = ""
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.provenance)
        layout.addWidget(self.editing)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.ranked)
        layout.addWidget(self.ranking)
        self.show_empty()

    def _show_ranking(self, shown: bool) -> None:
        """A disclosure, collapsed by default: the factors matter to few people, and not every time."""
        self.ranked.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.ranking.setVisible(shown)

    # -- correcting in place -------------------------------------------------------------------
    def start_editing(self, fact: Fact) -> None:
        """The edit field with the memory's text, focused (Save or Ctrl+Enter saves, Cancel closes)."""
        self._editing_id = fact.id
        self.editor.setPlainText(fact.text)
        self.edit_problem.clear()
        self.save_button.setEnabled(True)
        self.editing.show()
        self.editor.setFocus()

    def stop_editing(self) -> None:
        self._editing_id = None
        self.editing.hide()

    def editing_failed(self, text: str) -> None:
        self.edit_problem.setText(text)
        self.save_button.setEnabled(True)

    @property
    def is_editing(self) -> bool:
        return self._editing_id is not None

    def _save(self) -> None:
        text = self.editor.toPlainText()
        if self._editing_id is None:
            return
        if not text.strip():
            self.edit_problem.setText("Nothing typed yet.")
            return
        self.edit_problem.clear()
        self.save_button.setEnabled(False)  # one save at a time
        self.save_wanted.emit(self._editing_id, text)

    def show_empty(self, text: str = "Select a memory to see where it came from.", *,
                   keep_editing: bool = False) -> None:
        if not keep_editing:
            self.stop_editing()
        self.details = None
        self._set_title("")
        self.provenance.setText("")
        self._set_body(f"<p>{html.escape(text)}</p>")
        self._set_ranking([])

    def show_details(self, details: FactDetails, why: str = "", factors: list[tuple[str, str]] | None = None) -> None:
        if self._editing_id is not None and self._editing_id != details.fact.id:
            self.stop_editing()  # another memory is shown: its edit is not this one's
        self.details = details
        self._set_title(title_of(details.fact.text))
        self.provenance.setText(provenance_html(details.fact))
        self._set_body(details_html(details, why))
        self._set_ranking(factors or [])

    def _set_ranking(self, factors: list[tuple[str, str]]) -> None:
        self.ranking.setText(ranking_html(factors) if factors else "")
        self.ranked.setVisible(bool(factors))
        self.ranking.setVisible(bool(factors) and self.ranked.isChecked())

    def text(self) -> str:
        """Everything the pane says (title, provenance, body, ranking), as HTML-ish text for tests."""
        return "\n".join((self._full_title, self.provenance.text(), self.body_html, self.ranking.text()))

    def _set_body(self, markup: str) -> None:
        self.body_html = markup
        self.body.setHtml(markup)

    def _set_title(self, text: str) -> None:
        self._full_title = text
        self.title.setToolTip(text if len(text) > 80 else "")
        self._fit_title()

    def _fit_title(self) -> None:
        metrics = QFontMetrics(self.title.font())
        width = max(120, self.title.width() or self.width() - 24)
        self.title.setFixedHeight(metrics.lineSpacing() * self.TITLE_LINES + 4)
        text = self._full_title
        if metrics.horizontalAdvance(text) > width * self.TITLE_LINES - metrics.averageCharWidth() * 12:
            text = metrics.elidedText(text, Qt.TextElideMode.ElideRight,
                                      width * self.TITLE_LINES - metrics.averageCharWidth() * 12)
        self.title.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_title()
