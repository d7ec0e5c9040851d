"""Move to project: a project the vault already has (or global), or a new one named on purpose.

A move never makes a project from a typo: the list holds the projects that exist, and a new one is
started only by choosing "A new project named" and typing its name (a name that exists already is
refused here, pointing at the list). Shown with ``open()``; the move runs as an op and the dialog
stays open, with the reason, when it is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.errors import KnownError
from vodou_desktop.ui.ops import Ops
from vodou_desktop.ui.style import problem_label
from vodou_desktop.words import plural

GLOBAL_CHOICE = "Global (seen from every project)"


class MoveDialog(QDialog):
    """Where ``count`` memories go: ``choice()`` is ``(project or None, new_project)``."""

    def __init__(self, count: int, projects: list[str], current: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Move to project")
        self.setMinimumWidth(420)
        self.projects = list(projects)
        self.existing = QRadioButton("A project you have:", checked=True)
        self.chooser = QComboBox()
        self.chooser.setAccessibleName("Project to move to")
        self.chooser.addItem(GLOBAL_CHOICE, None)
        for name in self.projects:
            self.chooser.addItem(name, name)
        found = self.chooser.findData(current) if current else 0
        self.chooser.setCurrentIndex(max(0, found))
        self.new = QRadioButton("A new project named:")
        self.new_name = QLineEdit(placeholderText="the new project's name", enabled=False)
        self.new_name.setAccessibleName("New project's name")
        self.problem = problem_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Move")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Move {plural(count, 'memory')} to:", wordWrap=True))
        for widget in (self.existing, self.chooser, self.new, self.new_name, self.problem, self.buttons):
            layout.addWidget(widget)
        self.new.toggled.connect(self._new_toggled)
        self.buttons.rejected.connect(self.reject)

    def _new_toggled(self, on: bool) -> None:
        self.new_name.setEnabled(on)
        self.chooser.setEnabled(not on)
        if on:
            self.new_name.setFocus()

    def choice(self) -> tuple[str | None, bool] | None:
        """The project chosen and whether it is new; None (with the reason shown) when not valid."""
        if not self.new.isChecked():
            return self.chooser.currentData(), False
        name = self.new_name.text().strip()
        if not name:
            self.problem.setText("Name the new project.")
            return None
        same = next((p for p in self.projects if p.casefold() == name.casefold()), None)
        if same is not None:
            self.problem.setText(f"{same} exists already: choose it from the list.")
            return None
        return name, True

    def run(self, ops: Ops, work: Callable[[str | None, bool], Any], on_success: Callable[[Any], None]) -> None:
        """On Move run ``work(project, new_project)`` as an op; close on success, explain a refusal here."""

        def accepted() -> None:
            chosen = self.choice()
            if chosen is None:
                return
            self.problem.clear()

            def done(result: Any) -> None:
                self.accept()
                on_success(result)

            ops.run(lambda: work(*chosen), done, on_failure=self._failed_with(ops), owner=self)

        self.buttons.accepted.connect(accepted)
        self.open()

    def _failed_with(self, ops: Ops) -> Callable[[BaseException], None]:
        def failed(exc: BaseException) -> None:
            if isinstance(exc, KnownError):
                self.problem.setText(str(exc))
            ops.report(exc)

        return failed
