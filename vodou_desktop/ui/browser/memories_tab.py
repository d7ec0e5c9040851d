"""The Memories tab: live search box (words, meaning and the operators ``project:``, ``kind:``,
``site:``, ``after:``, ``before:``), filters, results with their score explanation, details, and the
actions on the selected memories (buttons under the details, the Edit menu and the results' context
menu). The list takes an extended selection (Shift, Ctrl, Ctrl+A); every action acts on all of it.
A selection outlives a refresh of the list; after a removal the next row is selected."""

from __future__ import annotations

import html

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
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
from vodou_desktop.ui.ops import failure_words
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
BUTTONS = tuple(n for n in ACTION_NAMES if n != "export")  # under the details; export is in the menus


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
        self.setSelectionMode(QTableView.SelectionMode.ExtendedSelection)
        rows = self.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.horizontalHeader().setHighlightSections(False)

    def header(self) -> QHeaderView:
        """The column headers (the name a tree view gives them)."""
        return self.horizontalHeader()

    def selectionCommand(self, index: QModelIndex | QPersistentModelIndex,  # noqa: N802 (Qt's name)
                         event: QEvent | None = None) -> QItemSelectionModel.SelectionFlag:
        """A row chosen by the program (no key or click: ``setCurrentIndex``) is selected alone, whatever
        keys the application last saw held; clicks and keys extend the selection as usual."""
        if event is None:
            return QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        return super().selectionCommand(index, event)


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted rows as runs of consecutive ones: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and runs[-1][1] == row - 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs


