"""Where the bundled read-only files live (icon artwork, sensitive-host lists, the extension).

The same code runs from a source checkout, from an installed wheel and from a frozen bundle, and
each puts ``resources/`` somewhere else. This module is the one place that knows; it imports no Qt
so the core can use it too.
"""

from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _candidates() -> list[Path]:
    found = [_PACKAGE_DIR / "_resources"]  # an installed wheel ships the tree inside the package
    bundle = getattr(sys, "_MEIPASS", None)  # a frozen bundle unpacks next to its executable
    if bundle:
        found.append(Path(bundle) / "resources")
    found.append(_PACKAGE_DIR.parent / "resources")  # a source checkout
    return found


def resources_dir() -> Path:
    """The ``resources/`` folder for this installation; FileNotFoundError names where it looked."""
    candidates = _candidates()
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"Vodou's resources folder is missing (looked in: {looked})")


def resource_path(*parts: str) -> Path:
    """A file or folder under ``resources/``, e.g. ``resource_path("icons", "vodou-16.png")``."""
    return resources_dir().joinpath(*parts)
