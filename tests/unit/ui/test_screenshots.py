"""``python -m vodou_desktop.ui.screenshots OUTDIR`` renders non-blank PNGs of the right size."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from PySide6.QtGui import QImage

from vodou_desktop.ui.screenshots import BROWSER_SIZE, SHOTS


def test_screenshots_render_non_blank_images(tmp_path):
    out = tmp_path / "shots"
    done = subprocess.run([sys.executable, "-m", "vodou_desktop.ui.screenshots", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in SHOTS:
        image = QImage(str(out / name))
        assert not image.isNull(), name
        assert image.width() >= 200 and image.height() >= 80, (name, image.size())
        argb = image.convertToFormat(QImage.Format.Format_ARGB32)  # kept alive while numpy reads its bits
        arr = np.frombuffer(argb.constBits(), dtype=np.uint32).copy()
        assert len(np.unique(arr)) > 20, f"{name} looks blank"
    for name in ("memory-browser.png", "sites.png", "operator-memory.png", "approvals.png"):
        browser = QImage(str(out / name))
        assert (browser.width(), browser.height()) == BROWSER_SIZE, name
