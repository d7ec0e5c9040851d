"""``vodou key show|save|restore``: the vault key's recovery form, so that losing the keyring entry
(or moving to another computer) does not lose the vault and its backups.

``show`` prints the recovery key of an encrypted vault; on a plain vault it says so, how to encrypt,
and makes no key. ``save PATH`` writes it into a new 0600 file (before encrypting too: then it is the
key ``vodou encrypt`` will use, said plainly); ``restore``
reads it (``--from FILE``, ``$VODOU_RECOVERY_KEY``, or asked on the terminal), checks that it opens
the vault (or the backup given with ``--check``) and puts it back into the keyring.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path

from vodou_desktop import paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.data.recovery import (
    RECOVERY_ENV,
    key_to_show,
    read_recovery_file,
    restore_key,
    save_recovery_file,
    to_recovery,
)
from vodou_desktop.errors import InvalidInput, KnownError
from vodou_desktop.vault import cipher


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    key = sub.add_parser("key", help="show, save or restore the vault's recovery key")
    actions = key.add_subparsers(dest="key_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print the encrypted vault's recovery key (write it down or keep it in"
                                           " a password manager)")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_show, needs_vault=True)
    save = actions.add_parser("save", help="write the recovery key into a new private (0600) file (before encrypting:"
                                           " the key `vodou encrypt` will use)")
    save.add_argument("path", help="the file to create (never overwritten)")
    save.set_defaults(func=cmd_save, needs_vault=True)
    restore = actions.add_parser(
        "restore", help="put the vault key back from its recovery key (lost keyring entry, new computer)")
    restore.add_argument("--from", dest="source", metavar="FILE", help="a file written by `vodou key save`")
    restore.add_argument("--check", metavar="PATH",
                         help="an encrypted backup the key must open (default: the vault, when it exists)")
    restore.add_argument("--replace", action="store_true",
                         help="replace a different vault key already kept here (save its recovery key first)")
    restore.set_defaults(func=cmd_restore)


def cmd_show(args: argparse.Namespace) -> int:
    vault = paths.vault_path(args.vault)
    if not cipher.is_encrypted(vault):  # no key to show: none is made, and nothing implies protection
        raise KnownError(f"the vault at {vault} is not encrypted, so it has no key to show; to encrypt it: "
                         "vodou encrypt (then vodou key show prints its recovery key)")
    shown = to_recovery(key_to_show(vault))
    if args.json:
        print_json({"recovery_key": shown})
        return 0
    print(shown)
    print("This is your vault's recovery key. Keep it somewhere safe and private: with it, the vault and its "
          "backups open on any computer (`vodou key restore`); without it, losing this computer's keyring entry "
          "loses them.", file=sys.stderr)
    return 0


def cmd_save(args: argparse.Namespace) -> int:
    vault = paths.vault_path(args.vault)
    path = save_recovery_file(key_to_show(vault), Path(args.path).expanduser())
    print(f"saved the recovery key to {path} (readable by you only); keep a copy away from this computer")
    if not cipher.is_encrypted(vault):
        print(f"the vault at {vault} is not encrypted yet: this is the key `vodou encrypt` will use")
    return 0


def _typed(args: argparse.Namespace) -> str:
    if args.source:
        return read_recovery_file(Path(args.source).expanduser())
    given = os.environ.get(RECOVERY_ENV)
    if given:
        return given
    if not sys.stdin.isatty():
        raise InvalidInput(f"give the recovery key with --from FILE or ${RECOVERY_ENV}, or run this on a terminal")
    return getpass.getpass("Recovery key (groups of four, dashes optional): ")


def cmd_restore(args: argparse.Namespace) -> int:
    check = Path(args.check).expanduser() if args.check else paths.vault_path(args.vault)
    if args.check and not check.is_file():
        raise InvalidInput(f"No file at {check} to check the recovery key against")
    done = restore_key(_typed(args), check, replace=args.replace)
    print(done.sentence())
    return 0
