"""File ▸ Add memory…: type a memory, choose its project and kind, save it (one write, as an op).

The memory is stamped as written in the app (source kind ``panel``, tool ``app``) through the one
write entry, ``ingest.remember``. A preference is about the person, so it stays global: the dialog
says so instead of silently dropping the project.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.governance.page_memory import project_names
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.ops import failure_words
from vodou_desktop.ui.prompts import submit_on_ctrl_enter
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.style import help_label, problem_label
from vodou_desktop.vault.facts import GLOBAL_KINDS
from vodou_desktop.words import FACT_KINDS

NO_PROJECT = "No project (global)"


class AddMemoryDialog(QDialog):
    saved = Signal(int)  # the new memory's id

    def __init__(self, services: Services, project: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add memory")
        self.setMinimumWidth(460)
        self._services = services
        self.text = QPlainTextEdit(placeholderText="What should Vodou remember?")
        self.text.setAccessibleName("Memory text")
        self.text.setTabChangesFocus(True)
        submit_on_ctrl_enter(self.text, self.save)
        self.project = QComboBox(editable=True)
        self.project.setAccessibleName("Project")
        self.project.addItem(NO_PROJECT)
        self.kind = QComboBox()
        self.kind.setAccessibleName("Kind")
        self.kind.addItems(FACT_KINDS)
        self.note = help_label()
        self.problem = problem_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        form = QFormLayout()
        for label, widget in (("&Memory", self.text), ("&Project", self.project), ("&Kind", self.kind)):
            form.addRow(label, widget)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.kind.currentTextChanged.connect(self._kind_changed)
        self._wanted_project = project
        vault = services.runtime.vault
        services.ops.run(lambda: vault.read(project_names), self._projects_loaded, owner=self)

    def _projects_loaded(self, names: list[str]) -> None:
        self.project.addItems(names)
        if self._wanted_project:
            self.project.setCurrentText(self._wanted_project)

    def _kind_changed(self, kind: str) -> None:
        global_kind = kind in GLOBAL_KINDS
        self.project.setEnabled(not global_kind)
        self.note.setText("A preference is about you, so it stays global (seen in every project)."
                          if global_kind else "")

    def chosen_project(self) -> str | None:
        text = self.project.currentText().strip()
        return None if text in ("", NO_PROJECT) or self.kind.currentText() in GLOBAL_KINDS else text

    def save(self) -> None:
        text = self.text.toPlainText().strip()
        if not text:
            self.problem.setText("Type the memory first.")
            return
        vault, kind, project = self._services.runtime.vault, self.kind.currentText(), self.chosen_project()
        origin = Origin(kind="panel", tool="app")
        self.buttons.setEnabled(False)
        self._services.ops.run(lambda: remember(vault, text, origin, kind=kind, project=project), self._saved,
                               on_failure=self._failed, owner=self)

    def _saved(self, fact_id: Any) -> None:
        removed = getattr(fact_id, "note", None)  # secrets removed before saving (vault/secret_filter.py)
        self._services.messages.info(f"Remembered memory #{int(fact_id)}." + (f" {removed}." if removed else ""))
        self.saved.emit(int(fact_id))
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        self.buttons.setEnabled(True)
        self.problem.setText(f"Not saved: {failure_words(exc, self._services.ops.vault_path)}")
