"""The one confirmation before an erase (``mem erase``, ``opm erase``, ``opm erase-all``): ``--yes``,
or a typed "yes" on a terminal; a script without ``--yes`` is refused and nothing is erased."""

from __future__ import annotations

import argparse
import sys

from vodou_desktop.errors import InvalidInput


def confirm_erase(args: argparse.Namespace, what: str, command: str) -> None:
    """Go on only when the person confirmed erasing ``what`` (said in words) for good."""
    if getattr(args, "yes", False):
        return
    if not sys.stdin.isatty():
        raise InvalidInput(f"erase deletes for good and cannot be undone: add --yes to confirm ({command} --yes)")
    print(f"Erase {what} for good? This cannot be undone. Type yes to erase: ", end="", file=sys.stderr, flush=True)
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise InvalidInput("nothing was erased")
