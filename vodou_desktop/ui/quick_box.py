"""Quick access (UI-6): a small box over whatever app is in front, to find a memory or add one.

Type to search: results as you type (each keystroke starts a search at once when none runs; keys
typed meanwhile coalesce into the last text). Enter copies the selected memory to the clipboard,
Ctrl+O opens it in the memory browser. Tab turns the box to "Add": Enter then saves what you typed,
in the project chosen beside it. Esc closes. Every search and save runs as an op, off the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QListView, QVBoxLayout, QWidget

from vodou_desktop.governance.ages import format_age
from vodou_desktop.governance.page_memory import project_names
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.service import SearchResult
from vodou_desktop.ui.ops import failure_words
from vodou_desktop.ui.screen_fit import fit_on_screen
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.style import help_label, problem_label
from vodou_desktop.ui.table_model import Column, RecordTableModel
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.words import kind_words, plural, project_words

TITLE = "Vodou quick access"
SHOWN = 8  # results in the box; the memory browser (Ctrl+O) has the rest
WIDTH = 600
NO_PROJECT = "No project (global)"
SEARCH_HINT = "Enter copies · Ctrl+O opens in the memory browser · Tab adds what you typed · Esc closes"
ADD_HINT = "Enter saves it · Up / Down choose its project · Tab searches again · Esc closes"
SAVED_MS = 1200  # how long "Saved" stays before the box closes


def _line(result: SearchResult) -> str:
    fact = result.fact
    text = " ".join(fact.text.split())
    return f"{text}\n{project_words(fact.project)} · {kind_words(fact.kind)} · {format_age(fact.event_time)}"


RESULT_COLUMNS: list[Column[SearchResult]] = [Column("Memory", _line, lambda r: r.fact.text)]


class QuickBox(QWidget):
    """The box. ``summon("search")`` / ``summon("add")`` shows it where the pointer is."""

    opened = Signal(int, str)  # a memory's id and the text searched: show it in the memory browser
    saved = Signal(int)  # a new memory's id
    searched = Signal(str, int)  # the text and how many results it shows (each answer shown)

    def __init__(self, services: Services, parent: QWidget | None = None,
                 copy: Callable[[str], None] | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Tool | Qt.WindowType.WindowStaysOnTopHint
                         | Qt.WindowType.FramelessWindowHint)
        self.setWindowTitle(TITLE)
        self.setAccessibleName(TITLE)
        self.setObjectName("QuickBox")
        self.setFixedWidth(WIDTH)
        self._services = services
        self._copy = copy or (lambda text: QGuiApplication.clipboard().setText(text))
        self.mode = "search"
        self.mode_label = QLabel()
        self.mode_label.setAccessibleName("Quick access mode")
        self.text = QLineEdit(clearButtonEnabled=True)
        self.text.setAccessibleName("Search or add a memory")
        self.text.installEventFilter(self)
        self.results: RecordTableModel[SearchResult] = RecordTableModel(RESULT_COLUMNS, self)
        self.list = QListView(wordWrap=False, alternatingRowColors=True, uniformItemSizes=True)
        self.list.setModel(self.results)
        self.list.setAccessibleName("Memories found")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay in the text field
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.doubleClicked.connect(lambda _index: self.copy_selected())
        self.project = QComboBox(accessibleName="Project for the new memory")
        self.project.addItem(NO_PROJECT, None)
        self.project_label = QLabel("&Project")
        self.project_label.setBuddy(self.project)
        self.hint = help_label(SEARCH_HINT)
        self.status = help_label()
        self.problem = problem_label()
        self._running = False  # a search op is out
        self._wanted = ""  # the text to search when it answers
        self._shown_text: str | None = None
        self._close_timer = QTimer(self, singleShot=True, interval=SAVED_MS)
        self._close_timer.timeout.connect(self.hide)
        self._layout()
        self.text.textChanged.connect(self._typed)
        self.text.returnPressed.connect(self._enter)
        QShortcut(QKeySequence("Ctrl+O"), self, self.open_selected)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.hide)
        self._set_mode("search")

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.mode_label)
        top.addWidget(self.text, 1)
        add_row = QHBoxLayout()
        add_row.addWidget(self.project_label)
        add_row.addWidget(self.project, 1)
        self.add_row = QWidget()
        self.add_row.setLayout(add_row)
        add_row.setContentsMargins(0, 0, 0, 0)
        rows = self.fontMetrics().lineSpacing() * 2 + 6
        self.list.setFixedHeight(rows * 5 + 4)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.list)
        layout.addWidget(self.add_row)
        layout.addWidget(self.status)
        layout.addWidget(self.problem)
        layout.addWidget(self.hint)
        self.setStyleSheet("#QuickBox { border: 1px solid palette(mid); }")

    # -- showing --------------------------------------------------------------------------------
    def summon(self, mode: str = "search") -> None:
        """Show the box (on the screen with the pointer), in ``mode``, ready for typing."""
        self._close_timer.stop()
        self.problem.clear()
        self.status.clear()
        self._set_mode(mode)
        self._read_projects()
        if not self.isVisible():
            self._place()
        self.show()
        self.raise_()
        self.activateWindow()
        self.text.setFocus(Qt.FocusReason.ActiveWindowFocusReason)
        self.text.selectAll()

    def toggle(self) -> None:
        """The shortcut again while the box is in front closes it (as Esc does)."""
        if self.isVisible() and self.isActiveWindow():
            self.hide()
        else:
            self.summon(self.mode)

    def _place(self) -> None:
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        area = screen.availableGeometry()
        self.adjustSize()
        self.move(QPoint(area.center().x() - self.width() // 2, area.top() + area.height() // 5))
        fit_on_screen(self, area)

    def _set_mode(self, mode: str) -> None:
        self.mode = mode
        adding = mode == "add"
        self.mode_label.setText("<b>Add</b>" if adding else "<b>Search</b>")
        self.text.setPlaceholderText("What should Vodou remember?" if adding else
                                     "Search your memory (words or meaning)…")
        self.list.setVisible(not adding)
        self.add_row.setVisible(adding)
        self.hint.setText(ADD_HINT if adding else SEARCH_HINT)
        self.problem.clear()
        self.status.clear()  # what the last search found says nothing about adding
        self.adjustSize()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Tab switches search ⇄ add; Up and Down move through the results, or choose the new memory's
        project (the text keeps the focus: the box is used from the keyboard alone)."""
        if watched is self.text and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
                self._set_mode("search" if self.mode == "add" else "add")
                if self.mode == "search":
                    self._typed(self.text.text())
                return True
            if key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
                step = 1 if key == Qt.Key.Key_Down else -1
                if self.mode == "add":
                    self.project.setCurrentIndex(max(0, min(self.project.currentIndex() + step,
                                                            self.project.count() - 1)))
                elif self.results.rowCount():
                    row = max(0, min(self.list.currentIndex().row() + step, self.results.rowCount() - 1))
                    self.list.setCurrentIndex(self.results.index(row, 0))
                return True
        return super().eventFilter(watched, event)

    # -- searching ------------------------------------------------------------------------------
    def _typed(self, text: str) -> None:
        if self.mode != "search":
            return
        self._wanted = text.strip()
        if not self._running:
            self._search(self._wanted)

    def _search(self, text: str) -> None:
        if not text:
            self._show(text, [])
            return
        self._running = True
        search = self._services.runtime.search
        self._services.ops.run(lambda: search.search(text, FactFilter(project=ALL_PROJECTS), k=SHOWN),
                               lambda results: self._answered(text, results),
                               on_failure=lambda exc: self._failed(text, exc), owner=self)

    def _answered(self, text: str, results: list[SearchResult]) -> None:
        self._running = False
        if text != self._wanted:  # typed on meanwhile: search the last text now
            self._search(self._wanted)
            return
        self._show(text, results)

    def _failed(self, text: str, exc: BaseException) -> None:
        self._running = False
        if text != self._wanted:
            self._search(self._wanted)
            return
        self.problem.setText(failure_words(exc, self._services.ops.vault_path))

    def _show(self, text: str, results: list[SearchResult]) -> None:
        self._shown_text = text
        self.results.set_rows(results)
        if results:
            self.list.setCurrentIndex(self.results.index(0, 0))
        self.status.setText("" if not text else
                            f"No memories match “{text}”. Tab adds it as a new memory." if not results else
                            f"{plural(len(results), 'memory')} shown" + (" (Ctrl+O for all)" if
                                                                         len(results) >= SHOWN else ""))
        self.searched.emit(text, len(results))

    def selected(self) -> SearchResult | None:
        row = self.list.currentIndex().row()
        return self.results.row_record(row if row >= 0 else 0)

    # -- what Enter and Ctrl+O do ---------------------------------------------------------------
    def _enter(self) -> None:
        if self.mode == "add":
            self.save()
        else:
            self.copy_selected()

    def copy_selected(self) -> bool:
        result = self.selected()
        if result is None or self._shown_text != self.text.text().strip():
            return False  # nothing shown yet for what is typed
        self._copy(result.fact.text)
        self._services.messages.info(f"Copied memory #{result.fact.id} to the clipboard.")
        self.hide()
        return True

    def open_selected(self) -> bool:
        result = self.selected() if self.mode == "search" else None
        if result is None:
            return False
        self.opened.emit(result.fact.id, self.text.text().strip())
        self.hide()
        return True

    # -- adding ---------------------------------------------------------------------------------
    def _read_projects(self) -> None:
        vault = self._services.runtime.vault
        self._services.ops.run(lambda: vault.read(project_names), self._projects_read, owner=self)

    def _projects_read(self, names: list[str]) -> None:
        chosen = self.project.currentData()
        self.project.clear()
        self.project.addItem(NO_PROJECT, None)
        for name in names:
            self.project.addItem(name, name)
        self.project.setCurrentIndex(max(0, self.project.findData(chosen)) if chosen else 0)

    def save(self) -> None:
        text = self.text.text().strip()
        if not text:
            self.problem.setText("Type the memory first.")
            return
        vault, project = self._services.runtime.vault, self.project.currentData()
        origin = Origin(kind="panel", tool="app")
        self.text.setEnabled(False)
        self._services.ops.run(lambda: remember(vault, text, origin, project=project),
                               lambda fact_id: self._saved(int(fact_id), project), on_failure=self._not_saved,
                               owner=self)

    def _saved(self, fact_id: int, project: str | None) -> None:
        self.text.setEnabled(True)
        self.text.clear()
        where = f"in {project}" if project else "as a global memory"
        said = f"Remembered memory #{fact_id} {where}."
        self.status.setText(said)
        self._services.messages.info(said)
        self.saved.emit(fact_id)
        self._close_timer.start()

    def _not_saved(self, exc: BaseException) -> None:
        self.text.setEnabled(True)
        self.problem.setText(f"Not saved: {failure_words(exc, self._services.ops.vault_path)}")

    def hideEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        self._close_timer.stop()
        super().hideEvent(event)
