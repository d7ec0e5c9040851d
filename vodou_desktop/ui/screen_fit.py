"""Windows open inside the screen's available area (the screen less panels and docks).

A default size, or one remembered from a larger monitor, is shrunk to what this screen gives, and a
window placed off it (a monitor since unplugged) is moved back, title bar included.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QStyle, QWidget


def available_area(widget: QWidget) -> QRect:
    """The available geometry of the screen the widget is on (the primary one before it is shown)."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def frame_allowance(widget: QWidget) -> QSize:
    """What the window manager adds around the client area: the real frame once shown, else the
    style's title bar height and a border as a guess."""
    frame, inner = widget.frameGeometry(), widget.geometry()
    if widget.isVisible() and frame != inner:
        return QSize(frame.width() - inner.width(), frame.height() - inner.height())
    title = widget.style().pixelMetric(QStyle.PixelMetric.PM_TitleBarHeight, None, widget)
    return QSize(8, title + 8)


def fit_on_screen(widget: QWidget, area: QRect | None = None) -> QRect:
    """Shrink ``widget`` to fit ``area`` (the screen's available geometry) and move it inside;
    returns the client geometry it now has."""
    area = area or available_area(widget)
    extra = frame_allowance(widget)
    room = QSize(max(1, area.width() - extra.width()), max(1, area.height() - extra.height()))
    minimum = widget.minimumSize()
    size = QSize(max(min(widget.width(), room.width()), min(minimum.width(), room.width())),
                 max(min(widget.height(), room.height()), min(minimum.height(), room.height())))
    if size != widget.size():
        widget.resize(size)
    frame = widget.frameGeometry().topLeft()  # what move() places: the frame's corner
    outer = QSize(size.width() + extra.width(), size.height() + extra.height())
    x = min(max(frame.x(), area.left()), area.left() + area.width() - outer.width())
    y = min(max(frame.y(), area.top()), area.top() + area.height() - outer.height())
    if QPoint(x, y) != frame:
        widget.move(QPoint(x, y))
    return widget.geometry()
