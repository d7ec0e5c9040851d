"""Sync in the tray app (SYNC-5): the background sync's state in the tray menu (synced / syncing /
problem, in words, never by colour alone) and "Sync now". The runs happen on the sync thread
(``sync.background``); its state crosses to the GUI thread through a queued signal.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu

from vodou_desktop.sync.background import BackgroundSync, SyncState
from vodou_desktop.ui.actions import ActionRegistry
from vodou_desktop.ui.services import Services


class SyncStatus(QObject):
    changed = Signal(object)  # SyncState, delivered on the GUI thread

    def __init__(self, services: Services, actions: ActionRegistry, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.background = BackgroundSync(services.runtime.vault, on_state=self.changed.emit)
        self.state = SyncState("off")
        self.state_action = actions.add("sync.state", SyncState("off").words(), enabled=False)
        self.now_action = actions.add("sync.now", "Sync &now", enabled=False)
        self.now_action.triggered.connect(self.sync_now)
        self.changed.connect(self._show)

    def start(self) -> None:
        """Start the background sync when this vault syncs (off the GUI thread: it reads the vault)."""
        self.services.ops.run(self.background.start, lambda started: self.now_action.setEnabled(bool(started)))

    def restart(self) -> None:
        """After Settings set sync up or left it: stop, then start again with the new configuration."""
        def again() -> bool:
            self.background.stop()
            self.background = BackgroundSync(self.services.runtime.vault, on_state=self.changed.emit)
            return self.background.start()

        self.services.ops.run(again, lambda started: self.now_action.setEnabled(bool(started)))

    def attach(self, menu: QMenu, before: str = "quit") -> None:
        anchor = next((a for a in menu.actions() if a.objectName() == before), None)
        for action in (self.state_action, self.now_action):
            menu.insertAction(anchor, action) if anchor is not None else menu.addAction(action)

    def sync_now(self) -> None:
        self.background.request()

    def stop(self) -> None:
        """At quit: a run in progress gets a moment to finish its file; the thread is a daemon."""
        self.background.stop(timeout=5.0)

    def _show(self, state: SyncState) -> None:
        self.state = state
        self.state_action.setText(state.words() if len(state.words()) <= 80 else state.words()[:79] + "…")
        self.state_action.setToolTip(state.words())
