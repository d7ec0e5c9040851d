"""``vodou pair``: pairing without the tray.

- ``vodou pair`` prints the code the running server is showing (after the extension asked for
  one); ``--wait N`` waits up to N seconds for it.
- ``vodou pair list`` lists paired extensions; ``vodou pair revoke ID`` revokes one (the running
  server refuses its token from the next request on). ``--list`` and ``--revoke ID`` are kept as
  aliases, so ``pair`` reads like ``sites``, ``projects`` and ``opm``.
"""

from __future__ import annotations

import argparse
import time

from vodou_desktop.bridge.pairing import read_current_code
from vodou_desktop.bridge.server import read_port_file
from vodou_desktop.bridge.tokens import TokenStore
from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput, KnownError
from vodou_desktop.governance.ages import format_age

POLL_S = 0.25


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("pair", help="show the pairing code of the running server; list or revoke pairings")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--list", action="store_true", help="the same as `vodou pair list`")
    group.add_argument("--revoke", metavar="EXTENSION_ID", help="the same as `vodou pair revoke EXTENSION_ID`")
    parser.add_argument("--wait", type=float, default=0, metavar="SECONDS",
                        help="wait this long for the extension to ask for a code")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=cmd_pair)
    actions = parser.add_subparsers(dest="pair_command", metavar="ACTION")
    lst = actions.add_parser("list", help="list paired extensions")
    lst.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    lst.set_defaults(func=_list)
    revoke = actions.add_parser("revoke", help="revoke the pairing of an extension")
    revoke.add_argument("extension_id", metavar="EXTENSION_ID")
    revoke.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    revoke.set_defaults(func=_revoke)


def cmd_pair(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args)
    if args.revoke:
        args.extension_id = args.revoke
        return _revoke(args)
    return _show_code(args)


def _revoke(args: argparse.Namespace) -> int:
    TokenStore().revoke(args.extension_id)
    print_json({"revoked": args.extension_id}) if args.json else print(f"revoked {args.extension_id}")
    return 0


def _list(args: argparse.Namespace) -> int:
    store = TokenStore()
    pairings = store.pairings()
    if args.json:
        print_json({"storage": store.storage, "pairings": [p.as_json() for p in pairings]})
        return 0
    print(f"tokens are kept in {store.storage}")
    if not pairings:
        print("no paired extensions")
    for p in pairings:
        print(f"{p.extension_id}  paired {format_age(p.created_at)}")
    return 0


def _show_code(args: argparse.Namespace) -> int:
    if args.wait < 0:
        raise InvalidInput("--wait must not be negative")
    server = read_port_file()
    if server is None:
        raise KnownError("no Vodou bridge is running: start the app or `vodou serve`")
    deadline = time.monotonic() + args.wait
    code = read_current_code()
    while code is None and time.monotonic() < deadline:
        time.sleep(POLL_S)
        code = read_current_code()
    if code is None:
        raise KnownError("no pairing code is waiting: click Pair in the extension first (or use --wait)")
    if args.json:
        print_json({"code": code["code"], "extensionId": code["extensionId"], "port": server.get("port")})
    else:
        print(f"pairing code for extension {code['extensionId']}: {code['code']}")
    return 0
