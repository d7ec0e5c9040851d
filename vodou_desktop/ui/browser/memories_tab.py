"""The Memories tab: live search box, filters, results with their score explanation, details,
and the actions on the selected memory (buttons under the details and the results' context menu)."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QItemSelection, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.governance.ages import LONGEST_AGES
from vodou_desktop.ui.browser.details import DetailPane, FactDetails, load_details
from vodou_desktop.ui.browser.fact_actions import NAMES as ACTION_NAMES
from vodou_desktop.ui.browser.fact_actions import FactActions
from vodou_desktop.ui.browser.filters import FilterBar
from vodou_desktop.ui.browser.results_model import COLUMN_ORDERS, Listing, ResultsModel
from vodou_desktop.ui.browser.search_controller import Query, SearchController
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.words import GLOBAL, LIST_KINDS, kind_words, score_details

EMPTY_VAULT = ("<b>Your memory is empty.</b> Add a memory with <i>File ▸ Add memory…</i> (Ctrl+N), import a "
               "ChatGPT or Claude export with <i>File ▸ Import…</i>, or pair the browser extension "
               "(<i>File ▸ Pair browser extension…</i>) to save notes and selections from web pages.")


# The metadata columns fit their words: Kind and Age every word they can show (so none is ever cut),
# Project the vault's project names up to PROJECT_CHARS average characters, Source what is left of
# META_SHARE of the list up to SOURCE_CHARS (a longer site is cut in the middle; the tooltip and the
# details say it whole). The memory's own text gets the rest: at least 1 - META_SHARE of the list.
PROJECT_CHARS, SOURCE_CHARS = 14, 24
NARROW_WIDTH = 960  # below this the details go under the list (the default window is 1100 wide)
META_SHARE = 0.55
KIND_TEXTS = tuple({kind_words(k) for k in LIST_KINDS})  # what a person adds and pages add


def cell_padding(view: QTableView) -> int:
    """What a cell adds around its text (the style's text margins on both sides, and a pixel of grid)."""
    margin = view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1
    return 2 * margin + 2


class MemoryTable(QTableView):
    """The list of memories: a table of whole rows (a table view's work follows the rows drawn, not
    the rows listed, so 100,000 rows cost what 30 do; a tree view lays out every row)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, alternatingRowColors=True, showGrid=False, wordWrap=False,
                         tabKeyNavigation=False, cornerButtonEnabled=False)
        self.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        rows = self.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.horizontalHeader().setHighlightSections(False)

    def header(self) -> QHeaderView:
        """The column headers (the name a tree view gives them)."""
        return self.horizontalHeader()


class MiddleElide(QStyledItemDelegate):
    """Sites keep both ends when cut: "docs.exa…ple.com" says more than "docs.example.c…"."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:  # noqa: N802
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


class MemoriesTab(QWidget):
    selection_changed = Signal(object)  # Fact | None
    results_shown = Signal(int)

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.search_box = QLineEdit(placeholderText="Search your memory (words or meaning)…", clearButtonEnabled=True)
        self.filters = FilterBar()
        self.model = ResultsModel(self)
        self.view = MemoryTable()
        self.view.setModel(self.model)
        self.view.setAccessibleName("Memories")
        self.view.setItemDelegateForColumn(self.model.columns.index("Source"), MiddleElide(self.view))
        self.view.viewport().installEventFilter(self)
        header = self.view.header()
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.sectionClicked.connect(self._header_clicked)
        self.search_box.setAccessibleName("Search memories")
        self.model.modelReset.connect(self._size_columns)
        self._size_columns()
        self._orders = {False: "newest", True: "relevance"}  # browsing, searching
        self._wanted: list[int] = []
        self._show_sort_indicator()  # newest first: the Age column's arrow from the start
        self.details = DetailPane()
        self.empty = QLabel(wordWrap=True, visible=False, textFormat=Qt.TextFormat.RichText)
        self.empty.setAccessibleName("Why nothing is shown")
        self.empty.setStyleSheet("padding: 12px; background: palette(alternate-base)")
        self.actions_row = QHBoxLayout()
        self.fact_actions = FactActions(services, self, follow=self.follow)
        self._follow: int | None = None
        self.controller = SearchController(services.runtime.search, services.ops, self)
        self._build()
        self.search_box.textChanged.connect(self._request)
        self.search_box.returnPressed.connect(self.focus_results)
        self.filters.changed.connect(self._request)
        self.controller.listing_ready.connect(self._show_listing)
        self.controller.ids_ready.connect(self._ids_ready)
        self.controller.failed.connect(services.messages.error)
        self.model.page_wanted.connect(self._read_page)
        self.model.rows_read.connect(self._rows_read)
        self.model.order_changed.connect(self._order_changed)
        self.view.selectionModel().selectionChanged.connect(self._selected)

    def _build(self) -> None:
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.details, 1)
        right_layout.addLayout(self.actions_row)
        second_row = QHBoxLayout()  # two rows, so the buttons never squeeze the results' text column
        right_layout.addLayout(second_row)
        self._button_rows = (self.actions_row, second_row)
        self.action_buttons: list[QToolButton] = []
        for name in ACTION_NAMES:
            button = QToolButton(toolButtonStyle=Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setDefaultAction(self.fact_actions[name])
            self.action_buttons.append(button)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.view.addActions([self.fact_actions[name] for name in ACTION_NAMES])
        for name in ACTION_NAMES:  # their keys work here, so the list's context menu says them
            self.fact_actions[name].setShortcutVisibleInContextMenu(True)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(self.view)
        self.split.addWidget(right)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self._lay_out_for_width(self.width(), force=True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search_box)
        layout.addWidget(self.filters)
        layout.addWidget(self.empty)
        layout.addWidget(self.split, 1)

    def _lay_out_for_width(self, width: int, force: bool = False) -> None:
        """Wide: the details beside the list, their buttons in two rows. Narrow (a small laptop window,
        ``NARROW_WIDTH``): the details under the list, their buttons in one row, so the memory's
        words keep the whole width instead of a third of it."""
        narrow = width < NARROW_WIDTH
        wanted = Qt.Orientation.Vertical if narrow else Qt.Orientation.Horizontal
        if not force and self.split.orientation() == wanted:
            return
        for row in self._button_rows:
            while row.count():
                row.takeAt(0)
        half = len(self.action_buttons) if narrow else (len(self.action_buttons) + 1) // 2
        for i, button in enumerate(self.action_buttons):
            self._button_rows[0 if i < half else 1].addWidget(button)
        for row in self._button_rows:
            row.addStretch(1)
        self.split.setOrientation(wanted)
        self.split.setSizes([600, 400] if narrow else [730, 370])

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        self._lay_out_for_width(event.size().width())
        super().resizeEvent(event)

    def _size_columns(self) -> None:
        """The memory's text gets the room; each metadata column is as wide as its words need (see
        ``META_SHARE``), and only Source (then, on a very narrow list, every column) gives way."""
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        text, head = self.view.fontMetrics(), header.fontMetrics()
        char, pad = text.averageCharWidth(), cell_padding(self.view)
        arrow = self.view.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMarkSize, None, header) + pad

        def fit(words: tuple[str, ...] | list[str], cap: int | None = None) -> int:
            width = max(text.horizontalAdvance(w) for w in words) + pad
            return width if cap is None else min(width, cap * char + pad)

        columns = self.model.columns
        wanted = {"Kind": fit(KIND_TEXTS), "Age": fit(LONGEST_AGES),
                  "Project": fit([GLOBAL, *self.filters.projects()], PROJECT_CHARS)}
        wanted = {name: max(width, head.horizontalAdvance(name) + arrow) for name, width in wanted.items()}
        room = int(self.view.viewport().width() * META_SHARE)
        source_floor = head.horizontalAdvance("Source") + arrow
        wanted["Source"] = max(source_floor, min(SOURCE_CHARS * char + pad, room - sum(wanted.values())))
        scale = min(1.0, room / max(1, sum(wanted.values())))
        for name, width in wanted.items():
            if name in columns:
                column = columns.index(name)
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
                header.resizeSection(column, max(4 * char, int(width * scale)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self._size_columns()
        return super().eventFilter(watched, event)

    # -- order ------------------------------------------------------------------------------
    @property
    def order(self) -> str:
        return self._orders[bool(self.search_box.text().strip())]

    def set_order(self, order: str) -> None:
        """Sort the list (``query.FACT_ORDERS`` or "relevance"): a new listing, sorted in SQL."""
        searching = bool(self.search_box.text().strip())
        if order == "relevance" and not searching:
            order = "newest"
        if self._orders[searching] != order:
            self._orders[searching] = order
            self._show_sort_indicator()
            self.refresh()

    def _header_clicked(self, column: int) -> None:
        name = self.model.columns[column]
        pair = COLUMN_ORDERS.get(name)
        if pair is None:  # the memory's own column: best match (searching) or newest first
            self.set_order("relevance" if self.search_box.text().strip() else "newest")
            return
        ascending = self.order != pair[0] or pair[0] == pair[1]
        self.model.sort(column, Qt.SortOrder.AscendingOrder if ascending else Qt.SortOrder.DescendingOrder)

    def _order_changed(self, order: str) -> None:
        self.set_order(order)

    def _show_sort_indicator(self) -> None:
        header, order = self.view.header(), self.order
        for name, pair in COLUMN_ORDERS.items():
            if order in pair and name in self.model.columns:
                ascending = order == pair[0]
                header.setSortIndicator(self.model.columns.index(name),
                                        Qt.SortOrder.AscendingOrder if ascending else Qt.SortOrder.DescendingOrder)
                return
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)

    def focus_results(self) -> None:
        """Enter in the search box: to the results, the first one selected (keyboard-only use)."""
        if self.model.rowCount():
            current = self.view.currentIndex()
            self.view.setCurrentIndex(current if current.isValid() else self.model.index(0, 0))
        self.view.setFocus()

    def current_query(self) -> Query:
        return Query(self.search_box.text(), self.filters.current_filter(), self.order)

    def _request(self) -> None:
        self._show_sort_indicator()
        self.controller.request(self.current_query())

    def refresh(self) -> None:
        self.controller.request(self.current_query())
        vault, everything = self._services.runtime.vault, FactFilter(project=ALL_PROJECTS)
        self._services.ops.run(lambda: vault.read(lambda conn: q.count_facts_by_project(conn, everything)),
                               self._projects_read, owner=self)

    def _projects_read(self, counts: dict[str, int]) -> None:
        self.filters.set_projects(counts)
        self._size_columns()  # the Project column fits the vault's project names

    def selected_fact(self) -> Fact | None:
        result = self.model.result(self.view.currentIndex())
        return result.fact if result else None

    def follow(self, fact_id: int) -> None:
        """Select ``fact_id`` when it shows up in the results (a correction's new revision)."""
        self._follow = fact_id

    def _show_listing(self, listing: Listing) -> None:
        keep = self.selected_fact()
        self._wanted = [i for i in (self._follow, keep.id if keep else None) if i is not None]
        self.model.set_listing(listing)
        self._say_why_empty(listing.total)
        self.results_shown.emit(listing.total)
        if not self._select_wanted():
            self._show_nothing()

    def _ids_ready(self, generation: int, ids: list[int]) -> None:
        if not self.model.extend(generation, ids):
            self.controller.refresh()  # the vault changed between the first page and the rest
            return
        self.results_shown.emit(self.model.total)
        self._select_wanted()

    def _select_wanted(self) -> bool:
        """Select the memory being followed (a correction's new revision) or the one selected before
        the list was read again, when it is in the list."""
        for fact_id in self._wanted:
            row = self.model.row_of(fact_id)
            if row is not None:
                if fact_id == self._follow:
                    self._follow = None
                self._wanted = []
                self.view.setCurrentIndex(self.model.index(row, 0))
                self.view.scrollTo(self.model.index(row, 0))
                return True
        return False

    def _read_page(self, generation: int, wanted: tuple[int, list[int]]) -> None:
        page, ids = wanted
        self.controller.read_page(generation, self.model.listing, page, ids, self.model.fill)

    def _rows_read(self, first: int, last: int) -> None:
        """The selected row was drawn before it was read: show its details now."""
        row = self.view.currentIndex().row()
        if first <= row <= last and self.details.details is None:
            self._selected(QItemSelection(), QItemSelection())

    def _say_why_empty(self, total: int) -> None:
        """An empty list says what it is for and what to do first, never a blank table."""
        self.empty.setVisible(not total)
        if total:
            return
        query, filters = self.search_box.text().strip(), self.filters.describe()
        if not query and not filters:
            self.empty.setText(EMPTY_VAULT)
            return
        searched = f"No memories match “{html.escape(query)}”" if query else "No memories here"
        where = f" with these filters: {html.escape(', '.join(filters))}" if filters else ""
        hint = " Try other words, or clear the filters." if filters else " Try other words."
        self.empty.setText(f"<b>{searched}</b>{where}.{hint}")

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
