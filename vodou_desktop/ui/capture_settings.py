"""The Settings section for capture that runs by itself: which watchers run, their folders and states."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QWidget

from vodou_desktop import config
from vodou_desktop.ingest.capture_watchers import enabled, folders, with_capture
from vodou_desktop.ui.style import help_label


class CaptureSettings(QGroupBox):
    """Two switches (Claude Code sessions, inbox folder) with each watcher's folder and state."""

    def __init__(self, capture: Any, settings: config.Settings, parent: QWidget | None = None) -> None:
        super().__init__("Capture by itself", parent)
        self._capture = capture  # ui.capture_status.CaptureStatus, or None when the app runs none
        on = enabled(settings)
        where = folders(settings)
        self.claude = QCheckBox("Capture Claude Code sessions", checked=bool(on["claude_code"]),
                                toolTip=f"Prompts you type to Claude Code, read from {where['claude_code']}")
        self.inbox = QCheckBox("Watch the inbox folder", checked=bool(on["inbox"]),
                               toolTip=f".txt and .md files dropped in {where['inbox']}")
        self.claude_state = help_label()
        self.inbox_state = help_label()
        form = QFormLayout(self)
        form.addRow(self.claude)
        form.addRow("", self.claude_state)
        form.addRow(self.inbox)
        form.addRow("", self.inbox_state)
        self.show_states()
        if capture is not None:
            capture.changed.connect(self.show_states)

    def show_states(self) -> None:
        labels = {"claude_code": self.claude_state, "inbox": self.inbox_state}
        states = self._capture.states() if self._capture is not None else []
        for state in states:
            labels[state.name].setText(f"{state.state} — {state.folder}")
        if not states:
            for label in labels.values():
                label.setText("not running here")

    def apply(self, settings: config.Settings) -> config.Settings:
        """``settings`` with the switches' choices."""
        return with_capture(settings, claude_code=self.claude.isChecked(), inbox=self.inbox.isChecked())

    def saved(self, settings: config.Settings) -> None:
        if self._capture is not None:
            self._capture.reconfigure(settings)
