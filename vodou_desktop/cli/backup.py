"""``vodou backup [PATH]``: a checked copy of the whole vault, taken while others keep writing, with
its manifest beside it; ``vodou backup --verify PATH`` checks a backup against its manifest and
runs SQLite's and the full-text index's integrity checks."""

from __future__ import annotations

import argparse
from pathlib import Path

from vodou_desktop import config, paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.data import copies
from vodou_desktop.data.backup import backup_vault, default_backup_name, free_name, verify_backup
from vodou_desktop.data.rolling import backup_folder


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("backup", help="copy the whole vault into a checked backup file (or --verify one)")
    p.add_argument("path", nargs="?", help="backup file or folder (default: the backups folder)")
    p.add_argument("--verify", metavar="BACKUP",
                   help="check this backup against its manifest and its integrity; makes no backup")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_backup, needs_vault=lambda args: not args.verify)  # --verify reads only the backup


def cmd_backup(args: argparse.Namespace) -> int:
    if args.verify:
        checked = verify_backup(Path(args.verify).expanduser())
        print_json(checked.as_json()) if args.json else print(checked.sentence())
        return 0
    vault = paths.vault_path(args.vault)
    dest = Path(args.path).expanduser() if args.path else backup_folder(config.load(), create=True)
    if dest.is_dir():
        dest = free_name(dest, default_backup_name(vault))
    report = backup_vault(vault, dest)
    copies.record(report.path, "backup")
    if args.json:
        print_json(report.as_json())
    else:
        size = report.size / 1_048_576
        lock = "encrypted, " if report.encrypted else ""
        print(f"backed up to {report.path} ({lock}{size:.1f} MB, integrity ok, manifest beside it): "
              f"{report.counts.sentence()}")
    return 0
