"""Rolling daily backups while the app runs: a timer that asks, off the GUI thread, whether
today's backup is due (``data.rolling.run_if_due``); the backup itself runs as an op."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from vodou_desktop.data.backup import BackupReport
from vodou_desktop.data.rolling import run_if_due
from vodou_desktop.ui.services import Services

FIRST_CHECK_MS = 60_000  # a minute after start: never in the way of opening the vault
CHECK_EVERY_MS = 3_600_000


class RollingBackups(QObject):
    def __init__(self, services: Services, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._services = services
        self.last: BackupReport | None = None
        self._timer = QTimer(self, interval=CHECK_EVERY_MS)
        self._timer.timeout.connect(self.check)

    def start(self, first_check_ms: int = FIRST_CHECK_MS) -> None:
        QTimer.singleShot(first_check_ms, self, self.check)
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def check(self) -> None:
        runtime = self._services.runtime
        settings, path = runtime.settings, runtime.vault.path
        if not settings.backups_enabled:
            return
        self._services.ops.run(lambda: run_if_due(path, settings), self._done, owner=self)

    def _done(self, report: BackupReport | None) -> None:
        if report is not None:
            self.last = report
