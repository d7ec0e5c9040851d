"""Read-only Qt models over plain records, described by columns (header + getter): a table and a tree.

Sites, Library and Approvals are lists of plain records; Operator memory is a tree (category →
memory → superseded revisions). One table model and one tree model serve them all, each tested
with pytest-qt's model tester.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractItemModel, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

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


@dataclass
class TreeRow(Generic[R]):
    """A record with its child records (a category with its memories, a memory with its past)."""

    record: R
    children: list[TreeRow[R]] = field(default_factory=list)


@dataclass
class _Node(Generic[R]):
    record: R | None
    parent: int  # internal id of the parent node; the root is 0 and has parent -1
    row: int
    children: list[int] = field(default_factory=list)


class RecordTreeModel(QAbstractItemModel, Generic[R]):
    """A read-only tree of records, each level described by the same columns.

    Indexes carry the node's integer id (never a Python pointer), so a reset can drop the old
    nodes safely while views still hold stale indexes.
    """

    def __init__(self, columns: Sequence[Column[R]], parent: Any = None) -> None:
        super().__init__(parent)
        self._columns = list(columns)
        self._nodes: list[_Node[R]] = [_Node(None, -1, 0)]

    def set_rows(self, rows: Sequence[TreeRow[R]]) -> None:
        self.beginResetModel()
        self._nodes = [_Node(None, -1, 0)]
        self._add(0, rows)
        self.endResetModel()

    def _add(self, parent: int, rows: Sequence[TreeRow[R]]) -> None:
        for row, tree_row in enumerate(rows):
            node_id = len(self._nodes)
            self._nodes.append(_Node(tree_row.record, parent, row))
            self._nodes[parent].children.append(node_id)
            self._add(node_id, tree_row.children)

    def record(self, index: Index) -> R | None:
        return self._nodes[index.internalId()].record if index.isValid() else None

    def records(self) -> list[R]:
        """Every record, depth first (for tests and searches over the tree)."""
        return [node.record for node in self._nodes[1:] if node.record is not None]

    def index(self, row: int, column: int, parent: Index = NO_PARENT) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        parent_id = parent.internalId() if parent.isValid() else 0
        return self.createIndex(row, column, self._nodes[parent_id].children[row])

    def parent(self, index: Index = NO_PARENT) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        parent_id = self._nodes[index.internalId()].parent
        if parent_id <= 0:
            return QModelIndex()
        return self.createIndex(self._nodes[parent_id].row, 0, parent_id)

    def rowCount(self, parent: Index = NO_PARENT) -> int:
        if not parent.isValid():
            return len(self._nodes[0].children)
        if parent.column() != 0:
            return 0
        return len(self._nodes[parent.internalId()].children)

    def columnCount(self, parent: Index = NO_PARENT) -> int:
        return len(self._columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._columns[section].header
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        record = self.record(index)
        if record is None:
            return None
        column = self._columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = column.value(record)
            return "" if value is None else str(value)
        if role == Qt.ItemDataRole.ToolTipRole and column.tooltip is not None:
            return column.tooltip(record)
        return None
