"""Search results as a flat Qt model: one row per memory, in the person's words.

Columns: the memory (a ★ marks a pinned one), its project, kind, where it came from (site or tool
in words) and age. While searching, one more column says why it matched in a sentence
("matched 'heron' · similar in meaning · you wrote it"); the score's factors, with plain names,
are in that cell's tooltip and in the details pane (SEARCH-2). While browsing there is no score.
Ages use the one age formatter, so a day-granular fact reads "today" or "yesterday" (GOV-10).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from vodou_desktop.governance.ages import format_age
from vodou_desktop.search.service import SearchResult
from vodou_desktop.vault import Fact
from vodou_desktop.words import fact_source, kind_words, project_words, score_details, why_matched

Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()  # the root; a shared default (Qt treats it as immutable)
BROWSE_COLUMNS = ("Memory", "Project", "Kind", "Source", "Age")
WHY = "Why it matched"
PIN = "★ "


def fact_age(fact: Fact, now: datetime | None = None) -> str:
    """The fact's age by its event time, with the precision it was recorded at."""
    precision = fact.valid_precision if fact.valid_at else "instant"
    return format_age(fact.event_time, precision, now=now)


def fact_host(fact: Fact) -> str:
    """Where the memory came from, in words (a web site, else the tool that saved it)."""
    return fact_source(fact)


def is_search(results: list[SearchResult]) -> bool:
    return any(r.factors.get("path") not in (None, "recent") for r in results)


def score_tooltip(result: SearchResult) -> str:
    rows = score_details(result.factors)
    return "\n".join(f"{name}: {value}" for name, value in rows)


class ResultsModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._results: list[SearchResult] = []
        self._why: list[str] = []
        self.columns: tuple[str, ...] = BROWSE_COLUMNS

    def set_results(self, results: list[SearchResult], query: str = "", site: str | None = None) -> None:
        self.beginResetModel()
        self._results = list(results)
        self.columns = (*BROWSE_COLUMNS, WHY) if is_search(self._results) else BROWSE_COLUMNS
        self._why = [why_matched(r.fact, r.factors, query, site) for r in self._results]
        self.endResetModel()

    def result(self, index: Index) -> SearchResult | None:
        if not index.isValid():
            return None
        row = index.row()
        return self._results[row] if 0 <= row < len(self._results) else None

    def why(self, row: int) -> str:
        return self._why[row] if 0 <= row < len(self._why) else ""

    @property
    def results(self) -> list[SearchResult]:
        return list(self._results)

    # -- QAbstractTableModel ----------------------------------------------------------------
    def rowCount(self, parent: Index = NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self._results)

    def columnCount(self, parent: Index = NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section] if 0 <= section < len(self.columns) else None
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        result = self._results[index.row()]
        column = self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(index.row(), result, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(result, column)
        if role == Qt.ItemDataRole.ForegroundRole and result.fact.forgotten:
            return Qt.GlobalColor.gray
        if role == Qt.ItemDataRole.UserRole:
            return result.fact.id
        return None

    def _text(self, row: int, result: SearchResult, column: str) -> str:
        fact = result.fact
        if column == "Memory":
            text = " ".join(fact.text.split())
            text = (PIN if fact.tier == "pinned" else "") + text
            return f"{text}  (forgotten)" if fact.forgotten else text
        if column == "Project":
            return project_words(fact.project)
        if column == "Kind":
            return kind_words(fact.kind)
        if column == "Source":
            return fact_host(fact)
        if column == "Age":
            return fact_age(fact)
        return self._why[row]

    def _tooltip(self, result: SearchResult, column: str) -> str | None:
        if column == "Memory":
            return ("Pinned. " if result.fact.tier == "pinned" else "") + result.fact.text
        if column == WHY:
            return score_tooltip(result)
        return None
