"""A read-only table model over a list of records, described by columns (header + getter).

Sites, Library, Operator memory and Approvals are all lists of plain records; one model class
serves them all and is tested once with pytest-qt's model tester.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

R = TypeVar("R")
Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()  # the root; a shared default (Qt treats it as immutable)


@dataclass(frozen=True)
class Column(Generic[R]):
    header: str
    value: Callable[[R], Any]
    tooltip: Callable[[R], str] | None = None


class RecordTableModel(QAbstractTableModel, Generic[R]):
    def __init__(self, columns: Sequence[Column[R]], parent: Any = None) -> None:
        super().__init__(parent)
        self._columns = list(columns)
        self._rows: list[R] = []

    def set_rows(self, rows: Sequence[R]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row_record(self, row: int) -> R | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    @property
    def rows(self) -> list[R]:
        return list(self._rows)

    def rowCount(self, parent: Index = NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self._columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._columns[section].header
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        record, column = self._rows[index.row()], self._columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = column.value(record)
            return "" if value is None else str(value)
        if role == Qt.ItemDataRole.ToolTipRole and column.tooltip is not None:
            return column.tooltip(record)
        return None
