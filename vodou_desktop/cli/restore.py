"""``vodou restore PATH``: put a verified backup in the vault's place; the current vault is moved aside.

A plain backup restored where an encrypted vault is keeps the vault encrypted (the copy is
encrypted with the vault's key before it takes its place) unless ``--plain`` says otherwise; on a
terminal without either flag, the question is asked.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vodou_desktop import paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.data.backup import plain_over_encrypted, restore_vault, verify_backup
from vodou_desktop.vault import cipher


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("restore", help="replace the vault by a backup (the current vault is kept beside it)")
    p.add_argument("path", help="backup file made by `vodou backup`")
    choice = p.add_mutually_exclusive_group()
    choice.add_argument("--keep-encryption", dest="keep", action="store_true", default=None,
                        help="a plain backup restored over an encrypted vault is encrypted with its key (default)")
    choice.add_argument("--plain", dest="keep", action="store_false",
                        help="a plain backup restored over an encrypted vault leaves the vault NOT encrypted")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_restore)


def _keep_encryption(args: argparse.Namespace, backup: Path, vault: Path) -> bool:
    if args.keep is not None or not sys.stdin.isatty():
        return args.keep is not False
    answer = input(f"{backup.name} is not encrypted and the vault is. Keep the restored vault encrypted with its "
                   "key? [Y/n] ").strip().lower()
    return answer not in ("n", "no")


def cmd_restore(args: argparse.Namespace) -> int:
    backup, vault = Path(args.path).expanduser(), paths.vault_path(args.vault)
    key = None
    if plain_over_encrypted(backup, vault):
        verify_backup(backup)  # a damaged backup is refused before anything is asked
        if _keep_encryption(args, backup, vault):
            key = cipher.key_for(vault)
    report = restore_vault(backup, vault, encrypt_with=key)
    if args.json:
        print_json(report.as_json())
        return 0
    kept = " (encrypted with the vault's key, as the vault was)" if key else ""
    print(f"restored {report.vault} from {report.restored_from}{kept}: {report.counts.sentence()}")
    if report.previous:
        print(f"the previous vault was kept as {report.previous}")
    if report.manifest_sentence():
        print(report.manifest_sentence())
    if report.encryption_sentence():
        print(report.encryption_sentence())
    return 0
