"""Start at login (PKG-3): the XDG autostart entry ``$XDG_CONFIG_HOME/autostart/vodou.desktop``.

The entry starts the tray app quietly (``vodou --background``: no window unless there is no tray).
It runs the same ``vodou`` as the one running now: the frozen bundle's executable, or the console
script installed beside this Python. Qt-free; the Settings toggle calls ``enable``/``disable``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from vodou_desktop import APP_NAME
from vodou_desktop.errors import KnownError

ENTRY_NAME = "vodou.desktop"
BACKGROUND_FLAG = "--background"
# Characters that force quoting of an Exec argument (Desktop Entry spec, "The Exec key").
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def autostart_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(base) if base and Path(base).is_absolute() else Path.home() / ".config") / "autostart"


def entry_path() -> Path:
    return autostart_dir() / ENTRY_NAME


def vodou_command() -> list[str]:
    """How to start this installation of Vodou from outside (no shell, no current folder)."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    beside = Path(sys.executable).with_name("vodou")
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("vodou")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "vodou_desktop"]


def exec_quote(arg: str) -> str:
    """One argument for an Exec line: quoted when needed; inside quotes ``" ` $ \\`` take a
    backslash, and each backslash is then doubled again (the string escape of the file format)."""
    if arg and not (set(arg) & _RESERVED) and "%" not in arg and "=" not in arg:
        return arg
    inner = "".join("\\" + c if c in '"`$\\' else c for c in arg).replace("%", "%%")
    return '"' + inner.replace("\\", "\\\\") + '"'


def entry_text(command: list[str] | None = None) -> str:
    argv = [*(command or vodou_command()), BACKGROUND_FLAG]
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        f"Name={APP_NAME}",
        "Comment=Start Vodou in the tray when you log in",
        "Exec=" + " ".join(exec_quote(a) for a in argv),
        "Icon=vodou",
        "Terminal=false",
        "NoDisplay=true",
        "X-GNOME-Autostart-enabled=true",
        "",
    ])


def is_enabled() -> bool:
    return entry_path().is_file()


def enable(command: list[str] | None = None) -> Path:
    """Write (or rewrite) the entry atomically; KnownError when the folder cannot be written."""
    path = entry_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(entry_text(command), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise KnownError(f"Cannot write the autostart entry {path}: {exc.strerror or exc}") from exc
    return path


def disable() -> None:
    path = entry_path()
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise KnownError(f"Cannot remove the autostart entry {path}: {exc.strerror or exc}") from exc


def set_enabled(on: bool) -> None:
    if on:
        enable()
    else:
        disable()
