"""A real X display with a tray host for the tray tests: Xvfb :N + trayer, started and torn down here."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SCREEN = (1280, 800)
TRAY_WIDTH, TRAY_HEIGHT = 120, 32
TOOLS = ("Xvfb", "trayer", "xdotool", "import")


def _free_display() -> int:
    for n in range(90, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    raise RuntimeError("no free X display number between :90 and :139")


def _wait(check, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.1)
    raise TimeoutError(f"timed out waiting for {what}")


@pytest.fixture
def tray_display() -> Iterator[str]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"a real tray needs {', '.join(missing)} (see TESTING.md)")
    n = _free_display()
    display = f":{n}"
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "DISPLAY": display}
    trayer = None
    try:
        _wait(lambda: Path(f"/tmp/.X11-unix/X{n}").exists(), 10, "Xvfb")
        trayer = subprocess.Popen(["trayer", "--edge", "top", "--align", "right", "--widthtype", "pixel",
                                   "--width", str(TRAY_WIDTH), "--height", str(TRAY_HEIGHT)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        yield display
    finally:
        for proc in (trayer, xvfb):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
