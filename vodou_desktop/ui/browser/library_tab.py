"""The Library tab: documents saved from pages, each listed once however many chunks it has."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel, QTableView, QVBoxLayout, QWidget

from vodou_desktop.governance.ages import format_age
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.table_model import Column, RecordTableModel
from vodou_desktop.vault import ALL_PROJECTS, Document, FactFilter
from vodou_desktop.vault import query as q

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
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addWidget(self.view, 1)
        self.model.modelReset.connect(lambda: self.empty.setVisible(self.model.rowCount() == 0))

    def refresh(self) -> None:
        vault = self._services.runtime.vault
        filt = FactFilter(project=ALL_PROJECTS)
        self._services.ops.run(lambda: vault.read(lambda c: q.list_documents(c, filt, limit=500)),
                               self.model.set_rows, owner=self)

    def _open(self, index) -> None:  # type: ignore[no-untyped-def]
        doc = self.model.row_record(index.row())
        if doc and doc.page_url:
            QDesktopServices.openUrl(QUrl(doc.page_url))
