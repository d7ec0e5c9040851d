"""Bridge events (pairing code, paired, active page, approvals changed) as one Qt signal.

The bridge's hub calls subscribers on the thread that emits; re-emitting through a Qt signal
makes every UI reaction run on the GUI thread whatever that thread was.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal


class HubSignals(QObject):
    event = Signal(str, object)  # kind, payload

    def __init__(self, hub: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe = hub.subscribe(lambda kind, payload: self.event.emit(kind, payload))

    def close(self) -> None:
        self._unsubscribe()
