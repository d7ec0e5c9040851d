"""The embedded panel (UI-3): a popup from the tray with the current page, its mode and reason,
"From this page" facts (exact tier) and documents (each once), pending approvals, Forget site…"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.ui.actions import MODES, ActionRegistry
from vodou_desktop.ui.active_page import PageState
from vodou_desktop.ui.browser.approvals_tab import describe_arguments, pending_first, tool_words
from vodou_desktop.ui.ops import Ops
from vodou_desktop.ui.prompts import TextPrompt
from vodou_desktop.ui.site_projects import SiteProjects
from vodou_desktop.ui.style import help_label
from vodou_desktop.ui.table_model import Column, RecordTableModel
from vodou_desktop.words import kind_words, project_words

NO_PAGE = ("No page yet. Pair the browser extension (tray menu: Pair browser extension…) and open a web page: "
           "the memories you saved from it are listed here.")
NO_MEMORY = ("No memories saved from this page yet. Add one here (Add memory…), or send a selection from the "
             "browser extension.")
NO_PROJECT = "No project (global)"


def _chunks(count: Any) -> str:
    return "1 part" if count == 1 else f"{count} parts"


def _label(record: dict[str, Any]) -> str:
    return project_words(record.get("project"))


PANEL_TEXT = 140  # characters of a memory shown in the panel's list; the tooltip has it all


def _short(text: Any) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= PANEL_TEXT else flat[: PANEL_TEXT - 1].rsplit(" ", 1)[0] + "…"


FACT_COLUMNS: list[Column[dict[str, Any]]] = [
    Column("Memory", lambda f: f"{_short(f.get('text'))}\n{_label(f)} · {kind_words(f.get('kind'))}",
           lambda f: f.get("text", ""))]
DOC_COLUMNS: list[Column[dict[str, Any]]] = [
    Column("Document", lambda d: f"{d.get('title') or d.get('page_url')}\n{_label(d)} · Library page, "
                                 f"{_chunks(d.get('chunk_count'))}")]
APPROVAL_COLUMNS: list[Column[dict[str, Any]]] = [
    Column("Waiting for you", lambda a: f"{tool_words(a)}: {describe_arguments(a)}\n{a.get('reason')}",
           lambda a: str(a.get("reason")))]


def load_panel(pages: Any, gate: Any, state: PageState, project: str | None = None) -> dict[str, Any]:
    """What the panel shows (runs in a worker). The page lane applies the site mode itself:
    "From this page" holds every project's memories, exactly what turns the icon green."""
    match: dict[str, Any] = {"facts": [], "documents": [], "projects": [], "mode": state.mode,
                             "reason": state.reason}
    if state.url and pages is not None:
        match = pages.match(state.url, state.title, project=project)
    approvals = pending_first(gate.approvals(pending_only=True)) if gate is not None else []
    return {**match, "approvals": approvals}


def _list(model: RecordTableModel[Any], rows: int = 4) -> QListView:
    view = QListView(wordWrap=True, uniformItemSizes=False, alternatingRowColors=True, spacing=1)
    view.setModel(model)  # alternating rows: each item reads as one, however many lines it wraps to
    view.setMaximumHeight(22 * rows + 6)
    return view


