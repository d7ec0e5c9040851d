"""The first launch of the composed app (issue 24): one plain question at a time, none of them modal,
and none in our own words ("capture tier", "first_party", "bridge"): each question a person can leave
waiting while the tray and the memory browser stay usable."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QDialog, QLabel, QMessageBox

from tests.unit.data.conftest import no_real_keyring  # noqa: F401  (autouse: the key file, never a real keyring)
from tests.unit.ui.test_desktop import desktop  # noqa: F401  (the composed-app fixture)

# Words of the code, not of the person: the tier names, the bridge, the storage engine, our jargon.
JARGON = ("tier", "capture tier", "first_party", "first party", "bridge", "sqlite", "mcp", "embedding", "op id",
          "ops", "backfill", "watcher")


def open_dialogs(earlier: list[QDialog] | None = None) -> list[QDialog]:
    """The dialogs shown now, but those another test left open (``earlier``)."""
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()
            and not any(w is e for e in earlier or [])]


@pytest.fixture
def earlier(qapp) -> list[QDialog]:
    """Dialogs already open before the app starts (left by earlier tests in this process)."""
    return open_dialogs()


def shown_text(dialog: QDialog) -> str:
    """Everything the dialog shows in words: its title, labels and buttons."""
    parts = [dialog.windowTitle()]
    parts += [w.text() for w in dialog.findChildren(QLabel) if w.isVisible()]
    parts += [w.text().replace("&", "") for w in dialog.findChildren(QAbstractButton) if w.isVisible()]
    return "\n".join(parts)


def jargon_in(text: str) -> list[str]:
    folded = text.casefold()
    return [word for word in JARGON if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", folded)]


def decline(dialog: QDialog) -> None:
    """"No" / "Not now": the answer that changes nothing."""
    assert isinstance(dialog, QMessageBox)
    button = next(b for b in dialog.buttons()
                  if dialog.buttonRole(b) in (QMessageBox.ButtonRole.NoRole, QMessageBox.ButtonRole.RejectRole))
    button.click()


def test_first_launch_asks_one_plain_question_at_a_time_never_modal(qtbot, earlier, desktop):  # noqa: F811
    asked: list[str] = []
    qtbot.waitUntil(lambda: len(open_dialogs(earlier)) > 0)
    for _ in range(4):  # a bounded walk through every first-run question
        dialogs = open_dialogs(earlier)
        assert len(dialogs) <= 1, [d.windowTitle() for d in dialogs]  # never two questions stacked
        if not dialogs:
            break
        question = dialogs[0]
        assert question.windowModality() == Qt.WindowModality.NonModal and not question.isModal()
        assert jargon_in(shown_text(question)) == [], shown_text(question)
        asked.append(question.windowTitle())
        decline(question)
        qtbot.waitUntil(lambda q=question: not q.isVisible())
        qtbot.waitUntil(lambda: desktop.services.ops.pending == 0)
    assert asked == ["Capture Claude Code sessions?", "Encrypt your vault?"]
    assert open_dialogs(earlier) == []


def test_the_jargon_check_finds_the_words_it_looks_for():
    assert jargon_in("Saved in the capture tier by the browser bridge") == ["tier", "capture tier", "bridge"]
    assert jargon_in("first_party memories") == ["first_party"]
    assert jargon_in("Your memories, kept on this computer") == []
