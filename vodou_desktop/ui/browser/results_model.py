"""The memory browser's list as a lazy Qt model over the whole vault (UI-4).

A listing is the ids of every memory the query reaches, in order (a search's ranking, or a sort done
in SQL), and the total. Rows are read a page at a time, off the GUI thread, when the view first asks
for one (Anki's browser table does the same): scrolling 100,000 memories reads only what is drawn.
Until a listing's ids are all known, the model holds the first page and says how many there are in
all ("100 of 5,000").

Columns: the memory (a ★ marks a pinned one), its project, kind, where it came from (site or tool in
a few words; in full in the tooltip) and age. While searching, why a memory matched ("matched 'heron' ·
similar in meaning · you wrote it") is the memory cell's tooltip and is in the details pane, with the
score's factors behind "How this was ranked" (SEARCH-2). Ages use the one age formatter (GOV-10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette

from vodou_desktop.governance.ages import format_age
from vodou_desktop.search.service import SearchResult
from vodou_desktop.vault import Fact, FactFilter
from vodou_desktop.words import fact_source, fact_source_short, kind_words, project_words, score_details, why_matched

Index = QModelIndex | QPersistentModelIndex
NO_PARENT = QModelIndex()  # the root; a shared default (Qt treats it as immutable)
BROWSE_COLUMNS = ("Memory", "Project", "Kind", "Source", "Age")
PIN = "★ "
PAGE = 100
LOADING = "…"
GONE = "(no longer here: refreshing)"
# The sort each column's header gives, ascending and descending ("Age" ascending: youngest first).
# The memory's own column sorts by relevance while searching, else by age.
COLUMN_ORDERS = {"Project": ("project", "project"), "Kind": ("kind", "kind"), "Source": ("source", "source"),
                 "Age": ("newest", "oldest")}
ORDER_WORDS = {"relevance": "best match first", "newest": "newest first", "oldest": "oldest first",
               "project": "by project", "kind": "by kind", "source": "by source"}


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


@dataclass
class Listing:
    """One query's answer: every id in order (or the first page of them while ``complete`` is
    false), the rows already read, and how many there are in all."""

    ids: list[int]
    rows: dict[int, SearchResult]
    total: int
    complete: bool
    searching: bool = False
    text: str = ""
    generation: int = 0
    scores: dict[int, float] = field(default_factory=dict)  # further keyword matches' bm25, by id
    order: str = "newest"
    filt: FactFilter | None = None  # the filter it was read under (its pages are read under it too)

    @classmethod
    def of(cls, results: Sequence[SearchResult], text: str = "") -> Listing:
        """A complete listing of results already read (tests, and a caller with its own results)."""
        results = list(results)
        searching = is_search(results)
        return cls([r.fact.id for r in results], {r.fact.id: r for r in results}, len(results), True,
                   searching, text, order="relevance" if searching else "newest")


class ResultsModel(QAbstractTableModel):
    page_wanted = Signal(int, object)  # generation, list[int]: the ids of a page to read
    rows_read = Signal(int, int)  # first, last row just read
    order_changed = Signal(str)  # a key of FACT_ORDERS, or "relevance"

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.listing = Listing([], {}, 0, True)
        self._why: dict[int, str] = {}
        self._asked: set[int] = set()  # pages asked for in this listing
        self._gone: set[int] = set()  # ids whose memory was hidden since the listing was read
        self.columns: tuple[str, ...] = BROWSE_COLUMNS
        self.order = "newest"

    # -- what the tab feeds it ---------------------------------------------------------------
    def set_listing(self, listing: Listing) -> None:
        self.beginResetModel()
        self.listing = listing
        self._asked = {0} if listing.rows else set()
        self._gone = set()
        self._why = {i: self._why_of(r) for i, r in listing.rows.items()}
        self.endResetModel()

    def set_results(self, results: Sequence[SearchResult], query: str = "") -> None:
        self.set_listing(Listing.of(results, query))

    def extend(self, generation: int, ids: list[int]) -> bool:
        """The listing's full id list arrived. False when it does not continue the first page (the
        vault changed between the two reads): the caller then asks again."""
        listing = self.listing
        if generation != listing.generation or listing.complete:
            return True
        if ids[: len(listing.ids)] != listing.ids:
            return False
        first = len(listing.ids)
        if len(ids) > first:
            self.beginInsertRows(NO_PARENT, first, len(ids) - 1)
            listing.ids = ids
            self.endInsertRows()
        listing.total, listing.complete = len(ids), True
        return True

    def fill(self, generation: int, page: int, results: list[SearchResult]) -> None:
        """A page's rows, read by an op; rows hidden since the listing was read show as gone."""
        if generation != self.listing.generation:
            return
        got = {r.fact.id: r for r in results}
        ids = self.listing.ids[page * PAGE: (page + 1) * PAGE]
        for i in ids:
            if i in got:
                self.listing.rows[i] = got[i]
                self._why[i] = self._why_of(got[i])
            else:
                self._gone.add(i)
        if ids:
            first, last = page * PAGE, page * PAGE + len(ids) - 1
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.columns) - 1))
            self.rows_read.emit(first, last)

    def _why_of(self, result: SearchResult) -> str:
        return why_matched(result.fact, result.factors, self.listing.text)

    # -- what the tab reads ------------------------------------------------------------------
    @property
    def total(self) -> int:
        return self.listing.total

    @property
    def searching(self) -> bool:
        return self.listing.searching

    def row_of(self, fact_id: int) -> int | None:
        try:
            return self.listing.ids.index(fact_id)
        except ValueError:
            return None

    def result(self, index: Index) -> SearchResult | None:
        if not index.isValid():
            return None
        return self.result_at(index.row())

    def result_at(self, row: int) -> SearchResult | None:
        ids = self.listing.ids
        return self.listing.rows.get(ids[row]) if 0 <= row < len(ids) else None

    def why(self, row: int) -> str:
        ids = self.listing.ids
        return self._why.get(ids[row], "") if 0 <= row < len(ids) else ""

    @property
    def results(self) -> list[SearchResult]:
        """The rows read so far, in list order."""
        rows = self.listing.rows
        return [rows[i] for i in self.listing.ids if i in rows]

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """A header click: the order is done in SQL by a new listing (the tab asks for it)."""
        name = self.columns[column] if 0 <= column < len(self.columns) else ""
        pair = COLUMN_ORDERS.get(name, ("relevance", "relevance") if self.searching else ("newest", "oldest"))
        self.order = pair[0] if order == Qt.SortOrder.AscendingOrder else pair[1]
        self.order_changed.emit(self.order)

    # -- QAbstractTableModel ----------------------------------------------------------------
    def rowCount(self, parent: Index = NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self.listing.ids)

    def columnCount(self, parent: Index = NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section] if 0 <= section < len(self.columns) else None
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        fact_id = self.listing.ids[index.row()]
        result = self.listing.rows.get(fact_id)
        if result is None:
            return self._unread(index.row(), fact_id, role)
        column = self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(result, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(result, column)
        if role == Qt.ItemDataRole.ForegroundRole and result.fact.forgotten:
            return QGuiApplication.palette().brush(QPalette.ColorGroup.Active, QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.UserRole:
            return fact_id
        return None

    def _unread(self, row: int, fact_id: int, role: int) -> Any:
        """A row not read yet: ask for its page (once) and show a placeholder meanwhile."""
        if role == Qt.ItemDataRole.UserRole:
            return fact_id
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if fact_id in self._gone:
            return GONE
        page = row // PAGE
        if page not in self._asked:
            self._asked.add(page)
            ids = self.listing.ids[page * PAGE: (page + 1) * PAGE]
            self.page_wanted.emit(self.listing.generation, (page, ids))
        return LOADING

    def _text(self, result: SearchResult, column: str) -> str:
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
            return fact_source_short(fact)
        return fact_age(fact)

    def _tooltip(self, result: SearchResult, column: str) -> str | None:
        fact = result.fact
        if column == "Memory":
            text = ("Pinned. " if fact.tier == "pinned" else "") + fact.text
            why = self._why.get(fact.id, "")
            return f"{text}\n\nWhy it matched: {why}" if why else text
        if column == "Source":
            return fact_host(fact)
        return None
