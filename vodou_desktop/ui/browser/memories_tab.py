"""The Memories tab: live search box, filters, results with their score explanation, details,
and the actions on the selected memory (buttons under the details and the results' context menu)."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QSplitter,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.search.service import SearchResult
from vodou_desktop.ui.browser.details import DetailPane, FactDetails, load_details
from vodou_desktop.ui.browser.fact_actions import NAMES as ACTION_NAMES
from vodou_desktop.ui.browser.fact_actions import FactActions
from vodou_desktop.ui.browser.filters import FilterBar
from vodou_desktop.ui.browser.results_model import ResultsModel
from vodou_desktop.ui.browser.search_controller import Query, SearchController
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Fact
from vodou_desktop.words import score_details


class MemoriesTab(QWidget):
    selection_changed = Signal(object)  # Fact | None
    results_shown = Signal(int)

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.search_box = QLineEdit(placeholderText="Search your memory (words or meaning)…", clearButtonEnabled=True)
        self.filters = FilterBar()
        self.model = ResultsModel(self)
        self.view = QTreeView(uniformRowHeights=True, alternatingRowColors=True, rootIsDecorated=False,
                              itemsExpandable=False, allColumnsShowFocus=True)
        self.view.setModel(self.model)
        self.view.setAccessibleName("Memories")
        self.search_box.setAccessibleName("Search memories")
        self.model.modelReset.connect(self._size_columns)
        self._size_columns()
        self.details = DetailPane()
        self.actions_row = QHBoxLayout()
        self.fact_actions = FactActions(services, self, follow=self.follow)
        self._follow: int | None = None
        self.controller = SearchController(services.runtime.search, services.ops, self)
        self._build()
        self.search_box.textChanged.connect(self._request)
        self.search_box.returnPressed.connect(self.focus_results)
        self.filters.changed.connect(self._request)
        self.controller.results_ready.connect(self._show_results)
        self.controller.failed.connect(services.messages.error)
        self.view.selectionModel().selectionChanged.connect(self._selected)

    def _build(self) -> None:
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.details, 1)
        right_layout.addLayout(self.actions_row)
        for name in ACTION_NAMES:
            button = QToolButton(toolButtonStyle=Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setDefaultAction(self.fact_actions[name])
            self.actions_row.addWidget(button)
        self.actions_row.addStretch(1)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.view.addActions([self.fact_actions[name] for name in ACTION_NAMES])
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

    def _size_columns(self) -> None:
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, self.model.columnCount()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)

    def focus_results(self) -> None:
        """Enter in the search box: to the results, the first one selected (keyboard-only use)."""
        if self.model.rowCount():
            current = self.view.currentIndex()
            self.view.setCurrentIndex(current if current.isValid() else self.model.index(0, 0))
        self.view.setFocus()

    def current_query(self) -> Query:
        return Query(self.search_box.text(), self.filters.current_filter())

    def _request(self) -> None:
        self.controller.request(self.current_query())

    def refresh(self) -> None:
        self.controller.request(self.current_query())

    def selected_fact(self) -> Fact | None:
        result = self.model.result(self.view.currentIndex())
        return result.fact if result else None

    def follow(self, fact_id: int) -> None:
        """Select ``fact_id`` when it shows up in the results (a correction's new revision)."""
        self._follow = fact_id

    def _show_results(self, results: list[SearchResult]) -> None:
        keep = self.selected_fact()
        wanted = [fact_id for fact_id in (self._follow, keep.id if keep else None) if fact_id is not None]
        self.model.set_results(results, self.search_box.text())
        self.results_shown.emit(len(results))
        rows = {result.fact.id: row for row, result in enumerate(results)}
        for fact_id in wanted:
            if fact_id in rows:
                if fact_id == self._follow:
                    self._follow = None
                self.view.setCurrentIndex(self.model.index(rows[fact_id], 0))
                return
        self._show_nothing()

    def _show_nothing(self) -> None:
        self.details.show_empty()
        self.fact_actions.set_fact(None)
        self.selection_changed.emit(None)

    def _selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        fact = self.selected_fact()
        if fact is None:
            self._show_nothing()
            return
        self.selection_changed.emit(fact)
        self.fact_actions.set_fact(fact)
        vault = self._services.runtime.vault
        self._services.ops.run(lambda: load_details(vault, fact.id), self._details_loaded, owner=self)

    def _details_loaded(self, details: FactDetails) -> None:
        current = self.selected_fact()
        if current is not None and current.id == details.fact.id:
            row = self.view.currentIndex().row()
            result = self.model.result(self.view.currentIndex())
            factors = score_details(result.factors) if result else []
            self.details.show_details(details, self.model.why(row), factors)
            self.fact_actions.set_fact(details.fact)
