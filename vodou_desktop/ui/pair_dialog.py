"""Pair browser extension…: how to pair, and the one-time code when the extension asks for one."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QPushButton, QVBoxLayout, QWidget

from vodou_desktop.ui.ops import Ops

HOW = ("Open the Vodou extension in your browser and choose <b>Pair</b>. A one-time code appears here; "
       "type it into the extension. The code is valid for 3 minutes and works once.")


class PairDialog(QDialog):
    def __init__(self, bridge: Any, ops: Ops, code: dict[str, Any] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Pair browser extension")
        self.setMinimumWidth(420)
        port = getattr(bridge, "port", None)
        self.status = QLabel(f"The bridge listens on 127.0.0.1:{port}." if port else "The bridge is not running.")
        self.code = QLabel(alignment=Qt.AlignmentFlag.AlignCenter,
                           styleSheet="font-size: 26pt; font-family: monospace; letter-spacing: 4px")
        self.code.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        current = code or (bridge.hub.last.get("pairing_code") if bridge is not None else None)
        self.code.setText(spaced_code(current["code"]) if current else "—")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(HOW, wordWrap=True))
        layout.addWidget(self.code)
        layout.addWidget(self.status)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        layout.addWidget(close)


def spaced_code(code: str) -> str:
    """``ABCD2345`` → ``ABCD-2345``: easier to read and type (the bridge ignores the dash)."""
    return f"{code[:4]}-{code[4:]}" if len(code) == 8 else code
