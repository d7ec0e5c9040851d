"""The only package that imports PySide6 (with ``app.py``). See ``pyside_refs`` for why it pins
``None``/``True``/``False`` before any Qt call."""

from vodou_desktop.ui.pyside_refs import pin_singletons

pin_singletons()
