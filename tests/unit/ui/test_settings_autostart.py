"""PKG-3: the Start-at-login toggle in Settings writes a valid XDG autostart entry under
XDG_CONFIG_HOME (the conftest points it at a temp folder) and removes it."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from vodou_desktop import autostart
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ui.settings_dialog import SettingsDialog


def validate(path: Path) -> None:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.fail("desktop-file-validate is not installed: run `make system-deps`")
    proc = subprocess.run([tool, str(path)], capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr


def entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def exec_argv(value: str) -> list[str]:
    """An Exec value read back as the Desktop Entry spec says: the string escape (``\\\\``) first,
    then arguments split on spaces, where a double-quoted one takes ``\\X`` as X; ``%%`` is ``%``."""
    text = value.replace("\\\\", "\\")
    argv, i = [], 0
    while i < len(text):
        if text[i] == " ":
            i += 1
            continue
        arg = ""
        if text[i] == '"':
            i += 1
            while text[i] != '"':
                if text[i] == "\\":
                    i += 1
                arg += text[i]
                i += 1
            i += 1
        else:
            while i < len(text) and text[i] != " ":
                arg += text[i]
                i += 1
        argv.append(arg.replace("%%", "%"))
    return argv


def open_dialog(qtbot, services, vault, tmp_path) -> SettingsDialog:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path,
                            config_path=tmp_path / "settings.json")
    qtbot.addWidget(dialog)
    return dialog


def test_entry_lives_under_xdg_config_home(vodou_home: Path) -> None:
    assert os.environ["XDG_CONFIG_HOME"].startswith(str(vodou_home))
    assert autostart.entry_path() == Path(os.environ["XDG_CONFIG_HOME"]) / "autostart" / "vodou.desktop"


def test_toggle_writes_a_valid_entry_and_removes_it(qtbot, services, vault, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = autostart.entry_path()
    dialog = open_dialog(qtbot, services, vault, tmp_path)
    assert not dialog.autostart.checkbox.isChecked()
    dialog.autostart.checkbox.setChecked(True)
    dialog.save()
    qtbot.waitUntil(lambda: dialog.saved is not None)
    assert path.is_file()
    validate(path)
    values = entry(path)
    argv = exec_argv(values["Exec"])
    assert argv[-1] == "--background"
    assert Path(argv[0]).name == "vodou" and os.access(argv[0], os.X_OK), argv
    assert values["Type"] == "Application" and values["X-GNOME-Autostart-enabled"] == "true"

    again = open_dialog(qtbot, services, vault, tmp_path)
    assert again.autostart.checkbox.isChecked()  # shows what is on disk
    again.autostart.checkbox.setChecked(False)
    again.save()
    qtbot.waitUntil(lambda: again.saved is not None)
    assert not path.exists()


def test_cancel_leaves_the_entry_alone(qtbot, services, vault, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(qtbot, services, vault, tmp_path)
    dialog.autostart.checkbox.setChecked(True)
    dialog.reject()
    assert not autostart.entry_path().exists()


def test_unwritable_folder_is_reported_and_the_dialog_stays_open(qtbot, services, vault, tmp_path) -> None:  # type: ignore[no-untyped-def]
    autostart.autostart_dir().parent.mkdir(parents=True, exist_ok=True)
    autostart.autostart_dir().write_text("a file where the folder should be")
    dialog = open_dialog(qtbot, services, vault, tmp_path)
    dialog.autostart.checkbox.setChecked(True)
    dialog.save()
    qtbot.waitUntil(lambda: dialog.autostart.problem.text() != "")
    assert dialog.autostart.problem.text().startswith("Not saved: Cannot write the autostart entry")
    assert dialog.result() == 0 and dialog.saved is not None  # settings saved, dialog not accepted


@pytest.mark.parametrize("path", ["/usr/bin/vodou", "/home/a b/.venv/bin/vodou", '/tmp/q"uote$d/back\\slash/vodou',
                                  "/opt/100%/vodou"])
def test_odd_paths_are_quoted_so_the_entry_still_validates(path: str, tmp_path: Path) -> None:
    target = tmp_path / "vodou.desktop"
    target.write_text(autostart.entry_text([path]), encoding="utf-8")
    validate(target)
    assert exec_argv(entry(target)["Exec"]) == [path, "--background"]
