"""Colours come from the palette (issue 24): no hard-coded text colour in the interface's code, and
help text at ≥ 4.5:1 in light, dark and high-contrast palettes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel

from vodou_desktop import ui
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ui.settings_dialog import SettingsDialog
from vodou_desktop.ui.style import MIN_CONTRAST, apply_readable_palette, contrast, over, readable_palette

# a colour in a style sheet or in rich text, other than a palette role: "color: gray", "color:#b00020",
# "<font color=...>", "background-color: #fff"
HARD_CODED = re.compile(r"""(?:color\s*:\s*(?!palette\()[#\w]|<font\s+color)""", re.IGNORECASE)
STRING = re.compile(r'''("[^"\n]*"|'[^'\n]*')''')


def offending_lines() -> list[str]:
    root = Path(ui.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if any(HARD_CODED.search(s) for s in STRING.findall(line)):
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    return found


def test_no_hard_coded_colour_in_any_style_sheet_of_the_interface():
    assert offending_lines() == []


def test_the_colour_check_finds_what_it_looks_for():
    for sample in ('QLabel(styleSheet="color: gray")', '''f"<p style='color:#808080'>{text}</p>"''',
                   '"<font color=red>"', "label.setStyleSheet('background-color: #fff')"):
        assert any(HARD_CODED.search(s) for s in STRING.findall(sample)), sample
    assert not any(HARD_CODED.search(s) for s in STRING.findall('"background: palette(alternate-base)"'))


def _palette(window: str, text: str, base: str, placeholder: QColor) -> QPalette:
    palette = QPalette(QColor(window))
    for role, colour in ((QPalette.ColorRole.WindowText, text), (QPalette.ColorRole.Text, text),
                         (QPalette.ColorRole.Base, base), (QPalette.ColorRole.Window, window)):
        palette.setColor(role, QColor(colour))
    palette.setColor(QPalette.ColorRole.PlaceholderText, placeholder)
    return palette


def half(colour: str) -> QColor:
    c = QColor(colour)
    c.setAlpha(128)
    return c


PALETTES = {
    "light": lambda: _palette("#efefef", "#000000", "#ffffff", half("#000000")),  # Fusion's light: 3.4:1 as is
    "dark": lambda: _palette("#2b2b2b", "#e8e8e8", "#1e1e1e", half("#e8e8e8")),
    "high-contrast": lambda: _palette("#000000", "#ffffff", "#000000", QColor("#808080")),
    "style": lambda: QApplication.style().standardPalette(),
}


@pytest.mark.parametrize("name", list(PALETTES))
def test_help_text_is_readable_in_every_palette(qtbot, services, vault, tmp_path, name):
    app = QApplication.instance()
    before = app.palette()
    app.setPalette(PALETTES[name]())
    try:
        apply_readable_palette(app)
        dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path,
                                config_path=tmp_path / "settings.json")
        qtbot.addWidget(dialog)
        helps = [label for label in dialog.findChildren(QLabel) if label.property("help_text")]
        assert len(helps) >= 4  # the endpoint's help, the restart note, the autostart entry, capture states
        for label in helps:
            palette = label.palette()
            ink = over(palette.color(label.foregroundRole()), palette.color(QPalette.ColorRole.Window))
            assert label.foregroundRole() == QPalette.ColorRole.PlaceholderText
            assert contrast(ink, palette.color(QPalette.ColorRole.Window)) >= MIN_CONTRAST, (name, label.text())
    finally:
        app.setPalette(before)


def test_a_palette_already_readable_is_left_as_it_is():
    strong = _palette("#000000", "#ffffff", "#000000", QColor("#ffff00"))
    assert readable_palette(strong).color(QPalette.ColorRole.PlaceholderText) == QColor("#ffff00")
    weak = PALETTES["light"]()
    assert contrast(over(weak.color(QPalette.ColorRole.PlaceholderText), QColor("#efefef")), QColor("#efefef")) < 4.5
