"""Capture in the app's UI: the first-run question (asked once, answer stored, nothing watched before
yes), the states in the tray actions, and the Settings section that turns watchers on and off."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QMenu, QMessageBox

from vodou_desktop import config, paths
from vodou_desktop.ingest.capture_watchers import needs_first_run_question
from vodou_desktop.ui.actions import ActionRegistry
from vodou_desktop.ui.capture_status import CaptureStatus
from vodou_desktop.ui.settings_dialog import SettingsDialog
from vodou_desktop.ui.tray import build_menu


def test_first_run_question_then_states_in_the_tray_menu(qtbot, services, tmp_path):
    (tmp_path / "claude").mkdir()
    services.runtime.settings = config.Settings(extra={"claude_projects_dir": str(tmp_path / "claude")})
    actions = ActionRegistry()
    status = CaptureStatus(services, actions)
    menu: QMenu = build_menu(actions)
    status.attach(menu)
    names = [a.objectName() for a in menu.actions() if a.objectName()]
    assert names[names.index("pause") + 1: names.index("pause") + 3] == ["capture.claude_code", "capture.inbox"]
    status.start(paused=False)
    assert status.question is not None and not status.question.isModal()
    qtbot.waitUntil(lambda: actions["capture.claude_code"].text() == "Claude Code sessions: not asked yet")
    status.question.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: actions["capture.claude_code"].text() == "Claude Code sessions: watching")
    assert json.loads(paths.config_file().read_text())["capture_claude_code"] is True
    assert not needs_first_run_question(services.runtime.settings)
    actions["pause"].setChecked(True)
    qtbot.waitUntil(lambda: actions["capture.claude_code"].text() == "Claude Code sessions: paused")
    assert actions["capture.inbox"].text() == "Inbox folder: paused"
    status.stop()


def test_no_question_once_answered_and_settings_turn_watchers_off(qtbot, services, vault, tmp_path):
    services.runtime.settings = config.Settings(extra={"claude_projects_dir": str(tmp_path / "absent"),
                                                      "capture_claude_code": True})
    status = CaptureStatus(services, ActionRegistry())
    services.extras["capture"] = status
    status.start(paused=False)
    assert status.question is None
    qtbot.waitUntil(lambda: [s.state for s in status.states()] == ["folder missing", "watching"])
    path = tmp_path / "settings.json"
    dialog = SettingsDialog(services, None, None, vault_path=vault.path, config_path=path)
    qtbot.addWidget(dialog)
    assert dialog.capture.claude.isChecked() and dialog.capture.inbox.isChecked()
    qtbot.waitUntil(lambda: dialog.capture.claude_state.text().startswith("folder missing"))
    dialog.capture.inbox.setChecked(False)
    dialog.save()
    qtbot.waitUntil(lambda: path.exists())
    assert json.loads(path.read_text())["capture_inbox"] is False
    qtbot.waitUntil(lambda: [s.state for s in status.states()] == ["folder missing", "off"])
    status.stop()
