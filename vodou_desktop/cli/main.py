"""The argparse root. Each subcommand is one module in this package that defines
``register(subparsers)``; modules are discovered, so adding a command touches no other file.

Errors the person can act on (``KnownError``) print one line on stderr and exit 2; a bug
prints its traceback (it is ours to fix).
"""

from __future__ import annotations

import argparse
import getpass
import importlib
import logging
import os
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from vodou_desktop import __version__, paths, resources
from vodou_desktop.cli.ids import resolve_id
from vodou_desktop.controls import escape_controls, terminal_safe_stdout
from vodou_desktop.errors import InvalidInput, KnownError, VaultUnavailable, from_sqlite
from vodou_desktop.vault import cipher
from vodou_desktop.vault.atomic import refuse_to_replace

EXIT_USAGE = 2
EXIT_CODES = """exit codes:
  0    done
  1    done, but a check failed or some input was skipped (doctor, import)
  2    nothing done: an error you can fix, said in one line on stderr (or bad usage)
  130  interrupted (Ctrl+C)"""


class _PrintLicences(argparse.Action):
    """``--licences``: Vodou's licence and every bundled component's, then exit (like ``--version``)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        try:
            text = resources.notices_path().read_text(encoding="utf-8")
        except (KnownError, OSError) as exc:
            parser.exit(EXIT_USAGE, f"vodou: error: {exc}\n")
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            pass
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vodou",
        description="Vodou Desktop: your AI memory in a local vault. Without a command, starts the tray app.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"vodou {__version__}")
    parser.add_argument("--licences", "--licenses", action=_PrintLicences,
                        help="print Vodou's licence (Apache-2.0) and those of every component it ships, then exit")
    parser.add_argument("--vault", metavar="PATH", help="vault file to use (default: $VODOU_VAULT or the profile)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    parser.add_argument("--background", action="store_true",
                        help="start the tray app without opening a window (how start at login runs it)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    import vodou_desktop.cli as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in ("main", "output"):
            continue
        module = importlib.import_module(f"vodou_desktop.cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def _ask_passphrase_on_terminal() -> None:
    """An encrypted vault whose key is neither stored nor in VODOU_PASSPHRASE: ask, on a terminal only."""
    if not sys.stdin.isatty():
        cipher.set_prompt(None)
        return

    def ask(path: Path) -> str | None:
        return getpass.getpass(f"Passphrase for the encrypted vault {path}: ") or None

    cipher.set_prompt(ask)


def check_vault_arg(vault: str | None) -> None:
    """``--vault`` names a file: a folder (or a path ending in a slash) is refused, not created inside."""
    if vault is None:
        return
    path = Path(vault).expanduser()
    if vault.endswith(("/", os.sep)) or path.is_dir():
        raise InvalidInput(f"--vault {vault} is a folder; give the vault file, e.g. {path / 'vodou.sqlite'}")


def check_vault_exists(args: argparse.Namespace) -> None:
    """A command that reads the vault, or changes what is already in it (``needs_vault`` in its
    defaults), refuses a path with no vault and creates nothing there: a mistyped ``--vault`` or
    ``VODOU_VAULT`` must not leave an empty vault behind. Commands that add something make the
    vault on first use. Where the default vault is not made yet (a fresh install), a command with a
    ``without_vault`` answer gives it instead ("no memories yet", the default site modes), exit 0."""
    needs = getattr(args, "needs_vault", False)
    if callable(needs):
        needs = needs(args)
    if not needs:
        return
    path = paths.vault_path(args.vault)
    refuse_to_replace(path)  # finishes an interrupted restore; copies beside a vanished vault: say how to put it back
    if path.is_file():
        return
    if args.vault or os.environ.get("VODOU_VAULT"):
        given = "--vault" if args.vault else "$VODOU_VAULT"
        raise VaultUnavailable(f"no vault at {path}; check {given} (nothing was created)")
    if getattr(args, "without_vault", None) is not None:  # a fresh install: the command answers from nothing
        args.func = args.without_vault
        return
    raise VaultUnavailable(f"no vault yet at {path}; the first memory you add makes it (vodou mem add TEXT)")


def _error_line(exc: BaseException) -> None:
    """The error the person can act on, on stderr (one line, or a line and what to paste by hand:
    ``mcp install`` refusing another app's file shows the entry); a file name or a value it quotes
    cannot drive the terminal either (every control but the line feed and the tab is escaped)."""
    print(f"vodou: error: {escape_controls(str(exc))}", file=sys.stderr)


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv))
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        check_vault_arg(args.vault)
        check_vault_exists(args)
    except KnownError as exc:
        _error_line(exc)
        return EXIT_USAGE
    if args.command is None:
        from vodou_desktop.app import main as app_main  # Qt only when the tray app is wanted

        return int(app_main(args))
    _ask_passphrase_on_terminal()
    try:
        resolve_id(args)
        with terminal_safe_stdout():  # a memory's text never drives the terminal, whatever it holds
            return int(args.func(args) or 0)
    except KnownError as exc:
        _error_line(exc)
        return EXIT_USAGE
    except apsw.Error as exc:  # an environment error that escaped the vault's own translation
        known = from_sqlite(exc, paths.vault_path(args.vault))
        if known is None:
            raise  # our bug: the traceback is ours to read
        _error_line(known)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("vodou: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
