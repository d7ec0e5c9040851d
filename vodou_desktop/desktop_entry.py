"""The menu entry, AppStream metadata and hicolor icons (PKG-1, PKG-3), from any install.

``vodou desktop install`` writes them under ``$XDG_DATA_HOME`` (default ``~/.local/share``) from the
package's own resources (``resources/desktop/``, ``resources/icons/``), so a wheel installed with
pipx and the bundle get them as a checkout does. The entry's ``Exec`` and ``TryExec`` name the
``vodou`` running now, by absolute path (autostart.vodou_command). ``uninstall`` removes exactly
those files.

An entry names a path; when the bundle moves or a venv is rebuilt elsewhere, that path goes away
and the menu item or start at login silently does nothing. ``refresh_stale`` (called by the tray
app at start) rewrites the menu entry and the autostart entry when the program they name no longer
exists. Qt-free.
"""

from __future__ import annotations

import os
from pathlib import Path

from vodou_desktop import autostart
from vodou_desktop.errors import KnownError
from vodou_desktop.resources import resource_path

APP_ID = "io.vodou.Desktop"
ENTRY_NAME = "vodou.desktop"
METAINFO_NAME = f"{APP_ID}.metainfo.xml"
ICON_SIZES = (16, 22, 32, 48, 64, 128)


def data_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    return Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"


def entry_path() -> Path:
    return data_home() / "applications" / ENTRY_NAME


def installed_files() -> list[Path]:
    data = data_home()
    return [entry_path(), data / "metainfo" / METAINFO_NAME,
            *(data / "icons" / "hicolor" / f"{n}x{n}" / "apps" / "vodou.png" for n in ICON_SIZES),
            data / "icons" / "hicolor" / "scalable" / "apps" / "vodou.svg"]


def _sources() -> list[Path]:
    """The package's files, in the order of ``installed_files`` (the entry is written, not copied)."""
    return [resource_path("desktop", ENTRY_NAME), resource_path("desktop", METAINFO_NAME),
            *(resource_path("icons", f"vodou-{n}.png") for n in ICON_SIZES), resource_path("icons", "vodou.svg")]


def entry_text(command: list[str] | None = None) -> str:
    """The shipped entry with ``Exec``/``TryExec`` naming ``command`` (default: this vodou)."""
    argv = command or autostart.vodou_command()
    lines = []
    for line in resource_path("desktop", ENTRY_NAME).read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            line = "Exec=" + " ".join(autostart.exec_quote(a) for a in argv)
        elif line.startswith("TryExec="):
            line = "TryExec=" + argv[0]
        lines.append(line)
    return "\n".join(lines) + "\n"


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _touch_folders() -> None:
    """Menus and icon themes watch these folders' times; no cache file of ours is written."""
    for folder in (data_home() / "applications", data_home() / "icons" / "hicolor"):
        if folder.is_dir():
            os.utime(folder)


def install(command: list[str] | None = None) -> list[Path]:
    """Write the entry, the metadata and the icons; KnownError when a file cannot be written."""
    targets = installed_files()
    try:
        _write(targets[0], entry_text(command).encode())
        for source, target in zip(_sources()[1:], targets[1:], strict=True):
            _write(target, source.read_bytes())
    except OSError as exc:
        raise KnownError(f"Cannot install the menu entry under {data_home()}: {exc.strerror or exc}") from exc
    _touch_folders()
    return targets


def uninstall() -> list[Path]:
    """Remove what ``install`` wrote (what is there of it); the folders stay."""
    removed = []
    for path in installed_files():
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise KnownError(f"Cannot remove {path}: {exc.strerror or exc}") from exc
    _touch_folders()
    return removed


def exec_args(value: str) -> list[str]:
    """An ``Exec`` value (after the file format's string escape) split into arguments: spaces
    separate them, double quotes group them, and inside quotes a backslash takes ``" ` $ \\``
    literally (Desktop Entry spec, "The Exec key"); ``%%`` is a percent sign."""
    args: list[str] = []
    current: list[str] | None = None
    quoted = False
    i = 0
    while i < len(value):
        c = value[i]
        if quoted and c == "\\" and i + 1 < len(value) and value[i + 1] in '"`$\\':
            current = (current or []) + [value[i + 1]]
            i += 2
            continue
        if c == '"':
            quoted = not quoted
            current = current or []
        elif c == " " and not quoted:
            if current is not None:
                args.append("".join(current))
            current = None
        else:
            current = (current or []) + [c]
        i += 1
    if current is not None:
        args.append("".join(current))
    return [a.replace("%%", "%") for a in args]


def exec_program(entry: Path) -> str | None:
    """The program an entry's ``Exec`` line starts (its first argument, unquoted), or None."""
    try:
        text = entry.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        if line.startswith("Exec="):
            argv = exec_args(line[len("Exec="):].replace("\\\\", "\\"))  # the string escape: \\ is \
            return argv[0] if argv else None
    return None


def is_stale(entry: Path) -> bool:
    """An entry of ours that starts a program by a path that no longer exists."""
    program = exec_program(entry)
    return program is not None and os.path.isabs(program) and not os.path.exists(program)


def refresh_stale() -> list[Path]:
    """Rewrite the menu entry and the autostart entry if the program they name is gone; returns
    what was rewritten. Entries that are absent stay absent (the person removed or never wanted them)."""
    rewritten = []
    if entry_path().is_file() and is_stale(entry_path()):
        _write(entry_path(), entry_text().encode())
        rewritten.append(entry_path())
    if autostart.entry_path().is_file() and is_stale(autostart.entry_path()):
        rewritten.append(autostart.enable())
    return rewritten
