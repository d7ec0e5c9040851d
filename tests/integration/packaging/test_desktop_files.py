"""PKG-1/PKG-3: the shipped .desktop entry and AppStream metadata pass the platform's validators;
``vodou desktop install`` (what ``make install-desktop`` runs) puts the entry, metadata and hicolor
icons under XDG_DATA_HOME from the package's resources, starting the installed ``vodou``, and
``vodou desktop uninstall`` takes them away; the tray app at start points a stale entry at itself
again; the extension zip is ready for a store."""

from __future__ import annotations

import configparser
import json
import os
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from tests.integration.packaging.support import ROOT, require_tool, run
from vodou_desktop import __version__, autostart, desktop_entry

DESKTOP = ROOT / "resources" / "desktop"
METAINFO = DESKTOP / "io.vodou.Desktop.metainfo.xml"
ICON_SIZES = (16, 22, 32, 48, 64, 128)
HANG_GUARD_S = 120  # only stops a hung test


def desktop_entry_keys(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_validates() -> None:
    run([require_tool("desktop-file-validate"), str(DESKTOP / "vodou.desktop")])
    entry = desktop_entry_keys(DESKTOP / "vodou.desktop")
    assert entry["Exec"] == "vodou" and entry["Icon"] == "vodou"


def test_metainfo_validates_and_names_this_release() -> None:
    run([require_tool("appstreamcli"), "validate", "--no-net", str(METAINFO)])
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("launchable") == "vodou.desktop"
    assert root.findtext("project_license") == "Apache-2.0"
    assert [r.get("version") for r in root.iter("release")][0] == __version__


@pytest.fixture
def xdg(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "share"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}


def installed_files(data: Path) -> list[Path]:
    return [data / "applications" / "vodou.desktop", data / "metainfo" / METAINFO.name,
            *(data / "icons" / "hicolor" / f"{n}x{n}" / "apps" / "vodou.png" for n in ICON_SIZES),
            data / "icons" / "hicolor" / "scalable" / "apps" / "vodou.svg"]


def installed_vodou() -> str:
    """The ``vodou`` installed beside this Python, which ``python -m vodou_desktop`` names."""
    script = Path(sys.executable).with_name("vodou")
    if not script.is_file():
        pytest.skip("no vodou script beside this Python (not a venv install)")
    return str(script)


def test_install_and_uninstall_under_xdg_data_home(xdg: dict[str, str]) -> None:
    data = Path(xdg["XDG_DATA_HOME"])
    run([sys.executable, "-m", "vodou_desktop", "desktop", "install"], env=xdg)
    files = installed_files(data)
    assert [f for f in files if not f.is_file()] == []
    entry_path = data / "applications" / "vodou.desktop"
    run([require_tool("desktop-file-validate"), str(entry_path)])
    run([require_tool("appstreamcli"), "validate", "--no-net", str(data / "metainfo" / METAINFO.name)])
    entry = desktop_entry_keys(entry_path)
    assert entry["Exec"] == installed_vodou() and entry["TryExec"] == installed_vodou()
    for n in ICON_SIZES:
        assert (data / "icons" / "hicolor" / f"{n}x{n}" / "apps" / "vodou.png").read_bytes() == (
            ROOT / "resources" / "icons" / f"vodou-{n}.png").read_bytes()
    assert not Path(xdg["HOME"]).exists(), "wrote outside XDG_DATA_HOME"

    run([sys.executable, "-m", "vodou_desktop", "desktop", "uninstall"], env=xdg)
    assert [p for p in data.rglob("*") if p.is_file()] == []


def test_an_awkward_path_is_quoted_and_read_back(tmp_path: Path) -> None:
    """A bundle unpacked into a folder with spaces, quotes, a dollar and a backslash."""
    odd = str(tmp_path / 'My "Apps" $HOME \\ 100%' / "vodou")
    entry = tmp_path / "vodou.desktop"
    entry.write_text(desktop_entry.entry_text([odd]))
    run([require_tool("desktop-file-validate"), str(entry)])
    assert desktop_entry.exec_program(entry) == odd
    assert desktop_entry.is_stale(entry)  # that folder does not exist


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_app_points_stale_entries_at_itself(xdg: dict[str, str], vodou_home: Path, tmp_path: Path) -> None:
    """The bundle moved: the menu and autostart entries name a vodou that is gone. The tray app, at
    start, rewrites both to start the vodou running now; an entry naming a path that exists stays."""
    gone = str(tmp_path / "old-place" / "vodou")
    env = {**xdg, "QT_QPA_PLATFORM": "offscreen", "VODOU_EMBEDDER": "none", "VODOU_HOME": str(vodou_home)}
    menu = Path(env["XDG_DATA_HOME"]) / "applications" / "vodou.desktop"
    start = Path(env["XDG_CONFIG_HOME"]) / "autostart" / "vodou.desktop"
    for path, text in ((menu, desktop_entry.entry_text([gone])), (start, autostart.entry_text([gone]))):
        path.parent.mkdir(parents=True)
        path.write_text(text)
    (vodou_home / "config").mkdir(parents=True, exist_ok=True)
    (vodou_home / "config" / "settings.json").write_text(json.dumps({"bridge_port": free_port()}))
    proc = subprocess.Popen([sys.executable, "-m", "vodou_desktop"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while not (vodou_home / "run" / "desktop.sock").exists():
            assert proc.poll() is None, "the app exited"
            assert time.monotonic() < deadline, "the app did not start"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(HANG_GUARD_S)
    here = Path(sys.executable).with_name("vodou")
    expected = str(here) if here.is_file() else sys.executable
    assert desktop_entry.exec_program(menu) == expected
    assert desktop_entry.exec_program(start) == expected
    assert desktop_entry_keys(start)["Exec"].endswith(" --background")


def test_extension_zip_has_the_project_version_and_no_key(tmp_path: Path) -> None:
    out = run(["make", "-s", "-C", str(ROOT), "extension-zip", f"DIST={tmp_path}"]).stdout.strip()
    assert out == str(tmp_path / f"vodou-extension-{__version__}.zip")
    source = ROOT / "resources" / "extension"
    with zipfile.ZipFile(out) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        names = set(zf.namelist())
    dev = json.loads((source / "manifest.json").read_text())
    assert manifest["version"] == __version__
    assert "key" not in manifest and "key" in dev
    assert manifest == {k: v for k, v in dev.items() if k != "key"} | {"version": __version__}
    expected = {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()} - {"README.md"}
    assert names == expected
