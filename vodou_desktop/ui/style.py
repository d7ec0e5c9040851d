"""Text colours from the palette, never from hard-coded style sheets (light, dark and high-contrast
themes all hold).

Help text (explanations under a field, a summary line) is drawn in the palette's
``PlaceholderText`` role, and a problem ("Not saved: …") in ``WindowText``, bold, so it is never told
by colour alone. Many styles derive ``PlaceholderText`` at half strength (3.4:1 on Fusion's light
grey), below WCAG AA's 4.5:1: ``readable_palette`` moves it toward the text colour just far enough,
and the app applies it at start and whenever the theme changes (``PaletteKeeper``).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

MIN_CONTRAST = 4.5
GROUPS = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive)


def luminance(color: QColor) -> float:
    """WCAG relative luminance."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two opaque colours (1 to 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def over(fg: QColor, bg: QColor) -> QColor:
    """``fg`` drawn over ``bg`` (its alpha applied): the colour a person sees."""
    a = fg.alphaF()
    return QColor.fromRgbF(fg.redF() * a + bg.redF() * (1 - a), fg.greenF() * a + bg.greenF() * (1 - a),
                           fg.blueF() * a + bg.blueF() * (1 - a))


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(a.redF() + (b.redF() - a.redF()) * t, a.greenF() + (b.greenF() - a.greenF()) * t,
                           a.blueF() + (b.blueF() - a.blueF()) * t)


def readable_palette(palette: QPalette) -> QPalette:
    """``palette`` with ``PlaceholderText`` at ≥ 4.5:1 on both Window and Base (unchanged when it
    already is, as in a high-contrast theme): moved toward the text colour in small steps."""
    fixed = QPalette(palette)
    for group in GROUPS:
        text = palette.color(group, QPalette.ColorRole.WindowText)
        grounds = [palette.color(group, QPalette.ColorRole.Window), palette.color(group, QPalette.ColorRole.Base)]
        seen = over(palette.color(group, QPalette.ColorRole.PlaceholderText), grounds[0])
        step = 0.0
        while step < 1.0 and min(contrast(_mix(seen, text, step), g) for g in grounds) < MIN_CONTRAST:
            step = min(1.0, step + 0.05)
        fixed.setColor(group, QPalette.ColorRole.PlaceholderText, _mix(seen, text, step))
    return fixed


def apply_readable_palette(app: QGuiApplication) -> None:
    palette = app.palette()
    fixed = readable_palette(palette)
    if any(fixed.color(g, QPalette.ColorRole.PlaceholderText) != palette.color(g, QPalette.ColorRole.PlaceholderText)
           for g in GROUPS):
        app.setPalette(fixed)


class PaletteKeeper(QObject):
    """Re-applies ``readable_palette`` when the theme changes (light ↔ dark, high contrast)."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self._busy = False
        apply_readable_palette(app)
        app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.ApplicationPaletteChange and watched is self._app and not self._busy:
            self._busy = True
            try:
                apply_readable_palette(self._app)
            finally:
                self._busy = False
        return False


def as_help(label: QLabel) -> QLabel:
    """Secondary text (an explanation, a summary): the palette's ``PlaceholderText`` role."""
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    label.setProperty("help_text", True)
    return label


def help_label(text: str = "", *, wrap: bool = True, parent: QWidget | None = None) -> QLabel:
    return as_help(QLabel(text, parent, wordWrap=wrap))


def problem_label(*, wrap: bool = True, parent: QWidget | None = None) -> QLabel:
    """Where a problem is said: the text colour, bold (the words say it is a problem, not a colour)."""
    label = QLabel(parent, wordWrap=wrap)
    font = QFont(label.font())
    font.setBold(True)
    label.setFont(font)
    label.setProperty("problem_text", True)
    return label
