"""Small non-blocking questions: a text prompt and a yes/cancel confirmation.

Both are shown with ``open()`` (window-modal, no nested event loop), so the GUI thread never
waits inside them and tests click their real buttons. The prompt stays open until its work
succeeds; a refusal (bad text, site mode off) is shown in the prompt itself and in the message
channel, so the person can fix the input without retyping it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.errors import KnownError
from vodou_desktop.ui.ops import Ops
from vodou_desktop.ui.style import problem_label


class _CtrlEnter(QObject):
    def __init__(self, editor: QWidget, slot: Callable[[], None]) -> None:
        super().__init__(editor)
        self._slot = slot

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) \
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) \
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._slot()
            return True
        return False


def submit_on_ctrl_enter(editor: QWidget, slot: Callable[[], None]) -> None:
    """Ctrl+Enter in a multi-line editor submits its dialog (Enter alone starts a new line)."""
    editor.installEventFilter(_CtrlEnter(editor, slot))


class TextPrompt(QDialog):
    """Ask for one text; ``submitted(text)`` fires on OK, and the caller closes it on success."""

    submitted = Signal(str)

    def __init__(self, title: str, label: str, text: str = "", *, multiline: bool = False, ok_text: str = "Save",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(460)
        self.editor: QPlainTextEdit | QLineEdit
        if multiline:
            self.editor = QPlainTextEdit(text)
            self.editor.setMinimumHeight(90)
            self.editor.setTabChangesFocus(True)  # Tab reaches the buttons; Ctrl+Enter saves
            submit_on_ctrl_enter(self.editor, self._submit)
        else:
            self.editor = QLineEdit(text)
        self.problem = problem_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(ok_text)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(label, wordWrap=True))
        self.editor.setAccessibleName(title)
        layout.addWidget(self.editor)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.buttons.accepted.connect(self._submit)
        self.buttons.rejected.connect(self.reject)

    def text(self) -> str:
        editor = self.editor
        return editor.toPlainText() if isinstance(editor, QPlainTextEdit) else editor.text()

    def set_text(self, text: str) -> None:
        editor = self.editor
        if isinstance(editor, QPlainTextEdit):
            editor.setPlainText(text)
        else:
            editor.setText(text)

    def _submit(self) -> None:
        if not self.text().strip():
            self.problem.setText("Nothing typed yet.")
            return
        self.problem.clear()
        self.submitted.emit(self.text())

    def run(self, ops: Ops, work: Callable[[str], Any], on_success: Callable[[Any], None]) -> None:
        """On each submit run ``work(text)`` as an op; close on success, explain a refusal here."""

        def submitted(text: str) -> None:
            def done(result: Any) -> None:
                self.accept()
                on_success(result)

            ops.run(lambda: work(text), done, on_failure=lambda exc: self._failed(ops, exc), owner=self)

        self.submitted.connect(submitted)
        self.open()

    def _failed(self, ops: Ops, exc: BaseException) -> None:
        if isinstance(exc, KnownError):
            self.problem.setText(str(exc))
        ops.report(exc)


def ask_to_confirm(parent: QWidget, title: str, text: str, yes_text: str, on_yes: Callable[[], None]) -> QMessageBox:
    """A warning with ``yes_text`` / Cancel; ``on_yes`` runs only when the person confirms."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text,
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, parent)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Yes).setText(yes_text)

    def clicked(button: Any) -> None:
        if box.standardButton(button) == QMessageBox.StandardButton.Yes:
            on_yes()

    box.buttonClicked.connect(clicked)
    box.open()
    return box
