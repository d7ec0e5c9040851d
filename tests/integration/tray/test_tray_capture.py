"""MCP-2 in the real tray app (Xvfb + trayer): with Claude Code capture on in Settings, a line appended
to a session file is captured once; the tray's Pause stops capture (a line appended while paused is
never captured, not even after resuming), and the watchers' states are published."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.integration.tray.conftest import SCREEN, TRAY_WIDTH, _wait
from tests.integration.tray.test_tray import BLUE_HUE, hue_pixels, screenshot, tray_area
from tests.support import own_bridge_port
from vodou_desktop import paths
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q


def session_line(text: str, uid: str, cwd: Path) -> str:
    return json.dumps({"type": "user", "uuid": uid, "cwd": str(cwd), "sessionId": "s1",
                       "timestamp": "2026-07-12T10:00:00.000Z", "message": {"role": "user", "content": text}}) + "\n"


def captured(vault_path: Path) -> list[str]:
    if not vault_path.exists():
        return []
    with Vault.open(vault_path) as vault:
        facts = vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS, tools=("claude-code",)),
                                                  limit=100))
    return [f.text for f in facts if f.kind == "conversation"]  # the person's messages, kept whole (one each)


def capture_state(name: str) -> str | None:
    state_file = paths.runtime_dir() / "capture.json"
    try:
        return json.loads(state_file.read_text())[name]["state"]
    except (FileNotFoundError, ValueError, KeyError):
        return None


def icon_position(display: str, shot_path: Path) -> tuple[int, int]:
    """Where the brand-blue tray icon sits (found once: a paused icon is not blue)."""
    shot = screenshot(display, shot_path)
    ys, xs = np.nonzero(np.abs(tray_area(shot) - [0x2D, 0x6C, 0xDF]).sum(axis=2) < 60)
    assert len(xs) and hue_pixels(tray_area(shot), BLUE_HUE) > 20, "the tray icon is not in the tray"
    return SCREEN[0] - TRAY_WIDTH + int(xs.mean()), int(ys.mean())


def toggle_pause(display: str, icon: tuple[int, int]) -> None:
    """Open the tray menu on the icon and choose its first enabled item, Pause (keyboard, like a person)."""
    env = {**os.environ, "DISPLAY": display}
    subprocess.run(["xdotool", "mousemove", str(icon[0]), str(icon[1]), "click", "3"], env=env, check=True)
    time.sleep(1.0)  # the menu opens
    subprocess.run(["xdotool", "key", "Down", "Return"], env=env, check=True)


@pytest.mark.tray
def test_tray_app_captures_claude_code_by_itself_and_pause_stops_it(tray_display, tmp_path, vodou_home):
    claude, repo = tmp_path / "claude-projects", tmp_path / "repo"
    session = claude / "-repo" / "s1.jsonl"
    session.parent.mkdir(parents=True)
    repo.mkdir()
    session.write_text("")
    vault_path = paths.vault_path()
    own_bridge_port(paths.config_file(), capture_claude_code=True, claude_projects_dir=str(claude))
    env = {**os.environ, "DISPLAY": tray_display, "QT_QPA_PLATFORM": "xcb", "VODOU_EMBEDDER": "none",
           "VODOU_HOME": str(vodou_home)}
    app = subprocess.Popen([sys.executable, "-m", "vodou_desktop"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: capture_state("claude_code") == "watching", 60, "the Claude Code watcher")
        assert capture_state("inbox") == "watching"
        time.sleep(1.5)  # the icon docks into the tray
        with session.open("a") as fh:
            fh.write(session_line("We decided to host the Kestrel docs on GitHub Pages.", "u1", repo))
        _wait(lambda: captured(vault_path), 60, "the appended line to be captured")
        assert captured(vault_path) == ["We decided to host the Kestrel docs on GitHub Pages."]

        icon = icon_position(tray_display, tmp_path / "tray.png")
        toggle_pause(tray_display, icon)
        _wait(lambda: capture_state("claude_code") == "paused", 30, "Pause to stop capture")
        with session.open("a") as fh:
            fh.write(session_line("We use the Heronsecret vault for paused things.", "u2", repo))
        time.sleep(8)  # longer than the 5 s flush window: a running watcher would have stored it by now
        assert len(captured(vault_path)) == 1

        toggle_pause(tray_display, icon)
        _wait(lambda: capture_state("claude_code") == "watching", 30, "resume")
        with session.open("a") as fh:
            fh.write(session_line("We use Grafana for every Kestrel dashboard.", "u3", repo))
        _wait(lambda: len(captured(vault_path)) == 2, 60, "the line appended after resuming")
        texts = captured(vault_path)
        assert "We use Grafana for every Kestrel dashboard." in texts
        assert not any("Heronsecret" in t for t in texts)
    finally:
        app.terminate()
        try:
            out, err = app.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            app.kill()
            out, err = app.communicate()
    assert app.returncode == 0, err
    assert not any("Heronsecret" in t for t in captured(vault_path))
