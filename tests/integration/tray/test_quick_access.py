"""Quick access from any app (issue 35, item 1), on a real X display with a tray host: the real app
grabs Ctrl+Shift+Space on X11; ``xdotool key`` opens the box, typing shows results, Tab + text +
Enter adds a memory that ``vodou mem list`` lists; ``vodou quick`` opens the same box; a key another
program holds is said to be taken, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.integration.tray.conftest import _wait
from tests.integration.tray.test_tray import screenshot
from tests.support import own_bridge_port
from vodou_desktop import paths
from vodou_desktop.ingest.capture_watchers import CLAUDE_KEY
from vodou_desktop.ui.encryption_flow import OFFERED_KEY
from vodou_desktop.ui.quick_box import TITLE
from vodou_desktop.ui.welcome import SHOWN_KEY

pytestmark = pytest.mark.tray
HERON = "Herons hunt by standing still in shallow water"
ADDED = "The heron survey starts at the old mill"


def vodou(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vodou_desktop", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def xdotool(display: str, *args: str, check: bool = True) -> str:
    done = subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": display}, capture_output=True, text=True,
                          timeout=20)
    if check:
        assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def quick_window(display: str) -> str:
    """The visible quick box's X window id, or "" (xdotool finds windows by their title)."""
    found = xdotool(display, "search", "--onlyvisible", "--name", f"^{TITLE}$", check=False)
    return found.splitlines()[0] if found else ""


def box_pixels(display: str, window: str, path: Path) -> np.ndarray:
    geometry = dict(line.split("=") for line in xdotool(display, "getwindowgeometry", "--shell", window).split())
    x, y, w, h = (int(geometry[k]) for k in ("X", "Y", "WIDTH", "HEIGHT"))
    return screenshot(display, path)[y:y + h, x:x + w]


@pytest.fixture
def app_env(tray_display, vodou_home):
    own_bridge_port(paths.config_file(), **{CLAUDE_KEY: False, OFFERED_KEY: True, SHOWN_KEY: True})
    env = {**os.environ, "DISPLAY": tray_display, "QT_QPA_PLATFORM": "xcb", "VODOU_EMBEDDER": "none",
           "VODOU_HOME": str(vodou_home)}
    env.pop("WAYLAND_DISPLAY", None)
    added = vodou("mem", "add", HERON, "--project", "birds", env=env)
    assert added.returncode == 0, added.stderr
    return env


def start_app(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vodou_desktop", "-v", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def stop(app: subprocess.Popen[str]) -> str:
    app.terminate()
    try:
        _out, err = app.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        app.kill()
        _out, err = app.communicate()
    return err


def test_the_shortcut_opens_the_box_typing_searches_and_tab_adds(app_env, tray_display, tmp_path, vodou_home):
    app = start_app(app_env)
    try:
        _wait((vodou_home / "run" / "bridge.json").exists, 30, "the app")
        time.sleep(1.0)
        assert quick_window(tray_display) == ""
        xdotool(tray_display, "key", "ctrl+shift+space")
        _wait(lambda: quick_window(tray_display) != "", 10, "the quick box")
        window = quick_window(tray_display)
        empty = box_pixels(tray_display, window, tmp_path / "empty.png")
        xdotool(tray_display, "type", "--delay", "30", "heron")
        time.sleep(1.5)
        found = box_pixels(tray_display, window, tmp_path / "found.png")
        assert empty.shape == found.shape
        changed_rows = np.nonzero((np.abs(found - empty).sum(axis=2) > 60).any(axis=1))[0]
        assert len(changed_rows) > 20, "no result was drawn under the search field"
        xdotool(tray_display, "key", "Tab")
        xdotool(tray_display, "key", "ctrl+a")
        xdotool(tray_display, "type", "--delay", "20", ADDED)
        xdotool(tray_display, "key", "Down")  # the project chooser: from "No project (global)" to "birds"
        xdotool(tray_display, "key", "Return")
        _wait(lambda: ADDED in vodou("mem", "list", env=app_env).stdout, 20, "the memory in vodou mem list")
        _wait(lambda: quick_window(tray_display) == "", 10, "the box to close after saving")
        xdotool(tray_display, "key", "ctrl+shift+space")  # NumLock on: the same key still opens it
        _wait(lambda: quick_window(tray_display) != "", 10, "the quick box again")
        xdotool(tray_display, "key", "Escape")
        _wait(lambda: quick_window(tray_display) == "", 10, "Esc to close the box")
        xdotool(tray_display, "key", "Num_Lock")
        xdotool(tray_display, "key", "ctrl+shift+space")
        _wait(lambda: quick_window(tray_display) != "", 10, "the quick box with NumLock on")
        xdotool(tray_display, "key", "Escape")
        xdotool(tray_display, "key", "Num_Lock")
        _wait(lambda: quick_window(tray_display) == "", 10, "Esc to close the box")
        quick = vodou("quick", env=app_env)  # the command a Wayland desktop binds: the running app's box
        assert quick.returncode == 0, quick.stderr
        _wait(lambda: quick_window(tray_display) != "", 10, "the box from vodou quick")
    finally:
        err = stop(app)
    assert "quick-access shortcut Ctrl+Shift+Space grabbed" in err
    listed = vodou("mem", "list", env=app_env).stdout
    assert f"[birds] {ADDED}" in listed, listed  # in the project chosen beside it


def test_a_key_another_program_holds_is_said_to_be_taken(app_env, tray_display, vodou_home):
    from Xlib import XK, X
    from Xlib.display import Display

    other = Display(tray_display)  # another program holding Ctrl+Shift+Space
    keycode = other.keysym_to_keycode(XK.string_to_keysym("space"))
    other.screen().root.grab_key(keycode, X.ControlMask | X.ShiftMask, True, X.GrabModeAsync, X.GrabModeAsync)
    other.sync()
    app = start_app(app_env)
    try:
        _wait((vodou_home / "run" / "bridge.json").exists, 30, "the app")
        time.sleep(1.5)
    finally:
        err = stop(app)
        other.close()
    assert "Ctrl+Shift+Space is already taken by another program" in err
    assert "Traceback" not in err


def test_vodou_quick_starts_the_app_with_the_box_open(app_env, tray_display, vodou_home):
    app = subprocess.Popen([sys.executable, "-m", "vodou_desktop", "quick"], env=app_env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: quick_window(tray_display) != "", 30, "the quick box of the app vodou quick started")
        browser = xdotool(tray_display, "search", "--onlyvisible", "--name", "^Vodou — memory$", check=False)
        assert browser == ""  # the box, not the memory browser
    finally:
        err = stop(app)
    assert app.returncode == 0, err
