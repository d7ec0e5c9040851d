"""The one message bridge for user-facing messages (qutebrowser's ``utils/message.py``).

Non-GUI code and background ops report here; the app decides how a message is shown (a tray
notification when a tray exists, the memory browser's status bar, or a message box). A
traceback never reaches the person: bugs are logged and summarised in one line.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)


class MessageBridge(QObject):
    """``error``/``info`` may be called from any thread; the signals arrive on the GUI thread."""

    error_shown = Signal(str)
    info_shown = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history: list[tuple[str, str]] = []

    def error(self, text: str) -> None:
        log.warning("%s", text)
        self.history.append(("error", text))
        self.error_shown.emit(text)

    def info(self, text: str) -> None:
        log.info("%s", text)
        self.history.append(("info", text))
        self.info_shown.emit(text)
