"""Work on the vault file itself while the app runs: restore a backup into its place, encrypt it,
remove its encryption (DATA-1, DATA-3).

The app holds the vault open (the bridge, the capture watchers, the embedding backfill, every
view). ``VaultSwap.run``, on the GUI thread, pauses what would write on its own (capture
watchers, rolling backups, the backfill), then on a worker thread lets go of the file
(``Vault.suspended``: queued writes finish, every connection closes; reads and writes asked for
meanwhile, the bridge's included, wait), does the work with progress, and reopens the file. Views
refresh from the external change the vault then reports, and everything paused resumes, whatever
the outcome. When another program holds the vault, the work says so and changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from vodou_desktop.data.backup import Progress
from vodou_desktop.ui.long_work import JobProgressDialog, LongJob
from vodou_desktop.ui.services import Services

Work = Callable[[Progress], str]  # returns the sentence to show when it is done


class VaultSwap(QObject):
    ended = Signal(bool, str)  # ok, the sentence shown

    def __init__(self, services: Services, *, capture: Any = None, rolling: Any = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._services, self._capture, self._rolling = services, capture, rolling
        self.job: LongJob | None = None
        self.dialog: JobProgressDialog | None = None
        self.result_box: QMessageBox | None = None
        self.last: tuple[bool, str] | None = None

    @property
    def busy(self) -> bool:
        return self.job is not None

    def run(self, title: str, work: Work, parent_widget: QWidget | None = None) -> bool:
        """Start ``work`` (False, and a message, when another one is still running)."""
        if self.job is not None:
            self._services.messages.error("The vault is already being restored or converted; wait until it is done.")
            return False
        self._pause()
        vault = self._services.runtime.vault

        def job_work(progress: Progress, _cancel: threading.Event) -> str:
            with vault.suspended():
                return work(progress)

        job = LongJob(title, job_work, self)
        dialog = JobProgressDialog(job, parent_widget)
        dialog.setCancelButton(None)  # half a conversion is never left behind, but it cannot stop midway
        dialog.setLabelText(f"{title}…")
        job.finished.connect(lambda sentence: self._ended(True, str(sentence)))
        job.failed.connect(lambda sentence: self._ended(False, sentence))
        self.job, self.dialog = job, dialog
        dialog.show()
        job.start()
        return True

    def _pause(self) -> None:
        if self._capture is not None:
            self._capture.set_paused(True)
        if self._rolling is not None:
            self._rolling.stop()
        backfiller = self._services.runtime.backfiller
        if backfiller is not None:
            backfiller.cancel()  # it wakes again on the change the vault reports when it reopens

    def _resume(self) -> None:
        capture, sites = self._capture, self._services.sites
        if capture is not None:  # as the person left it: the tray's Pause still holds
            self._services.ops.run(lambda: bool(sites.paused) if sites is not None else False, capture.set_paused)
        if self._rolling is not None:
            self._rolling.start()

    def _ended(self, ok: bool, sentence: str) -> None:
        self.job = None
        dialog, self.dialog = self.dialog, None
        owner = None
        if dialog is not None and shiboken6.isValid(dialog):  # gone if the window that asked was closed
            owner = dialog.parentWidget()
            dialog.close()
        self._resume()
        self.last = (ok, sentence)
        if ok:
            self._services.messages.info(sentence)
        else:
            self._services.messages.error(sentence)
        box = QMessageBox(QMessageBox.Icon.Information if ok else QMessageBox.Icon.Warning, "Vodou", sentence,
                          QMessageBox.StandardButton.Ok, owner)
        self.result_box = box
        box.open()
        self.ended.emit(ok, sentence)
