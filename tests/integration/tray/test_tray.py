"""The real app in a real tray (Xvfb + trayer): context menu, and the icon turning green on its pixels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

from tests.integration.tray.conftest import SCREEN, TRAY_HEIGHT, TRAY_WIDTH, _wait
from tests.support import own_bridge_port
from vodou_desktop import paths

EXT = "abcdefghijklmnopabcdefghijklmnop"
PAGE = "https://birds.example.org/heron"
BLUE_HUE, GREEN_HUE = (200, 250), (110, 170)


def screenshot(display: str, path: Path) -> np.ndarray:
    subprocess.run(["import", "-window", "root", str(path)], env={**os.environ, "DISPLAY": display}, check=True,
                   timeout=20)
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB888)
    arr = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    return arr[:, : image.width() * 3].reshape(image.height(), image.width(), 3).astype(int)


def tray_area(shot: np.ndarray) -> np.ndarray:
    return shot[0:TRAY_HEIGHT, SCREEN[0] - TRAY_WIDTH : SCREEN[0]]


def hue_pixels(area: np.ndarray, band: tuple[int, int]) -> int:
    """Saturated pixels whose hue lies in ``band`` (degrees)."""
    r, g, b = area[..., 0], area[..., 1], area[..., 2]
    mx, mn = area.max(axis=2), area.min(axis=2)
    chroma = mx - mn
    safe = np.where(chroma == 0, 1, chroma)
    hue = np.where(mx == r, (g - b) / safe % 6, np.where(mx == g, (b - r) / safe + 2, (r - g) / safe + 4)) * 60
    return int(((chroma > 60) & (hue >= band[0]) & (hue <= band[1])).sum())


def call(port: int, token: str, method: str, path: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json", "X-Vodou-Client": "tray-test"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.mark.tray
def test_real_tray_menu_and_green_icon(tray_display, tmp_path, vodou_home):
    own_bridge_port(paths.config_file())
    env = {**os.environ, "DISPLAY": tray_display, "QT_QPA_PLATFORM": "xcb", "VODOU_EMBEDDER": "none",
           "VODOU_HOME": str(vodou_home)}
    app = subprocess.Popen([sys.executable, "-m", "vodou_desktop"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        port_file = vodou_home / "run" / "bridge.json"
        _wait(port_file.exists, 30, "the app's bridge")
        port = json.loads(port_file.read_text())["port"]
        time.sleep(1.5)  # the icon docks into the tray
        shot = screenshot(tray_display, tmp_path / "tray.png")
        blue = hue_pixels(tray_area(shot), BLUE_HUE)
        assert blue > 20, "the brand-blue tray icon is not in the tray"
        ys, xs = np.nonzero(np.abs(tray_area(shot) - [0x2D, 0x6C, 0xDF]).sum(axis=2) < 60)
        icon_x, icon_y = SCREEN[0] - TRAY_WIDTH + int(xs.mean()), int(ys.mean())
        xdo = {**os.environ, "DISPLAY": tray_display}
        subprocess.run(["xdotool", "mousemove", str(icon_x), str(icon_y), "click", "3"], env=xdo, check=True)
        time.sleep(1.0)
        menu_shot = screenshot(tray_display, tmp_path / "tray-menu.png")
        changed = (np.abs(menu_shot - shot).sum(axis=2) > 30).sum()
        assert changed > 5000, "the context menu did not open"
        subprocess.run(["xdotool", "key", "Escape"], env=xdo, check=True)
        from vodou_desktop.bridge.tokens import TokenStore

        token = TokenStore().pair(EXT)
        call(port, token, "POST", "/api/active-page", {"url": PAGE, "title": "Heron"})
        time.sleep(1.0)
        before = screenshot(tray_display, tmp_path / "before-note.png")
        assert hue_pixels(tray_area(before), GREEN_HUE) == 0
        call(port, token, "POST", "/api/notes", {"url": PAGE, "title": "Heron", "text": "Herons stand still to hunt"})
        end, green = time.monotonic() + 5, 0
        while time.monotonic() < end and green < 20:
            after = screenshot(tray_display, tmp_path / "after-note.png")
            green = hue_pixels(tray_area(after), GREEN_HUE)
        assert green > 20, "the tray icon did not turn green"
        assert hue_pixels(tray_area(after), BLUE_HUE) < blue / 4
    finally:
        app.terminate()
        try:
            out, err = app.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            app.kill()
            out, err = app.communicate()
    assert app.returncode == 0, err
