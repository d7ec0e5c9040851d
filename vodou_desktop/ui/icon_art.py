"""Render the icon artwork (``resources/icons/vodou.svg``) to the PNGs the app and extension load.

The SVG is the only source. Run ``python -m vodou_desktop.ui.icon_art [RESOURCES_DIR]`` after
editing it; the app reads the PNGs, so it needs no SVG renderer at run time. The extension's
toolbar icons are the same artwork passed through ``icon.apply_state``, so tray and toolbar always
agree on what each state looks like.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from vodou_desktop.resources import resources_dir
from vodou_desktop.ui.icon import ARTWORK_SIZES, STATES, apply_state

EXTENSION_SIZES = (16, 32, 48, 128)


def render_artwork(size: int, svg_path: Path | None = None) -> QImage:
    """The SVG artwork drawn at ``size`` x ``size`` px on transparency, as ``Format_ARGB32``."""
    path = svg_path or resources_dir() / "icons" / "vodou.svg"
    renderer = QSvgRenderer(str(path))
    if not renderer.isValid():
        raise FileNotFoundError(f"icon artwork missing or not valid SVG: {path}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def write_icons(out_dir: Path, svg_path: Path | None = None) -> list[Path]:
    """Write ``icons/vodou-N.png`` and ``extension/icons/STATE-N.png`` under ``out_dir``."""
    svg = svg_path or resources_dir() / "icons" / "vodou.svg"
    targets = [(out_dir / "icons" / f"vodou-{n}.png", render_artwork(n, svg)) for n in ARTWORK_SIZES]
    for n in EXTENSION_SIZES:
        artwork = render_artwork(n, svg)
        for state in STATES:
            targets.append((out_dir / "extension" / "icons" / f"{state}-{n}.png", apply_state(artwork, state)))
    for path, image in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(path)):
            raise OSError(f"could not write {path}")
    return [path for path, _ in targets]


def main(argv: list[str] | None = None) -> int:
    """Regenerate the PNGs into RESOURCES_DIR (default: this installation's resources folder)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print("usage: python -m vodou_desktop.ui.icon_art [RESOURCES_DIR]", file=sys.stderr)
        return 2
    out_dir = Path(args[0]) if args else resources_dir()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _app = QGuiApplication.instance() or QGuiApplication([])
    for path in write_icons(out_dir, resources_dir() / "icons" / "vodou.svg"):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
