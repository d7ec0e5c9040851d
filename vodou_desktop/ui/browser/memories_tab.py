"""The Memories tab: live search box, filters, results with their score explanation, details."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QSplitter, QTreeView, QVBoxLayout, QWidget

from vodou_desktop.search.service import SearchResult
from vodou_desktop.ui.browser.details import DetailPane, FactDetails, load_details
from vodou_desktop.ui.browser.filters import FilterBar
from vodou_desktop.ui.browser.results_model import ResultsModel
from vodou_desktop.ui.browser.search_controller import Query, SearchController
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Fact


class MemoriesTab(QWidget):
    selection_changed = Signal(object)  # Fact | None
    results_shown = Signal(int)

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.search_box = QLineEdit(placeholderText="Search your memory (words or meaning)…", clearButtonEnabled=True)
        self.filters = FilterBar()
        self.model = ResultsModel(self)
        self.view = QTreeView(uniformRowHeights=True, alternatingRowColors=True)
        self.view.setModel(self.model)
        self.view.setColumnWidth(0, 420)
        self.details = DetailPane()
        self.actions_row = QHBoxLayout()
        self.controller = SearchController(services.runtime.search, services.ops, self)
        self._build()
        self.search_box.textChanged.connect(self._request)
        self.filters.changed.connect(self._request)
        self.controller.results_ready.connect(self._show_results)
        self.controller.failed.connect(services.messages.error)
        self.view.selectionModel().selectionChanged.connect(self._selected)

    def _build(self) -> None:
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.details, 1)
        right_layout.addLayout(self.actions_row)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([640, 420])
        layout = QVBoxLayout(self)
        layout.addWidget(self.search_box)
        layout.addWidget(self.filters)
        layout.addWidget(split, 1)

    def current_query(self) -> Query:
        return Query(self.search_box.text(), self.filters.current_filter())

    def _request(self) -> None:
        self.controller.request(self.current_query())

    def refresh(self) -> None:
        self.controller.request(self.current_query())

    def selected_fact(self) -> Fact | None:
        result = self.model.result(self.view.currentIndex())
        return result.fact if result else None

    def _show_results(self, results: list[SearchResult]) -> None:
        keep = self.selected_fact()
        self.model.set_results(results)
        self.results_shown.emit(len(results))
        if keep is not None:
            for row, result in enumerate(results):
                if result.fact.id == keep.id:
                    self.view.setCurrentIndex(self.model.index(row, 0))
                    return
        self.details.show_empty()
        self.selection_changed.emit(None)

    def _selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        fact = self.selected_fact()
        self.selection_changed.emit(fact)
        if fact is None:
            self.details.show_empty()
            return
        vault = self._services.runtime.vault
        self._services.ops.run(lambda: load_details(vault, fact.id), self._details_loaded, owner=self)

    def _details_loaded(self, details: FactDetails) -> None:
        current = self.selected_fact()
        if current is not None and current.id == details.fact.id:
            self.details.show_details(details)
