"""Where Vodou keeps its files: everything under VODOU_HOME when set, else the platform folders
(the README's table names them)."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from vodou_desktop import APP_ID, paths


def test_every_folder_is_under_vodou_home_when_it_is_set(vodou_home: Path) -> None:
    for folder in (paths.data_dir(), paths.config_dir(), paths.log_dir(), paths.cache_dir(), paths.runtime_dir()):
        assert folder.is_relative_to(vodou_home), folder


def test_without_vodou_home_the_cache_is_the_platform_cache_folder(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.delenv("VODOU_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    assert paths.cache_dir() == Path(platformdirs.user_cache_dir(APP_ID, appauthor=False))
    assert paths.cache_dir() == tmp_path / "xdg-cache" / "vodou-desktop"
