"""The Library tab: documents saved from pages, each listed once however many chunks it has.

The same safety words as for memories: Forget hides a document (Delete; Undo forget, Ctrl+Z, brings
it back), Erase deletes it for good after a confirmation (Shift+Delete). Both go through
``governance.forget.Forgetting``; the list refreshes from the vault's change event."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QHideEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMessageBox, QTableView, QToolButton, QVBoxLayout, QWidget

from vodou_desktop.governance.ages import format_age
from vodou_desktop.ui.prompts import ask_to_confirm
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.table_model import Column, RecordTableModel
from vodou_desktop.vault import ALL_PROJECTS, Document, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.words import plural

COLUMNS: list[Column[Document]] = [
    Column("Title", lambda d: d.title or d.page_url or f"document {d.id}", lambda d: d.page_url or ""),
    Column("Site", lambda d: d.page_host or d.source_kind),
    Column("Parts", lambda d: d.chunk_count),
    Column("Project", lambda d: d.project or "global"),
    Column("Saved", lambda d: format_age(d.created_at, "instant")),
]


EMPTY_LIBRARY = ("The Library keeps whole web pages to search later. None yet: on a page, open the Vodou "
                 "browser extension and choose “Add page to Library” (or right-click ▸ Add this page to Vodou "
                 "Library).")


class LibraryTab(QWidget):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.model: RecordTableModel[Document] = RecordTableModel(COLUMNS, self)
        self.view = QTableView(sortingEnabled=False, selectionBehavior=QTableView.SelectionBehavior.SelectRows)
        self.view.setModel(self.model)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.doubleClicked.connect(self._open)
        self.view.setAccessibleName("Library pages")
        self.empty = QLabel(EMPTY_LIBRARY, wordWrap=True, visible=False)
        self.empty.setStyleSheet("padding: 12px; background: palette(alternate-base)")
        self.last_forget: str | None = None
        self.confirm_box: QMessageBox | None = None
        self.actions = {
            "forget": self._action("Forget", "Delete", "Hide this page from search and recall (undoable)",
                                   self.forget),
            "undo": self._action("Undo forget", "Ctrl+Z", "Bring back the last page you forgot", self.undo),
            "erase": self._action("Erase…", "Shift+Delete", "Delete this page for good (cannot be undone)",
                                  self.erase),
        }
        buttons = QHBoxLayout()
        for action in self.actions.values():
            button = QToolButton(toolButtonStyle=Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setDefaultAction(action)
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.view.addActions(list(self.actions.values()))
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        self.model.modelReset.connect(lambda: self.empty.setVisible(self.model.rowCount() == 0))
        self.model.modelReset.connect(self._update_actions)
        self.view.selectionModel().currentChanged.connect(lambda *_: self._update_actions())
        self._update_actions()

    def _action(self, text: str, key: str, tip: str, slot: Any) -> QAction:
        action = QAction(text, self, toolTip=tip, shortcut=QKeySequence(key))
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def selected(self) -> Document | None:
        return self.model.row_record(self.view.currentIndex().row())

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._update_actions()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 (Qt's name)
        super().hideEvent(event)
        self._update_actions()

    def _update_actions(self) -> None:
        """On while this tab is shown (its keys, Delete and Ctrl+Z, are the Memories tab's elsewhere)."""
        here = self.isVisible() and self._services.forgetting is not None
        can = here and self.selected() is not None
        self.actions["forget"].setEnabled(can)
        self.actions["erase"].setEnabled(can)
        self.actions["undo"].setEnabled(here and self.last_forget is not None)

    def forget(self) -> None:
        doc, forgetting = self.selected(), self._services.forgetting
        if doc is None or forgetting is None:
            return
        self._services.ops.run(lambda: forgetting.forget_document(doc.id), self._forgot, owner=self)

    def _forgot(self, result: dict[str, Any]) -> None:
        self.last_forget = result["op"]
        self._update_actions()
        self._services.messages.info("Library page forgotten. Undo forget (Ctrl+Z) brings it back.")

    def undo(self) -> None:
        op, forgetting = self.last_forget, self._services.forgetting
        if op is None or forgetting is None:
            return
        self._services.ops.run(lambda: forgetting.undo(op), self._undone, owner=self)

    def _undone(self, result: dict[str, Any]) -> None:
        self.last_forget = None
        self._update_actions()
        self._services.messages.info(f"Undone: {plural(result['documents_restored'], 'Library page')} back")

    def erase(self) -> None:
        doc, forgetting = self.selected(), self._services.forgetting
        if doc is None or forgetting is None:
            return
        title = doc.title or doc.page_url or f"document {doc.id}"
        self.confirm_box = ask_to_confirm(
            self, "Erase Library page", f"Erase “{title}” for good?\n\nErase cannot be undone; Forget can.",
            "Erase for good", lambda: self._services.ops.run(lambda: forgetting.erase_document(doc.id),
                                                             self._erased, owner=self))

    def _erased(self, result: dict[str, Any]) -> None:
        self._services.messages.info(f"Erased {plural(result['documents_erased'], 'Library page')} for good")

    def refresh(self) -> None:
        vault = self._services.runtime.vault
        filt = FactFilter(project=ALL_PROJECTS)
        self._services.ops.run(lambda: vault.read(lambda c: q.list_documents(c, filt, limit=500)),
                               self.model.set_rows, owner=self)

    def _open(self, index) -> None:  # type: ignore[no-untyped-def]
        doc = self.model.row_record(index.row())
        if doc and doc.page_url:
            QDesktopServices.openUrl(QUrl(doc.page_url))
