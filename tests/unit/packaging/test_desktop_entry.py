"""desktop_entry: which entries are stale, and that only those are rewritten (PKG-3)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vodou_desktop import autostart, desktop_entry


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    return tmp_path / "share"


@pytest.mark.parametrize("argv", [["/opt/vodou/vodou"], ['/opt/my "odd" $dir/100%/vodou', "--flag"],
                                  ["/opt/back\\slash/vodou"]])
def test_exec_round_trip(argv: list[str], tmp_path: Path) -> None:
    entry = tmp_path / "e.desktop"
    entry.write_text(desktop_entry.entry_text(argv))
    assert desktop_entry.exec_program(entry) == argv[0]


def test_an_entry_naming_a_missing_program_is_rewritten(data_home: Path, tmp_path: Path) -> None:
    desktop_entry.install(["/gone/vodou"])
    autostart.enable(["/gone/vodou"])
    assert desktop_entry.is_stale(desktop_entry.entry_path()) and desktop_entry.is_stale(autostart.entry_path())
    rewritten = desktop_entry.refresh_stale()
    assert rewritten == [desktop_entry.entry_path(), autostart.entry_path()]
    now = autostart.vodou_command()[0]
    assert desktop_entry.exec_program(desktop_entry.entry_path()) == now
    assert desktop_entry.exec_program(autostart.entry_path()) == now
    assert desktop_entry.refresh_stale() == []  # now they name a program that exists


def test_an_entry_naming_an_existing_program_is_left_alone(data_home: Path, tmp_path: Path) -> None:
    other = tmp_path / "another-vodou"
    other.write_text("#!/bin/sh\n")
    desktop_entry.install([str(other)])
    before = desktop_entry.entry_path().read_text()
    assert desktop_entry.refresh_stale() == []
    assert desktop_entry.entry_path().read_text() == before


def test_absent_entries_stay_absent(data_home: Path) -> None:
    assert desktop_entry.refresh_stale() == []
    assert not desktop_entry.entry_path().exists() and not autostart.entry_path().exists()


def test_a_program_named_without_a_path_is_not_stale(data_home: Path) -> None:
    """The shipped template's plain ``vodou`` is looked up on PATH by the desktop: not ours to judge."""
    desktop_entry.install(["vodou"])
    assert not desktop_entry.is_stale(desktop_entry.entry_path())


def test_uninstall_removes_what_install_wrote(data_home: Path) -> None:
    written = desktop_entry.install([sys.executable])
    assert all(p.is_file() for p in written)
    assert desktop_entry.uninstall() == written
    assert [p for p in data_home.rglob("*") if p.is_file()] == []
