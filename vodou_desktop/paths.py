"""Where Vodou keeps its files.

Everything derives from platformdirs, except that ``VODOU_HOME`` puts the whole tree (data,
config, logs) under one folder: tests set it so they never touch the real home folder.
The vault path itself can be overridden by ``--vault PATH`` or ``VODOU_VAULT``.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from vodou_desktop import APP_ID

DEFAULT_PROFILE = "default"


def _home() -> Path | None:
    home = os.environ.get("VODOU_HOME")
    return Path(home).expanduser() if home else None


def data_dir() -> Path:
    home = _home()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP_ID, appauthor=False))


def config_dir() -> Path:
    home = _home()
    return home / "config" if home else Path(platformdirs.user_config_dir(APP_ID, appauthor=False))


def log_dir() -> Path:
    home = _home()
    return home / "logs" if home else Path(platformdirs.user_log_dir(APP_ID, appauthor=False))


def cache_dir() -> Path:
    """Derived files that can be rebuilt at any time (the embedding model's exported graph)."""
    home = _home()
    return home / "cache" if home else Path(platformdirs.user_cache_dir(APP_ID, appauthor=False))


def runtime_dir() -> Path:
    """Sockets and locks for single-instance and the running bridge's port file."""
    home = _home()
    return home / "run" if home else data_dir() / "run"


def vault_path(override: str | os.PathLike[str] | None = None, profile: str = DEFAULT_PROFILE) -> Path:
    """The vault for this run: explicit override, then ``VODOU_VAULT``, then the profile file."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("VODOU_VAULT")
    if env:
        return Path(env).expanduser()
    return data_dir() / f"{profile}.vodou.sqlite"


def config_file() -> Path:
    return config_dir() / "settings.json"
