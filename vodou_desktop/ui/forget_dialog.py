"""Forget site… (GOV-7): dry run, then a confirm that must come within 8 seconds, then Undo.

Step 1 runs the service's dry run and shows the counts. The confirm button counts down the
service's confirm window, from the moment the dry run was asked for (the service's window opened
while it ran, so the dialog's never outlasts it); when it runs out the button disables itself and
the dialog goes back to step 1 (nothing was changed). The service holds the rule — a confirm that arrives too late is
refused there too — so the dialog and the extension cannot disagree. The clock is injectable.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from vodou_desktop.errors import InvalidInput
from vodou_desktop.pages import site_host
from vodou_desktop.ui.ops import Ops, failure_words
from vodou_desktop.words import plural

TICK_MS = 100


class ForgetSiteDialog(QDialog):
    def __init__(self, forgetting: Any, ops: Ops, host: str = "", *, clock: Callable[[], float] = time.monotonic,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Forget site…")
        self.setMinimumWidth(460)
        self._forgetting, self._ops, self._clock = forgetting, ops, clock
        self.plan: dict[str, Any] | None = None
        self.result: dict[str, Any] | None = None
        self._issued_at = 0.0
        self._asked_at = 0.0  # when the dry run was asked for: the service's window opens after it
        self.step = "plan"
        self.host = QLineEdit(host, placeholderText="example.com")
        self.summary = QLabel(wordWrap=True)
        self.check_button = QPushButton("Check what would be forgotten")
        self.confirm_button = QPushButton()
        self.undo_button = QPushButton("Undo")
        self.close_button = QPushButton("Close")
        self._timer = QTimer(self, interval=TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._layout()
        self.check_button.clicked.connect(self.run_dry_run)
        self.confirm_button.clicked.connect(self.confirm)
        self.undo_button.clicked.connect(self.undo)
        self.close_button.clicked.connect(self.reject)
        self.host.returnPressed.connect(self.run_dry_run)
        self._show_plan_step("Forgetting hides this site's memories everywhere. Library pages are kept.")

    def _layout(self) -> None:
        row = QHBoxLayout()
        label = QLabel("&Site")
        label.setBuddy(self.host)
        row.addWidget(label)
        row.addWidget(self.host, 1)
        buttons = QHBoxLayout()
        for button in (self.check_button, self.confirm_button, self.undo_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)

    # -- step 1: dry run --------------------------------------------------------------------
    def run_dry_run(self) -> None:
        try:
            host = site_host(self.host.text())
        except InvalidInput as exc:
            self.summary.setText(str(exc))
            return
        self.check_button.setEnabled(False)
        self._asked_at = self._clock()
        self._ops.run(lambda: self._forgetting.plan(host), self._planned, on_failure=self._failed, owner=self)

    def _planned(self, plan: dict[str, Any]) -> None:
        self.plan, self._issued_at, self.step = plan, self._asked_at, "confirm"
        facts, docs = plan["facts"], plan["documents"]
        self.summary.setText(
            f"<b>{plan['host']}</b>: {plural(facts, 'memory')} will be hidden"
            f" (undo is offered afterwards). {plural(docs, 'Library page')}"
            " from this site will be kept.")
        self.host.setEnabled(False)
        self.check_button.hide()
        self.confirm_button.show()
        self.confirm_button.setEnabled(True)
        self.undo_button.hide()
        self._tick()
        self._timer.start()

    def remaining(self) -> float:
        if self.plan is None:
            return 0.0
        return float(self.plan["expires_in"]) - (self._clock() - self._issued_at)

    def _tick(self) -> None:
        left = self.remaining()
        if left <= 0:
            self._expired()
            return
        count = plural(self.plan["facts"] if self.plan else 0, "memory")
        self.confirm_button.setText(f"Forget {count} ({math.ceil(left)} s)")

    def _expired(self) -> None:
        self.confirm_button.setEnabled(False)
        self._show_plan_step("The confirm ran out after 8 seconds, so nothing was forgotten. Check again to retry.")

    def _show_plan_step(self, message: str) -> None:
        self._timer.stop()
        self.plan, self.step = None, "plan"
        self.summary.setText(message)
        self.host.setEnabled(True)
        self.check_button.show()
        self.check_button.setEnabled(True)
        self.confirm_button.hide()
        self.undo_button.hide()

    # -- step 2: confirm --------------------------------------------------------------------
    def confirm(self) -> None:
        if self.plan is None or not self.confirm_button.isEnabled() or self.remaining() <= 0:
            self._expired()
            return
        token = self.plan["token"]
        self._timer.stop()
        self.confirm_button.setEnabled(False)
        self._ops.run(lambda: self._forgetting.confirm(token), self._confirmed, on_failure=self._failed, owner=self)

    def _confirmed(self, result: dict[str, Any]) -> None:
        self.result, self.step = result, "done"
        hidden = result.get("facts_hidden", result.get("facts", 0))
        kept = result.get("documents_kept", result.get("documents", 0))
        self.summary.setText(f"Forgot {plural(hidden, 'memory')} from <b>{result['host']}</b>."
                             f" {plural(kept, 'Library page')} kept.")
        self.confirm_button.hide()
        self.undo_button.show()
        self.undo_button.setEnabled(True)

    # -- step 3: undo -----------------------------------------------------------------------
    def undo(self) -> None:
        if self.result is None:
            return
        op = self.result["op"]
        self.undo_button.setEnabled(False)
        self._ops.run(lambda: self._forgetting.undo(op), self._undone, on_failure=self._failed, owner=self)

    def _undone(self, result: dict[str, Any]) -> None:
        self.step = "undone"
        restored = result.get("facts_restored", 0)
        self.summary.setText(f"Undone: {plural(restored, 'memory')} from {result['host']} restored.")
        self.undo_button.hide()

    def _failed(self, exc: BaseException) -> None:
        self._show_plan_step(failure_words(exc, self._ops.vault_path))  # a bug is logged with its traceback
