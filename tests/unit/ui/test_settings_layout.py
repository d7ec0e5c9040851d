"""Settings as pages (issue 24): it fits a 1366×768 laptop at 100 % and 125 % scaling, Save and Cancel
always visible, and no text is drawn over other text at any width the dialog allows."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLabel, QScrollArea, QWidget

from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ui.settings_dialog import SettingsDialog

SCREENS = {1.0: QSize(1366, 768 - 40), 1.25: QSize(round(1366 / 1.25), round(768 / 1.25) - 32)}  # less a panel


@pytest.fixture
def scaled_font():
    """A font 25 % larger stands for 125 % scaling on a screen of 1366/1.25 × 768/1.25 logical pixels."""
    app = QApplication.instance()
    normal = app.font()

    def scale(factor: float) -> None:
        font = app.font()
        font.setPointSizeF(normal.pointSizeF() * factor)
        app.setFont(font)

    yield scale
    app.setFont(normal)


def open_settings(qtbot, services, vault, tmp_path) -> SettingsDialog:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path,
                            config_path=tmp_path / "settings.json")
    qtbot.addWidget(dialog)
    dialog.show()  # as the app opens it: no adjustSize()
    qtbot.waitExposed(dialog)
    return dialog


def in_dialog(widget: QWidget, dialog: QWidget) -> QRect:
    return QRect(widget.mapTo(dialog, widget.rect().topLeft()), widget.size())


def shown_labels(dialog: SettingsDialog) -> list[QLabel]:
    page = dialog.stack.currentWidget()
    inner = page.widget() if isinstance(page, QScrollArea) else page
    outside = [dialog.restart_note, dialog.problem]
    return [w for w in [*inner.findChildren(QLabel), *outside] if w.isVisibleTo(dialog) and w.text()]


def overlaps(dialog: SettingsDialog) -> list[tuple[str, str]]:
    """Pairs of labels drawn over each other, and wrapped labels shorter than their text needs."""
    found = []
    labels = shown_labels(dialog)
    for a, b in itertools.combinations(labels, 2):
        if in_dialog(a, dialog).intersects(in_dialog(b, dialog)):
            found.append((a.text()[:40], b.text()[:40]))
    for label in labels:
        if label.wordWrap() and label.height() < label.heightForWidth(label.width()):
            found.append((label.text()[:40], "cut"))
    return found


@pytest.mark.parametrize("factor", [1.0, 1.25])
def test_settings_fit_a_laptop_screen_with_save_visible(qtbot, services, vault, tmp_path, scaled_font, factor):
    scaled_font(factor)
    dialog = open_settings(qtbot, services, vault, tmp_path)
    screen = SCREENS[factor]
    assert dialog.width() <= screen.width() and dialog.height() <= screen.height(), dialog.size()
    assert dialog.minimumSizeHint().height() <= screen.height() and dialog.minimumHeight() <= screen.height()
    dialog.resize(dialog.minimumSize())
    qtbot.wait(20)
    for size in (dialog.minimumSize(), QSize(dialog.width(), screen.height())):
        dialog.resize(size)
        qtbot.wait(20)
        for button in dialog.buttons.buttons():
            assert dialog.rect().contains(in_dialog(button, dialog)), (size, button.text())
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert save.isVisible() and save.text().replace("&", "") == "Save"


@pytest.mark.parametrize("width", ["minimum", 760, 1366])
def test_no_label_overlaps_another_on_any_page(qtbot, services, vault, tmp_path, width):
    dialog = open_settings(qtbot, services, vault, tmp_path)
    dialog.problem.setText("Not saved: bridge port must be a number between 1024 and 65535, not 'abc'")
    dialog.resize(dialog.minimumWidth() if width == "minimum" else width, dialog.minimumHeight())
    names = [dialog.sections.item(i).text() for i in range(dialog.sections.count())]
    assert names == ["General", "Quick access", "Search", "Browsers", "Backups and encryption", "Capture", "Sync"]
    for row in range(dialog.sections.count()):
        dialog.sections.setCurrentRow(row)
        qtbot.wait(20)
        assert overlaps(dialog) == [], names[row]
