"""The "Start at login" section of Settings (PKG-3): a checkbox for the XDG autostart entry.

The box shows whether the entry exists when the dialog opens; ``apply`` (on Save) writes or removes
it. A failure is shown in the section and keeps the dialog open.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QVBoxLayout, QWidget

from vodou_desktop import autostart
from vodou_desktop.errors import KnownError
from vodou_desktop.ui.style import help_label, problem_label


class AutostartSection(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.checkbox = QCheckBox("Start Vodou in the tray when I log in", checked=autostart.is_enabled())
        self.where = help_label(f"Writes {autostart.entry_path()}")
        self.problem = problem_label()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.checkbox, self.where, self.problem):
            layout.addWidget(widget)

    def apply(self) -> bool:
        """Write or remove the entry to match the box; False (and the reason shown) on failure."""
        try:
            autostart.set_enabled(self.checkbox.isChecked())
        except KnownError as exc:
            self.problem.setText(f"Not saved: {exc}")
            return False
        self.problem.clear()
        return True
