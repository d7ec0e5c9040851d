"""``vodou quick``: the quick-access box of the running tray app, or the app started with it open.

The command to bind in a desktop's own keyboard settings where no app may take a key for itself
(a Wayland session). It knocks on the app's single-instance socket (``instance.knock``), so it
costs a few milliseconds and imports no Qt when the app runs; otherwise it becomes the app.
"""

from __future__ import annotations

import argparse

from vodou_desktop import instance


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("quick", help="open quick access (search or add a memory) in the running tray app, "
                                          "starting the app when it is not running; bind it to a key in your "
                                          "desktop's keyboard settings")
    parser.set_defaults(func=cmd_quick)


def cmd_quick(args: argparse.Namespace) -> int:
    if instance.knock("quick"):
        return 0
    from vodou_desktop.app import main as app_main  # Qt only when the app has to start

    args.quick = True
    return int(app_main(args))
