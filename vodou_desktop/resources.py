"""Where the bundled read-only files live (icon artwork, sensitive-host lists, the extension, the
menu entry and the licence notices).

The source tree keeps them in the top-level ``resources/`` folder. The wheel maps that folder into
the package as ``vodou_desktop/_resources`` (``package-dir`` in pyproject.toml), and the frozen
bundle puts it at the same place next to the package's modules (packaging/vodou.spec). So there are
two places to look, in this order: ``<package>/_resources`` (installed wheel, bundle) and
``<package>/../resources`` (source checkout, editable install). This module imports no Qt so the
core can use it too.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vodou_desktop.errors import KnownError

_PACKAGE_DIR = Path(__file__).resolve().parent
INSTALLED_NAME = "_resources"

# What the app reads at run time; ``vodou doctor`` checks each one is present.
REQUIRED = (
    ("icons", "vodou.svg"),
    *(("icons", f"vodou-{size}.png") for size in (16, 22, 32, 48, 64, 128)),
    *(("sensitive", f"{name}.txt") for name in ("bank", "health", "tax", "sign-in", "host-patterns")),
    ("extension", "manifest.json"),
    ("THIRD_PARTY_NOTICES",),
    ("desktop", "vodou.desktop"),
    ("desktop", "io.vodou.Desktop.metainfo.xml"),
)
NOTICES = "THIRD_PARTY_NOTICES"


class ResourcesMissing(KnownError):
    """The resources folder or one of its files is not where this installation should have it."""

    status = 500


def candidates() -> list[Path]:
    """Where ``resources/`` may be, in lookup order."""
    return [_PACKAGE_DIR / INSTALLED_NAME, _PACKAGE_DIR.parent / "resources"]


def resources_dir() -> Path:
    """The ``resources/`` folder for this installation; ResourcesMissing names where it looked."""
    found = candidates()
    for candidate in found:
        if candidate.is_dir():
            return candidate
    looked = ", ".join(str(c) for c in found)
    raise ResourcesMissing(f"Vodou's resources folder is missing (looked in: {looked}); reinstall Vodou")


def resource_path(*parts: str) -> Path:
    """A file or folder under ``resources/``, e.g. ``resource_path("icons", "vodou-16.png")``."""
    return resources_dir().joinpath(*parts)


def missing_resources() -> list[str]:
    """The required files this installation lacks (relative names), or the folder itself; [] when complete."""
    try:
        root = resources_dir()
    except ResourcesMissing as exc:
        return [str(exc)]
    return ["/".join(parts) for parts in REQUIRED if not root.joinpath(*parts).is_file()]


def notices_path() -> Path:
    """The licences of what this installation carries (``vodou --licences``): the bundle's own file
    beside its executable (it adds Python and PyInstaller), else the one among the resources."""
    if getattr(sys, "frozen", False):
        beside = Path(sys.executable).resolve().parent / NOTICES
        if beside.is_file():
            return beside
    path = resource_path(NOTICES)
    if not path.is_file():
        raise ResourcesMissing(f"the licence notices {path} are missing; reinstall Vodou")
    return path
