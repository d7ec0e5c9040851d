"""The memory browser window (UI-4): Memories, Library, Sites, Operator memory, Approvals.

Tabs whose service is missing are not shown. Every tab refreshes from the vault's change events
(Anki's pattern: an op changes the vault, the vault broadcasts, each view decides).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QTabWidget, QWidget

from vodou_desktop.ui.browser.library_tab import LibraryTab
from vodou_desktop.ui.browser.memories_tab import MemoriesTab
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import Change


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
        self.memories.results_shown.connect(lambda n: self.statusBar().showMessage(f"{n} memories", 4000))
        self.refresh()

    def add_tab(self, name: str, widget: QWidget) -> None:
        """Tabs from the governance and bridge services (Sites, Operator memory, Approvals)."""
        self.extra_tabs[name] = widget
        self.tabs.addTab(widget, name)
        refresh = getattr(widget, "refresh", None)
        if refresh:
            refresh()

    def refresh(self) -> None:
        self.memories.refresh()
        self.library.refresh()
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
        elif change.tables & {"site_rules", "settings", "operator_memory", "approvals"}:
            for widget in self.extra_tabs.values():
                refresh = getattr(widget, "refresh", None)
                if refresh:
                    refresh()

    def _show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)
