"""Search results as a Qt tree model: one row per result, its score factors as child rows.

The children make the score explanation expandable in a tree view (SEARCH-2 "every result can
explain its score"). Ages use the one age formatter, so a day-granular fact reads "today" or
"yesterday", never "18h" (GOV-10).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from vodou_desktop.governance.ages import format_age
from vodou_desktop.search.service import SearchResult
from vodou_desktop.vault import Fact

Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()  # the root; a shared default (Qt treats it as immutable)
COLUMNS = ("Memory", "Source", "Age", "Score")
TOP = 0  # internal id of a result row; a factor row stores its result's row + 1


def fact_age(fact: Fact, now: datetime | None = None) -> str:
    """The fact's age by its event time, with the precision it was recorded at."""
    precision = fact.valid_precision if fact.valid_at else "instant"
    return format_age(fact.event_time, precision, now=now)


def fact_host(fact: Fact) -> str:
    return fact.site or fact.source_kind


class ResultsModel(QAbstractItemModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._results: list[SearchResult] = []
        self._factors: list[list[tuple[str, str]]] = []

    def set_results(self, results: list[SearchResult]) -> None:
        self.beginResetModel()
        self._results = list(results)
        self._factors = [[(k, _show(v)) for k, v in r.factors.items()] for r in self._results]
        self.endResetModel()

    def result(self, index: Index) -> SearchResult | None:
        if not index.isValid():
            return None
        row = index.row() if index.internalId() == TOP else index.internalId() - 1
        return self._results[row] if 0 <= row < len(self._results) else None

    @property
    def results(self) -> list[SearchResult]:
        return list(self._results)

    # -- QAbstractItemModel -----------------------------------------------------------------
    def index(self, row: int, column: int, parent: Index = NO_PARENT) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, TOP)
        return self.createIndex(row, column, parent.row() + 1)

    def parent(self, index: Index = NO_PARENT) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == TOP:
            return QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, TOP)

    def rowCount(self, parent: Index = NO_PARENT) -> int:
        if not parent.isValid():
            return len(self._results)
        if parent.internalId() == TOP and parent.column() == 0:
            return len(self._factors[parent.row()])
        return 0

    def columnCount(self, parent: Index = NO_PARENT) -> int:
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() != TOP:
            return self._factor_data(index, role)
        result = self._results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._result_text(result, index.column())
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 0:
            return result.fact.text
        if role == Qt.ItemDataRole.ForegroundRole and result.fact.forgotten:
            return Qt.GlobalColor.gray
        if role == Qt.ItemDataRole.UserRole:
            return result.fact.id
        return None

    def _result_text(self, result: SearchResult, column: int) -> str:
        fact = result.fact
        if column == 0:
            text = " ".join(fact.text.split())
            return f"{text}  (forgotten)" if fact.forgotten else text
        if column == 1:
            return fact_host(fact)
        if column == 2:
            return fact_age(fact)
        return f"{result.score:.3f}" if result.factors.get("path") != "recent" else ""

    def _factor_data(self, index: Index, role: int) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or index.column() > 1:
            return None
        name, value = self._factors[index.internalId() - 1][index.row()]
        return name if index.column() == 0 else value


def _show(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
