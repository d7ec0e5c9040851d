"""``vodou desktop install|uninstall``: the menu entry, AppStream metadata and icons for this user,
from the package's own files, starting this ``vodou`` (desktop_entry.py)."""

from __future__ import annotations

import argparse

from vodou_desktop import autostart, desktop_entry


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("desktop", help="add or remove Vodou's menu entry and icons for your user")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    install = actions.add_parser("install", help="write the menu entry, AppStream metadata and icons "
                                                 "under $XDG_DATA_HOME (default ~/.local/share)")
    install.set_defaults(func=cmd_install)
    uninstall = actions.add_parser("uninstall", help="remove what `vodou desktop install` wrote")
    uninstall.set_defaults(func=cmd_uninstall)


def cmd_install(args: argparse.Namespace) -> int:
    command = autostart.vodou_command()
    written = desktop_entry.install(command)
    print(f"installed the Vodou menu entry, metadata and {len(written) - 2} icons under "
          f"{desktop_entry.data_home()} (starts {' '.join(command)})")
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    removed = desktop_entry.uninstall()
    print(f"removed {len(removed)} files of Vodou's menu entry, metadata and icons from {desktop_entry.data_home()}")
    return 0
