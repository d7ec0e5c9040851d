"""The undo bar over the list of memories: what the last action did, with an Undo button.

Shown after each action on memories (where the eye is, not in the status bar's corner): "Forgot 50
memories" [Undo]. An erase shows what it did and that it is final, with no button. The bar stays
until the next action, an undo, or its close button; Edit ▸ Undo (Ctrl+Z) does what its button does.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget


class UndoBar(QFrame):
    undo_wanted = Signal(str)  # the operation's id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, visible=False)
        self.setObjectName("undo-bar")
        self.setAccessibleName("What the last action did")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#undo-bar { background: palette(alternate-base); }")
        self.text = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setAccessibleName("Undo the last action")
        self.close_button = QToolButton(text="×", autoRaise=True, toolTip="Hide this bar")
        self.close_button.setAccessibleName("Hide this bar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 2, 4, 2)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.undo_button)
        layout.addWidget(self.close_button)
        self.op: str | None = None
        self.undo_button.clicked.connect(self._undo)
        self.close_button.clicked.connect(self.hide)

    def show_done(self, sentence: str, op: str | None) -> None:
        """``sentence`` about what was done; an Undo button when ``op`` can be undone."""
        self.op = op
        self.text.setText(sentence)
        self.undo_button.setVisible(op is not None)
        self.undo_button.setEnabled(op is not None)
        self.show()

    def show_undone(self, sentence: str) -> None:
        self.show_done(sentence, None)

    def _undo(self) -> None:
        if self.op is not None:
            self.undo_button.setEnabled(False)  # one click, one undo
            self.undo_wanted.emit(self.op)