class MiddleElide(QStyledItemDelegate):
    """Sites keep both ends when cut: "docs.exa…ple.com" says more than "docs.example.c…"."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:  # noqa: N802
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


class MemoriesTab(QWidget):
    selection_changed = Signal(object)  # Fact | None: the one memory selected
    selected_count = Signal(int)  # how many rows are selected
    results_shown = Signal(int)

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.search_box = QLineEdit(placeholderText="Search your memory (words or meaning; project:, kind:, site:, "
                                    "after:, before:)…", clearButtonEnabled=True)
        self.search_box.setToolTip("Words or meaning. Narrow with project:birds (project:birds+global, "
                                   "project:global), kind:decision, site:example.com, after:2024-05, before:7d")
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
        self._keep: set[int] = set()  # the selection to restore when the list is read again
        self.vault_total = 0  # memories in the vault (forgotten ones aside): "1,157 of 20,000 shown"
        self._show_sort_indicator()  # newest first: the Age column's arrow from the start
        self.details = DetailPane()
        self.empty = QLabel(wordWrap=True, visible=False, textFormat=Qt.TextFormat.RichText)
        self.empty.setAccessibleName("Why nothing is shown")
        self.empty.setStyleSheet("padding: 12px; background: palette(alternate-base)")
        self.actions_row = QHBoxLayout()
        self.fact_actions = FactActions(services, self, follow=self.follow, after_removal=self._follow_next)
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
        self.fact_actions.editing_wanted.connect(self.details.start_editing)
        self.fact_actions.corrected.connect(self._corrected)
        self.details.save_wanted.connect(self._save_correction)

    def _build(self) -> None:
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.details, 1)
        right_layout.addLayout(self.actions_row)
        second_row = QHBoxLayout()  # two rows, so the buttons never squeeze the results' text column
        right_layout.addLayout(second_row)
        self._button_rows = (self.actions_row, second_row)
        self.action_buttons: list[QToolButton] = []
        for name in BUTTONS:
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
        layout.addWidget(self.fact_actions.bar)
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
        self.split.setSizes([650, 350] if narrow else [730, 370])  # narrow: the list keeps most rows

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
        self._services.ops.run(lambda: vault.read(lambda conn: q.project_counts(conn, everything)),
                               self._projects_read, owner=self)

    def _projects_read(self, counts: q.ProjectCounts) -> None:
        self.vault_total = counts.total
        self.filters.set_projects(counts)
        self._size_columns()  # the Project column fits the vault's project names
        if self.model.listing.generation:  # a list is shown: its "of 20,000" changes with the vault
            self.results_shown.emit(self.model.total)

    def selected_fact(self) -> Fact | None:
        result = self.model.result(self.view.currentIndex())
        return result.fact if result else None

    def selected_ids(self) -> list[int]:
        """The ids of every selected row, in list order (read from the selection's ranges: a
        Ctrl+A over 20,000 rows costs no index per row)."""
        ids, rows = self.model.listing.ids, set()
        for span in self.view.selectionModel().selection():
            rows.update(range(span.top(), span.bottom() + 1))
        return [ids[r] for r in sorted(rows) if 0 <= r < len(ids)]

    def select_rows(self, first: int, last: int) -> None:
        """Select rows ``first`` to ``last`` (as Shift+click does), the first one current."""
        model, selection = self.model, QItemSelection()
        selection.select(model.index(first, 0), model.index(last, model.columnCount() - 1))
        flags = QItemSelectionModel.SelectionFlag
        self.view.selectionModel().setCurrentIndex(model.index(first, 0), flags.NoUpdate)
        self.view.selectionModel().select(selection, flags.ClearAndSelect | flags.Rows)

    def follow(self, fact_id: int) -> None:
        """Select ``fact_id`` when it shows up in the results (a memory just added or moved)."""
        self._follow = fact_id

    def _follow_next(self, removed: list[int]) -> None:
        """``removed`` is about to leave the list: select the row after them then (else the one before)."""
        ids, gone = self.model.listing.ids, set(removed)
        rows = [r for r, i in enumerate(ids) if i in gone]
        if not rows:
            return
        after = next((ids[r] for r in range(rows[-1] + 1, len(ids)) if ids[r] not in gone), None)
        before = next((ids[r] for r in range(rows[0] - 1, -1, -1) if ids[r] not in gone), None)
        wanted = after if after is not None else before
        if wanted is not None:
            self._follow = wanted
            self._keep = set()

    def _show_listing(self, listing: Listing) -> None:
        current = self.model.listing.ids[self.view.currentIndex().row()] \
            if 0 <= self.view.currentIndex().row() < len(self.model.listing.ids) else None
        self._keep = set(self.selected_ids()) if self._follow is None else set()
        self._wanted = [i for i in (self._follow, current) if i is not None]
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
        """Select the memory being followed (one just added or moved, the next row after a removal),
        or the selection there was before the list was read again, for what is still in the list."""
        if not self._wanted:
            return False
        rows = {i: r for r, i in enumerate(self.model.listing.ids)}
        target = next((i for i in self._wanted if i in rows), None)
        if target is None:
            return False
        if target == self._follow:
            self._follow = None
        keep = [rows[i] for i in self._keep if i in rows] if target in self._keep else []
        self._wanted, self._keep = [], set()
        model, selection = self.model, QItemSelection()
        last = model.columnCount() - 1
        for first, end in _runs(sorted({*keep, rows[target]})):  # one range per run: Ctrl+A is one range
            selection.select(model.index(first, 0), model.index(end, last))
        flags = QItemSelectionModel.SelectionFlag
        self.view.selectionModel().setCurrentIndex(model.index(rows[target], 0), flags.NoUpdate)
        self.view.selectionModel().select(selection, flags.ClearAndSelect | flags.Rows)
        self.view.scrollTo(model.index(rows[target], 0))
        return True

    def _read_page(self, generation: int, wanted: tuple[int, list[int]]) -> None:
        page, ids = wanted
        self.controller.read_page(generation, self.model.listing, page, ids, self.model.fill)

    def _rows_read(self, first: int, last: int) -> None:
        """Selected rows were drawn before they were read: show their details (or what they are) now."""
        spans = self.view.selectionModel().selection()
        if self.details.details is None and any(s.top() <= last and s.bottom() >= first for s in spans):
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
        self.selected_count.emit(0)  # after set_fact: the count is read from the actions' selection

    def _selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        ids = self.selected_ids()
        rows = self.model.listing.rows
        self.fact_actions.set_selection(ids, [r.fact for i in ids if (r := rows.get(i)) is not None])
        self.selected_count.emit(len(ids))
        if len(ids) > 1:
            self.details.show_empty(f"{len(ids):,} memories selected: the actions below, in the Edit menu and "
                                    "in the list's context menu act on all of them.")
            self.selection_changed.emit(None)
            return
        result = rows.get(ids[0]) if ids else None
        if result is None:  # its row not read yet (or nothing selected)
            self.details.show_empty(keep_editing=bool(ids))
            self.selection_changed.emit(None)
            if not ids:
                self.fact_actions.set_fact(None)
            return
        fact = result.fact
        self.selection_changed.emit(fact)
        self.fact_actions.set_fact(fact)
        vault = self._services.runtime.vault
        self._services.ops.run(lambda: load_details(vault, fact.id), self._details_loaded, owner=self)

    def _save_correction(self, fact_id: int, text: str) -> None:
        vault_path = self._services.ops.vault_path

        def failed(exc: BaseException) -> None:
            self.details.editing_failed(failure_words(exc, vault_path))
            self._services.ops.report(exc)

        self.fact_actions.save_correction(fact_id, text, failed)

    def _corrected(self, fact_id: int) -> None:
        """The memory keeps its id: the list, read again, keeps it selected in its row."""
        self.details.stop_editing()

    def _details_loaded(self, details: FactDetails) -> None:
        ids = self.selected_ids()
        if ids == [details.fact.id]:
            row = self.model.row_of(details.fact.id)
            result = self.model.result_at(row) if row is not None else None
            factors = score_details(result.factors) if result else []
            self.details.show_details(details, self.model.why(row) if row is not None else "", factors)
            self.fact_actions.set_fact(details.fact)
