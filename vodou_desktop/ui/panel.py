"""The embedded panel (UI-3): a popup from the tray with the current page, its mode and reason,
"From this page" facts (exact tier) and documents (each once), pending approvals, Forget site…"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QListView, QPushButton, QToolButton, QVBoxLayout, QWidget

from vodou_desktop.ui.actions import MODES, ActionRegistry
from vodou_desktop.ui.active_page import PageState
from vodou_desktop.ui.browser.approvals_tab import describe_arguments
from vodou_desktop.ui.ops import Ops
from vodou_desktop.ui.table_model import Column, RecordTableModel


def _chunks(count: Any) -> str:
    return "1 chunk" if count == 1 else f"{count} chunks"


FACT_COLUMNS: list[Column[dict[str, Any]]] = [Column("Memory", lambda f: f.get("text"), lambda f: f.get("text", ""))]
DOC_COLUMNS: list[Column[dict[str, Any]]] = [
    Column("Document", lambda d: f"{d.get('title') or d.get('page_url')} ({_chunks(d.get('chunk_count'))})")]
APPROVAL_COLUMNS: list[Column[dict[str, Any]]] = [
    Column("Waiting for you", lambda a: f"{a.get('tool')}: {describe_arguments(a)}", lambda a: str(a.get("reason")))]


def load_panel(pages: Any, gate: Any, state: PageState) -> dict[str, Any]:
    """What the panel shows (runs in a worker). The page lane applies the site mode itself."""
    match: dict[str, Any] = {"facts": [], "documents": [], "mode": state.mode, "reason": state.reason}
    if state.url and pages is not None:
        match = pages.match(state.url, state.title)
    approvals = gate.approvals(pending_only=True) if gate is not None else []
    return {**match, "approvals": approvals}


def _list(model: RecordTableModel[Any], rows: int = 4) -> QListView:
    view = QListView(wordWrap=True, uniformItemSizes=False)
    view.setModel(model)
    view.setMaximumHeight(22 * rows + 6)
    return view


class Panel(QFrame):
    def __init__(self, actions: ActionRegistry, ops: Ops, pages: Any = None, gate: Any = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setFixedWidth(380)
        self._ops, self._pages, self._gate = ops, pages, gate
        self.state = PageState()
        self.loaded: dict[str, Any] | None = None
        self.title = QLabel(wordWrap=True, styleSheet="font-weight: bold; font-size: 12pt")
        self.host = QLabel(wordWrap=True)
        self.reason = QLabel(wordWrap=True, styleSheet="color: gray")
        self.facts: RecordTableModel[dict[str, Any]] = RecordTableModel(FACT_COLUMNS, self)
        self.documents: RecordTableModel[dict[str, Any]] = RecordTableModel(DOC_COLUMNS, self)
        self.approvals: RecordTableModel[dict[str, Any]] = RecordTableModel(APPROVAL_COLUMNS, self)
        self.approvals_view = _list(self.approvals, 3)
        self.approve_button = QPushButton("Approve")
        self.deny_button = QPushButton("Deny")
        self.empty = QLabel("Nothing saved from this page yet.", styleSheet="color: gray")
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
        layout.addWidget(QLabel("<b>From this page</b>"))
        layout.addWidget(self.empty)
        layout.addWidget(_list(self.facts, 5))
        layout.addWidget(_list(self.documents, 2))
        layout.addWidget(QLabel("<b>Approvals</b>"))
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
        self.reason.setText(f"Mode {state.mode}: {state.reason}" if state.mode else "")
        self.refresh()

    def refresh(self) -> None:
        pages, gate, state = self._pages, self._gate, self.state
        self._ops.run(lambda: load_panel(pages, gate, state), self._loaded, owner=self)

    def _loaded(self, data: dict[str, Any]) -> None:
        self.loaded = data
        self.facts.set_rows(data["facts"])
        self.documents.set_rows(data["documents"])
        self.approvals.set_rows(data["approvals"])
        self.empty.setVisible(not data["facts"] and not data["documents"])
        has_approvals = bool(data["approvals"])
        self.approve_button.setEnabled(has_approvals and self._gate is not None)
        self.deny_button.setEnabled(has_approvals and self._gate is not None)
        if has_approvals and not self.approvals_view.currentIndex().isValid():
            self.approvals_view.setCurrentIndex(self.approvals.index(0, 0))

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
