"""Settings ▸ Quick access: the shortcut that opens the quick box from any app, and where it stands.

The key is recorded as a person presses it (``QKeySequenceEdit``); "No shortcut" clears it. Below,
in words: whether it works from any app here, is taken by another program, or whether this desktop
allows no app a key of its own, in which case it names the command to bind in the desktop's own
keyboard settings (``vodou quick``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFormLayout, QGroupBox, QHBoxLayout, QKeySequenceEdit, QLabel, QPushButton, QWidget

from vodou_desktop import config
from vodou_desktop.errors import InvalidInput
from vodou_desktop.shortcuts import DEFAULT_QUICK_SHORTCUT, validate_shortcut
from vodou_desktop.ui.global_shortcut import BIND_COMMAND, ShortcutState, unavailable_words
from vodou_desktop.ui.style import help_label

HOW = ("Opens a small box over whatever app is in front: type to search your memories (Enter copies one, "
       "Ctrl+O opens it in the memory browser), or press Tab to add what you typed as a new memory.")


class QuickAccessSettings(QGroupBox):
    def __init__(self, shortcut: Any, settings: config.Settings, parent: QWidget | None = None) -> None:
        super().__init__("Quick access", parent)
        self._shortcut = shortcut  # ui.global_shortcut.GlobalShortcut, or None outside the running app
        self.keys = QKeySequenceEdit(QKeySequence(settings.quick_shortcut))
        self.keys.setMaximumSequenceLength(1)
        self.keys.setAccessibleName("Quick-access shortcut")
        self.clear = QPushButton("&No shortcut")
        self.clear.clicked.connect(self.keys.clear)
        self.default = QPushButton(f"&Default ({DEFAULT_QUICK_SHORTCUT})")
        self.default.clicked.connect(lambda: self.keys.setKeySequence(QKeySequence(DEFAULT_QUICK_SHORTCUT)))
        self.how = help_label(HOW)
        self.state = QLabel(wordWrap=True)
        self.state.setAccessibleName("Where the shortcut stands")
        row = QHBoxLayout()
        row.addWidget(self.keys, 1)
        row.addWidget(self.clear)
        row.addWidget(self.default)
        label = QLabel("&Shortcut")
        label.setBuddy(self.keys)
        form = QFormLayout(self)
        form.addRow(self.how)
        form.addRow(label, row)
        form.addRow(self.state)
        if shortcut is not None:
            self.show_state(shortcut.state)
            shortcut.state_changed.connect(self.show_state)
        else:
            self.state.setText(unavailable_words("The tray app is not running here, so no key is held."))

    def show_state(self, state: ShortcutState) -> None:
        self.state.setText(state.words if state.state != "off" else
                           f"No shortcut is set. The command “{BIND_COMMAND}” opens quick access too.")

    def chosen(self) -> str:
        return self.keys.keySequence().toString(QKeySequence.SequenceFormat.PortableText)

    def apply(self, settings: config.Settings) -> config.Settings:
        """``settings`` with the shortcut chosen; InvalidInput says why a key cannot be used."""
        try:
            text = validate_shortcut(self.chosen())
        except InvalidInput as exc:
            raise InvalidInput(f"quick access: {exc}") from None
        return dataclasses.replace(settings, quick_shortcut=text, extra=dict(settings.extra))
