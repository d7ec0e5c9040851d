"""The memory browser window (UI-4): Memories, Library, Sites, Operator memory, Approvals.

Tabs whose service is missing are not shown. Every tab refreshes from the vault's change events
(Anki's pattern: an op changes the vault, the vault broadcasts, each view decides).
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QTabWidget, QWidget

from vodou_desktop import paths
from vodou_desktop.errors import KnownError
from vodou_desktop.ui.actions import ActionRegistry
from vodou_desktop.ui.add_memory_dialog import AddMemoryDialog
from vodou_desktop.ui.browser.approvals_tab import ApprovalsTab
from vodou_desktop.ui.browser.library_tab import LibraryTab
from vodou_desktop.ui.browser.memories_tab import MemoriesTab
from vodou_desktop.ui.browser.menus import ShortcutsDialog, build_menu_bar, shortcut_rows, show_about
from vodou_desktop.ui.browser.opm_tab import OperatorMemoryTab
from vodou_desktop.ui.browser.results_model import ORDER_WORDS, ResultsModel
from vodou_desktop.ui.browser.sites_tab import SitesTab
from vodou_desktop.ui.import_work import Importer
from vodou_desktop.ui.long_work import LongJob, WorkIndicator, duplicates_job
from vodou_desktop.ui.screen_fit import fit_on_screen
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Change
from vodou_desktop.words import plural

DEFAULT_SIZE = (1100, 700)
TAB_WORDS = {"Sites": "site", "Approvals": "approval", "Operator memory": "operator memory"}


def memories_count(model: ResultsModel, vault_total: int = 0, selected: int = 0, narrowed: bool = False) -> str:
    """The list's total: "100 of 5,000 memories" while the rest are being listed, then "5,000
    memories"; a filter that narrows the list says of how many ("1,157 of 20,000 shown"); a search
    says how many match; a sort other than the default says so; a selection of several, its count."""
    listed, total = model.rowCount(), model.total
    word = "memory" if total == 1 else "memories"
    if listed < total:
        text = f"{listed:,} of {total:,} {word}"
    elif model.searching:
        text = f"{total:,} {word} match{'es' if total == 1 else ''}"
    elif narrowed and total < vault_total:
        text = f"{total:,} of {vault_total:,} shown"
    else:
        text = f"{total:,} {word}"
    default = "relevance" if model.searching else "newest"
    order = model.listing.order
    text = text if order == default else f"{text} · {ORDER_WORDS[order]}"
    return f"{text} · {selected:,} selected" if selected > 1 else text


def service_tabs(services: Services) -> list[tuple[str, QWidget]]:
    """Sites, Operator memory and Approvals, for the services this app has."""
    tabs: list[tuple[str, QWidget]] = []
    if services.sites is not None:
        tabs.append(("Sites", SitesTab(services)))
    if services.opm is not None:
        tabs.append(("Operator memory", OperatorMemoryTab(services)))
    gate = services.extras.get("gate")
    if gate is not None:
        tabs.append(("Approvals", ApprovalsTab(services, gate)))
    return tabs


class MemoryBrowser(QMainWindow):
    def __init__(self, services: Services, parent: QWidget | None = None,
                 actions: ActionRegistry | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Vodou — memory")
        self.resize(*DEFAULT_SIZE)
        self.services = services
        self.actions = actions or ActionRegistry(self)
        self.tabs = QTabWidget()
        self.memories = MemoriesTab(services)
        self.library = LibraryTab(services)
        self.tabs.addTab(self.memories, "Memories")
        self.tabs.addTab(self.library, "Library")
        self.extra_tabs: dict[str, QWidget] = {}
        for name, widget in service_tabs(services):
            self.extra_tabs[name] = widget
            self.tabs.addTab(widget, name)
        self.setCentralWidget(self.tabs)
        self.count_label = QLabel()
        self.count_label.setAccessibleName("How many are shown")
        self.model_label = QLabel(services.model_status.text())
        self.busy = QProgressBar(maximum=0, maximumWidth=80, visible=False)
        self.work = WorkIndicator()  # re-embedding, the near-duplicate scan: how far they are
        self.statusBar().addWidget(self.count_label)
        self.statusBar().addPermanentWidget(self.work)
        self.statusBar().addPermanentWidget(self.busy)
        self.statusBar().addPermanentWidget(self.model_label)
        self.importer = Importer(services, self, projects=self.memories.filters.project_names)
        self.importer.on_finished = self.memories.fact_actions.imported  # its Undo over the list
        self.dialogs: list[QWidget] = []
        self.menus = build_menu_bar(self, self.actions, self.memories.fact_actions.all(), self._view_actions())
        self._wire_actions()
        self.duplicates: LongJob | None = None
        services.work.progressed.connect(self.work.show_progress)
        services.model_status.changed.connect(self._model_changed)
        services.messages.error_shown.connect(self._show_message)
        services.messages.info_shown.connect(self._show_message)
        services.events.changed.connect(self._vault_changed)
        self.memories.controller.busy_changed.connect(self.busy.setVisible)
        self.memories.results_shown.connect(lambda _n: self._update_count())
        self.memories.selected_count.connect(lambda _n: self._update_count())
        self.library.model.modelReset.connect(self._update_count)
        self.tabs.currentChanged.connect(lambda _i: self._update_count())
        self.tabs.currentChanged.connect(lambda _i: self.memories.fact_actions.set_here(
            self.tabs.currentWidget() is self.memories))
        self._model_changed(services.model_status.text())
        self._restore_geometry()
        self.refresh()

    # -- menus and commands -----------------------------------------------------------------
    def _tab_action(self, i: int) -> QAction:
        action = QAction(f"{self.tabs.tabText(i).replace('&', '')} tab", self)
        if i < 9:
            action.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
        action.triggered.connect(lambda _c=False, n=i: self.tabs.setCurrentIndex(n))
        return action

    def _view_actions(self) -> list[QAction]:
        found = [self._tab_action(i) for i in range(self.tabs.count())]
        search = QAction("Search", self, shortcut=QKeySequence(QKeySequence.StandardKey.Find))
        search.triggered.connect(self.focus_search)
        refresh = QAction("Refresh", self, shortcut=QKeySequence(QKeySequence.StandardKey.Refresh))
        refresh.triggered.connect(self.refresh)
        return [search, refresh, *found]

    def _wire_actions(self) -> None:
        self.actions["add_memory"].triggered.connect(self.add_memory)
        self.actions["import"].triggered.connect(self.importer.choose_and_start)
        self.actions["shortcuts"].triggered.connect(self.show_shortcuts)
        self.actions["dedupe"].triggered.connect(self.find_duplicates)
        self.actions["about"].triggered.connect(lambda: show_about(self))
        for action in self.actions.all_actions():
            self.addAction(action)  # shortcuts work while the window has focus

    def focus_search(self) -> None:
        self.tabs.setCurrentWidget(self.memories)
        self.memories.search_box.setFocus()
        self.memories.search_box.selectAll()

    def add_memory(self) -> AddMemoryDialog:
        dialog = AddMemoryDialog(self.services, parent=self)
        dialog.saved.connect(self.memories.follow)
        self._keep(dialog)
        return dialog

    def find_duplicates(self) -> LongJob | None:
        """Group near-duplicate memories again (as ``vodou mem dedupe``), its progress in the status bar."""
        if self.duplicates is not None:
            return self.duplicates  # one scan at a time
        runtime = self.services.runtime
        try:
            job = duplicates_job(runtime.vault, runtime.embedder, self.services.work, self)
        except KnownError as exc:
            self.services.messages.error(str(exc))
            return None
        job.finished.connect(self._duplicates_found)
        job.failed.connect(self._duplicates_failed)
        self.duplicates = job.start()
        return job

    def _duplicates_found(self, report: object) -> None:
        self.duplicates = None
        groups = len(getattr(report, "groups", []))
        self.services.messages.info(f"Near-duplicates: {plural(groups, 'set of near-duplicates')} among "
                                    f"{plural(getattr(report, 'scanned', 0), 'memory')}.")

    def _duplicates_failed(self, text: str) -> None:
        self.duplicates = None
        self.services.messages.error(text)

    def show_shortcuts(self) -> ShortcutsDialog:
        rows = shortcut_rows([*self.actions.all_actions(), *(a for m in self.menus.values() for a in m.actions())])
        dialog = ShortcutsDialog(rows, self)
        self._keep(dialog)
        return dialog

    def _keep(self, dialog: QWidget) -> None:
        self.dialogs = [d for d in self.dialogs if d.isVisible()]
        self.dialogs.append(dialog)
        dialog.show()

    def _model_changed(self, text: str) -> None:
        """"Embed memories now…" only while search by meaning is on and its model is ready."""
        self.model_label.setText(text)
        embedder = self.services.runtime.embedder
        ready = embedder is not None and embedder.ready
        backfill = self.actions["backfill"]
        backfill.setEnabled(ready)
        backfill.setToolTip("Embed memories that are waiting, for search by meaning" if ready else
                            f"Search by meaning is not available: {text}")
        dedupe = self.actions["dedupe"]
        dedupe.setEnabled(ready)
        dedupe.setToolTip("Group memories that say the same thing (as vodou mem dedupe does)" if ready else
                          f"Near-duplicates are found by meaning, which is not available: {text}")

    def _update_count(self) -> None:
        """The status bar count belongs to the visible tab."""
        current = self.tabs.currentWidget()
        if current is self.memories:
            tab = self.memories
            text = memories_count(tab.model, tab.vault_total, len(tab.fact_actions.ids), bool(tab.filters.describe()))
        elif current is self.library:
            text = plural(self.library.model.rowCount(), "Library page")
        else:
            model = getattr(getattr(current, "view", None), "model", lambda: None)()
            name = next((n for n, w in self.extra_tabs.items() if w is current), "")
            word = TAB_WORDS.get(name)
            text = "" if model is None else plural(model.rowCount(), word) if word else f"{model.rowCount()} shown"
        self.count_label.setText(text)

    # -- size and place, remembered -------------------------------------------------------------
    @staticmethod
    def _window_settings() -> QSettings:
        """The window's place and size, in Vodou's own config folder (never a shared Qt location)."""
        return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)

    def _restore_geometry(self) -> None:
        """The size and place it had, or the default size; either way inside this screen (a size
        remembered on a larger monitor, or 1100×700 on a 1024×600 netbook, is shrunk to fit)."""
        saved = self._window_settings().value("browser/geometry")
        if saved is not None:
            self.restoreGeometry(saved)
        fit_on_screen(self)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        self._window_settings().setValue("browser/geometry", self.saveGeometry())
        super().closeEvent(event)

    def add_tab(self, name: str, widget: QWidget) -> None:
        """A further tab, refreshed with the others on every relevant vault change."""
        self.extra_tabs[name] = widget
        self.tabs.addTab(widget, name)
        self.menus["view"].addAction(self._tab_action(self.tabs.count() - 1))  # View ▸ NAME tab, Ctrl+N
        refresh = getattr(widget, "refresh", None)
        if refresh:
            refresh()

    def refresh(self) -> None:
        self.memories.refresh()
        self.library.refresh()
        self._refresh_extra_tabs()

    def _refresh_extra_tabs(self) -> None:
        for widget in self.extra_tabs.values():
            refresh = getattr(widget, "refresh", None)
            if refresh:
                refresh()

    def raise_window(self) -> None:
        self.show()
        fit_on_screen(self)  # the real frame is known now (and the screen may have changed)
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()

    def _vault_changed(self, change: Change) -> None:
        if change.external or change.tables & {"chunks", "fact_groups", "documents", "memory_sources", "*"}:
            self.refresh()
        elif change.tables & {"site_rules", "settings", "operator_memory", "operator_memory_history", "approvals"}:
            self._refresh_extra_tabs()

    def _show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)
