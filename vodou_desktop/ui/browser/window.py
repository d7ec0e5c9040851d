"""The memory browser window (UI-4): Memories, Library, Sites, Operator memory, Approvals.

Tabs whose service is missing are not shown. Every tab refreshes from the vault's change events
(Anki's pattern: an op changes the vault, the vault broadcasts, each view decides).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QTabWidget, QWidget

from vodou_desktop.ui.browser.approvals_tab import ApprovalsTab
from vodou_desktop.ui.browser.library_tab import LibraryTab
from vodou_desktop.ui.browser.memories_tab import MemoriesTab
from vodou_desktop.ui.browser.opm_tab import OperatorMemoryTab
from vodou_desktop.ui.browser.sites_tab import SitesTab
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Change


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
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Vodou — memory")
        self.resize(1100, 700)
        self.services = services
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
        self.model_label = QLabel(services.model_status.text())
        self.busy = QProgressBar(maximum=0, maximumWidth=80, visible=False)
        self.statusBar().addPermanentWidget(self.busy)
        self.statusBar().addPermanentWidget(self.model_label)
        services.model_status.changed.connect(self.model_label.setText)
        services.messages.error_shown.connect(self._show_message)
        services.messages.info_shown.connect(self._show_message)
        services.events.changed.connect(self._vault_changed)
        self.memories.controller.busy_changed.connect(self.busy.setVisible)
        self.memories.results_shown.connect(lambda n: self.statusBar().showMessage(
            f"{n} memor{'y' if n == 1 else 'ies'}", 4000))
        self.refresh()

    def add_tab(self, name: str, widget: QWidget) -> None:
        """A further tab, refreshed with the others on every relevant vault change."""
        self.extra_tabs[name] = widget
        self.tabs.addTab(widget, name)
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
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()

    def _vault_changed(self, change: Change) -> None:
        if change.external or change.tables & {"chunks", "documents", "memory_sources", "*"}:
            self.refresh()
        elif change.tables & {"site_rules", "settings", "operator_memory", "operator_memory_history", "approvals"}:
            self._refresh_extra_tabs()

    def _show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)
