"""PKG-1/PKG-3: the shipped .desktop entry and AppStream metadata pass the platform's validators;
``make install-desktop`` puts the entry, metadata and hicolor icons under XDG_DATA_HOME and
``make uninstall-desktop`` takes them away; the extension zip is ready for a store."""

from __future__ import annotations

import configparser
import json
import os
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from tests.integration.packaging.support import ROOT, require_tool, run
from vodou_desktop import __version__

PACKAGING = ROOT / "packaging"
METAINFO = PACKAGING / "io.vodou.Desktop.metainfo.xml"
ICON_SIZES = (16, 22, 32, 48, 64, 128)


def desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_validates() -> None:
    run([require_tool("desktop-file-validate"), str(PACKAGING / "vodou.desktop")])
    entry = desktop_entry(PACKAGING / "vodou.desktop")
    assert entry["Exec"] == "vodou" and entry["Icon"] == "vodou"


def test_metainfo_validates_and_names_this_release() -> None:
    run([require_tool("appstreamcli"), "validate", "--no-net", str(METAINFO)])
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("launchable") == "vodou.desktop"
    assert [r.get("version") for r in root.iter("release")][0] == __version__


@pytest.fixture
def xdg_data(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    data = tmp_path / "share"
    env = {**os.environ, "XDG_DATA_HOME": str(data), "HOME": str(tmp_path / "home"),
           "VODOU_BIN": "/opt/vodou dir/vodou"}
    return data, env


def installed_files(data: Path) -> list[Path]:
    return [data / "applications" / "vodou.desktop", data / "metainfo" / METAINFO.name,
            *(data / "icons" / "hicolor" / f"{n}x{n}" / "apps" / "vodou.png" for n in ICON_SIZES),
            data / "icons" / "hicolor" / "scalable" / "apps" / "vodou.svg"]


def test_install_and_uninstall_desktop_under_xdg_data_home(xdg_data: tuple[Path, dict[str, str]]) -> None:
    data, env = xdg_data
    run(["make", "-s", "-C", str(ROOT), "install-desktop"], env=env)
    files = installed_files(data)
    assert [f for f in files if not f.is_file()] == []
    entry_path = data / "applications" / "vodou.desktop"
    run([require_tool("desktop-file-validate"), str(entry_path)])
    assert desktop_entry(entry_path)["Exec"] == '"/opt/vodou dir/vodou"'
    for n in ICON_SIZES:
        assert (data / "icons" / "hicolor" / f"{n}x{n}" / "apps" / "vodou.png").read_bytes() == (
            ROOT / "resources" / "icons" / f"vodou-{n}.png").read_bytes()
    assert not (Path(env["HOME"]) / ".local").exists(), "wrote outside XDG_DATA_HOME"

    run(["make", "-s", "-C", str(ROOT), "uninstall-desktop"], env=env)
    assert [p for p in data.rglob("*") if p.is_file()] == []


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
