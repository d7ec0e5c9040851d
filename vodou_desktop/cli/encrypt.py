"""``vodou encrypt`` / ``vodou decrypt``: encryption at rest for the vault, converted in place.

The key is random and kept in the OS keyring (or a private 0600 file where there is no keyring,
said plainly), so nothing needs typing afterwards. ``--passphrase`` uses a passphrase of the
person's own instead, never stored: from ``VODOU_PASSPHRASE`` or asked on the terminal, and
needed (in ``VODOU_PASSPHRASE`` or typed) every time the vault is opened.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from vodou_desktop import paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.data.encryption import ConversionReport, decrypt_vault, encrypt_vault
from vodou_desktop.errors import InvalidInput
from vodou_desktop.vault.cipher import PASSPHRASE_ENV
from vodou_desktop.vault.keystore import VaultKeyStore
from vodou_desktop.words import plural

MIN_PASSPHRASE = 8


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    enc = sub.add_parser("encrypt", help="encrypt the vault at rest (key kept in the OS keyring)")
    enc.add_argument("--passphrase", action="store_true",
                     help=f"use your own passphrase (from ${PASSPHRASE_ENV} or asked) instead of a stored key")
    enc.add_argument("--json", action="store_true")
    enc.set_defaults(func=cmd_encrypt, needs_vault=True)
    dec = sub.add_parser("decrypt", help="turn an encrypted vault back into a plain SQLite file")
    dec.add_argument("--json", action="store_true")
    dec.set_defaults(func=cmd_decrypt, needs_vault=True)


def _progress(verb: str):  # type: ignore[no-untyped-def]
    def show(done: int, total: int) -> None:
        if sys.stderr.isatty() or done == total:
            end = "\n" if done == total else "\r"
            print(f"{verb}: {100 * done // max(total, 1)}% (step {done} of {total})", end=end, file=sys.stderr)
    return show


def _passphrase() -> str:
    given = os.environ.get(PASSPHRASE_ENV)
    if given:
        return given
    if not sys.stdin.isatty():
        raise InvalidInput(f"--passphrase needs a terminal to ask on, or ${PASSPHRASE_ENV}")
    first = getpass.getpass("New vault passphrase: ")
    if len(first) < MIN_PASSPHRASE:
        raise InvalidInput(f"the passphrase must have at least {MIN_PASSPHRASE} characters")
    if getpass.getpass("Again: ") != first:
        raise InvalidInput("the two passphrases differ; nothing was changed")
    return first


def cmd_encrypt(args: argparse.Namespace) -> int:
    vault = paths.vault_path(args.vault)
    if args.passphrase:
        key, where = _passphrase(), f"your passphrase (not stored: give it in ${PASSPHRASE_ENV} or type it)"
    else:
        store = VaultKeyStore()
        key, where = store.get_or_create(), store.storage
    report = encrypt_vault(vault, key, _progress("encrypting"))
    _print(args, report, f"encrypted {vault}; its key is kept in {where}")
    if not args.passphrase and not args.json:
        print("keep its recovery key somewhere safe (`vodou key save PATH` or `vodou key show`): without it, "
              "losing the keyring entry loses the vault and its backups")
    return 0


def cmd_decrypt(args: argparse.Namespace) -> int:
    vault = paths.vault_path(args.vault)
    report = decrypt_vault(vault, _progress("decrypting"))
    _print(args, report, f"decrypted {vault}: it is a plain SQLite file again")
    return 0


def _print(args: argparse.Namespace, report: ConversionReport, head: str) -> None:
    if args.json:
        print_json(report.as_json())
        return
    if report.backup is None:
        print(f"the vault was already {'encrypted' if report.encrypted else 'plain'}: the job left unfinished by "
              f"an earlier run was completed. {report.counts.sentence()}.")
    else:
        print(f"{head}. {report.counts.sentence()}.")
        print(f"a verified copy was made first: {report.backup}")
    if report.backups_converted:
        print(f"{plural(report.backups_converted, 'earlier backup')} in the backups folder "
              f"{'was' if report.backups_converted == 1 else 'were'} encrypted too")
    if report.leftovers_removed:
        print(f"{plural(report.leftovers_removed, 'copy')} left half-written or empty by an interrupted operation"
              f" {'was' if report.leftovers_removed == 1 else 'were'} removed")
    if report.not_reached_sentence():
        print(report.not_reached_sentence())
