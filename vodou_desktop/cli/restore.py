"""``vodou restore PATH``: put a backup in the vault's place; the current vault is moved aside."""

from __future__ import annotations

import argparse
from pathlib import Path

from vodou_desktop import paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.data.backup import restore_vault


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("restore", help="replace the vault by a backup (the current vault is kept beside it)")
    p.add_argument("path", help="backup file made by `vodou backup`")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_restore)


def cmd_restore(args: argparse.Namespace) -> int:
    report = restore_vault(Path(args.path).expanduser(), paths.vault_path(args.vault))
    if args.json:
        print_json(report.as_json())
        return 0
    print(f"restored {report.vault} from {report.restored_from}: {report.counts.sentence()}")
    if report.previous:
        print(f"the previous vault was kept as {report.previous}")
    return 0
