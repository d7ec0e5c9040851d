"""``vodou backup [PATH]``: a checked copy of the whole vault, taken while others keep writing, with
its manifest beside it; ``vodou backup --verify PATH`` checks a backup against its manifest and
runs SQLite's and the full-text index's integrity checks; ``vodou backup list`` lists the backups
there are (the backups folder's, then the ones written elsewhere)."""

from __future__ import annotations

import argparse
from pathlib import Path

from vodou_desktop import config, paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.data import copies
from vodou_desktop.data.backup import backup_vault, default_backup_name, free_name, verify_backup
from vodou_desktop.data.rolling import all_backups, backup_folder
from vodou_desktop.governance.ages import format_age


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("backup", help="copy the whole vault into a checked backup file (or --verify one)")
    p.add_argument("path", nargs="?", help="backup file or folder (default: the backups folder); 'list' lists "
                                           "the backups there are (write ./list for a file of that name)")
    p.add_argument("--verify", metavar="BACKUP",
                   help="check this backup against its manifest and its integrity; makes no backup")
    p.add_argument("--json", action="store_true")
    # --verify reads only the backup; list reads only folders
    p.set_defaults(func=cmd_backup, needs_vault=lambda args: not args.verify and not _listing(args))


def _listing(args: argparse.Namespace) -> bool:
    return args.path == "list"


def cmd_list(args: argparse.Namespace) -> int:
    vault = paths.vault_path(args.vault)
    folder = backup_folder(config.load())
    inside = all_backups(folder, vault)
    elsewhere = [c.path for c in copies.outside(("backup",))]
    if args.json:
        print_json({"backups_folder": str(folder),
                    "backups": [{"path": str(p), "taken_at": t.isoformat(timespec="seconds"), "size": p.stat().st_size}
                                for p, t in inside],
                    "elsewhere": [str(p) for p in elsewhere]})
        return 0
    if not inside and not elsewhere:
        print(f"no backups of {vault.name} yet (the backups folder is {folder}); make one with: vodou backup")
        return 0
    print(f"{len(inside)} in the backups folder ({folder}), newest first:" if inside
          else f"none in the backups folder ({folder})")
    for p, taken in inside:
        print(f"  {p.name}  {format_age(taken.isoformat())}, {p.stat().st_size / 1_048_576:.1f} MB")
    if elsewhere:
        print("written elsewhere:")
        for p in elsewhere:
            print(f"  {p}")
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    if _listing(args) and not args.verify:
        return cmd_list(args)
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