class Panel(QFrame):
    def __init__(self, actions: ActionRegistry, ops: Ops, pages: Any = None, gate: Any = None,
                 parent: QWidget | None = None, site_projects: SiteProjects | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setFixedWidth(380)
        self._ops, self._pages, self._gate = ops, pages, gate
        self.site_projects = site_projects or SiteProjects()
        self.project = QComboBox(accessibleName="Project for this site")
        self.project.setToolTip("Used for related memories and new memories on this site; remembered per site")
        self.project.addItem(NO_PROJECT, None)
        self.project.activated.connect(self._project_chosen)
        self.state = PageState()
        self.loaded: dict[str, Any] | None = None
        self.title = QLabel(wordWrap=True, styleSheet="font-weight: bold; font-size: 12pt")
        self.host = QLabel(wordWrap=True)
        self.reason = help_label()
        self.facts: RecordTableModel[dict[str, Any]] = RecordTableModel(FACT_COLUMNS, self)
        self.documents: RecordTableModel[dict[str, Any]] = RecordTableModel(DOC_COLUMNS, self)
        self.approvals: RecordTableModel[dict[str, Any]] = RecordTableModel(APPROVAL_COLUMNS, self)
        self.approvals_view = _list(self.approvals, 3)
        self.note_button = QPushButton("Add &memory…")
        self.note_button.setToolTip("A memory about this page, saved in the project chosen above")
        self.note_button.clicked.connect(self.add_note)
        self.note_prompt: TextPrompt | None = None
        self.approve_button = QPushButton("Approve")
        self.deny_button = QPushButton("Deny")
        self.empty = help_label(NO_PAGE)
        self._layout(actions)
        self.approve_button.clicked.connect(lambda: self.decide("approve"))
        self.deny_button.clicked.connect(lambda: self.decide("deny"))

    def _layout(self, actions: ActionRegistry) -> None:
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.host)
        modes = QHBoxLayout()
        for mode in MODES:
            button = QToolButton(toolButtonStyle=Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setDefaultAction(actions[f"mode.{mode}"])
            modes.addWidget(button)
        modes.addStretch(1)
        layout.addLayout(modes)
        layout.addWidget(self.reason)
        picker = QHBoxLayout()
        label = QLabel("&Project:")
        label.setBuddy(self.project)
        picker.addWidget(label)
        picker.addWidget(self.project, 1)
        picker.addWidget(self.note_button)
        layout.addLayout(picker)
        layout.addWidget(QLabel("<b>From this page</b> (every project)"))
        layout.addWidget(self.empty)
        self.facts_view = _list(self.facts, 5)
        self.facts_view.setAccessibleName("Memories from this page")
        self.documents_view = _list(self.documents, 2)
        self.documents_view.setAccessibleName("Library pages from this page")
        layout.addWidget(self.facts_view)
        self.documents_heading = QLabel("<b>Library pages</b> saved from this page")
        layout.addWidget(self.documents_heading)
        layout.addWidget(self.documents_view)
        layout.addWidget(QLabel("<b>Waiting for your approval</b>"))
        layout.addWidget(self.approvals_view)
        decide = QHBoxLayout()
        decide.addWidget(self.approve_button)
        decide.addWidget(self.deny_button)
        decide.addStretch(1)
        forget = QToolButton()
        forget.setDefaultAction(actions["forget_site"])
        decide.addWidget(forget)
        layout.addLayout(decide)

    def set_page(self, state: PageState) -> None:
        self.state = state
        self.title.setText(state.title or ("(no title)" if state.url else "No page"))
        self.host.setText(state.host or "The browser extension has not reported a page yet.")
        self.reason.setText(f"{state.mode.capitalize()} on this site: {state.reason}" if state.mode else "")
        self._update_note_button()
        self.refresh()

    def chosen_project(self) -> str | None:
        return self.site_projects.get(self.state.host)

    def _project_chosen(self, index: int) -> None:
        self.site_projects.set(self.state.host, self.project.itemData(index))
        self.refresh()

    def _fill_projects(self, names: list[str]) -> None:
        chosen = self.chosen_project()
        self.project.clear()
        self.project.addItem(NO_PROJECT, None)
        for name in sorted(set(names) | ({chosen} if chosen else set())):
            self.project.addItem(name, name)
        self.project.setCurrentIndex(max(0, self.project.findData(chosen)) if chosen else 0)
        self.project.setEnabled(bool(self.state.url))

    def refresh(self) -> None:
        pages, gate, state, project = self._pages, self._gate, self.state, self.chosen_project()
        self._ops.run(lambda: load_panel(pages, gate, state, project), self._loaded, owner=self)

    def _loaded(self, data: dict[str, Any]) -> None:
        self.loaded = data
        self.facts.set_rows(data["facts"])
        self.documents.set_rows(data["documents"])
        self.approvals.set_rows(data["approvals"])
        self._fill_projects(data.get("projects", []))
        nothing = not data["facts"] and not data["documents"]
        self.empty.setText(NO_PAGE if not self.state.url else NO_MEMORY)
        self.empty.setVisible(nothing)
        self.documents_heading.setVisible(bool(data["documents"]))  # a heading over the Library box, when it has any
        self.documents_view.setVisible(bool(data["documents"]))
        has_approvals = bool(data["approvals"])
        self.approve_button.setEnabled(has_approvals and self._gate is not None)
        self.deny_button.setEnabled(has_approvals and self._gate is not None)
        if has_approvals and not self.approvals_view.currentIndex().isValid():
            self.approvals_view.setCurrentIndex(self.approvals.index(0, 0))

    def _update_note_button(self) -> None:
        collect = bool(self.state.url) and self.state.mode == "collect" and not self.state.paused
        self.note_button.setEnabled(collect and self._pages is not None)
        self.note_button.setToolTip("A memory about this page, saved in the project chosen here" if collect else
                                    "Memories are saved from a page only on sites in Collect mode")

    def add_note(self) -> None:
        """A memory about this page (kind note), in the project picked for this site (the site mode is checked
        again)."""
        pages, state, project = self._pages, self.state, self.chosen_project()
        if pages is None or not state.url:
            return
        where = f"project {project}" if project else "no project (global)"
        self.note_prompt = TextPrompt("Add memory", f"A memory about {state.host}, saved in {where}:", multiline=True)
        self.note_prompt.run(self._ops, lambda text: pages.note(state.url, state.title, text, project),
                             lambda _fact: self.refresh())

    def decide(self, decision: str) -> None:
        """Approve or deny the selected pending approval (the gate runs or drops it)."""
        approval = self.approvals.row_record(self.approvals_view.currentIndex().row())
        if approval is None or self._gate is None:
            return
        gate, approval_id = self._gate, int(approval["id"])
        self._ops.run(lambda: gate.resolve(approval_id, decision), lambda _result: self.refresh(), owner=self)

    def popup_near(self, anchor: QRect) -> None:
        """Show next to the tray icon, kept on screen."""
        self.adjustSize()
        screen = QGuiApplication.screenAt(anchor.center()) or QGuiApplication.primaryScreen()
        area = screen.availableGeometry()
        x = min(max(anchor.right() - self.width(), area.left()), area.right() - self.width())
        below = anchor.bottom() + 4
        y = below if below + self.height() <= area.bottom() else anchor.top() - self.height() - 4
        self.move(QPoint(x, max(y, area.top())))
        self.show()
        self.raise_()
