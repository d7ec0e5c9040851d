"""``vodou secrets``: whether secrets are removed before a memory is stored, per source.

On for every source unless turned off here (DATA-8, vault/secret_filter.py). A source is where a
memory comes from: ``cli``, ``mcp``, ``note``, ``capture``, ``import_chatgpt``, ...
"""

from __future__ import annotations

import argparse

from vodou_desktop.cli.output import print_json
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import secret_filter
from vodou_desktop.vault.sources import KINDS


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("secrets", help="remove secrets (tokens, keys) before saving: on or off per source")
    ssub = p.add_subparsers(dest="secrets_command", metavar="ACTION", required=True)
    lst = ssub.add_parser("list", help="each source and whether secrets are removed from what it saves")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=cmd_list, needs_vault=True)
    for state in ("on", "off"):
        a = ssub.add_parser(state, help=f"turn secret removal {state} for one source")
        a.add_argument("source", choices=sorted(KINDS), metavar="SOURCE", help=", ".join(sorted(KINDS)))
        a.set_defaults(func=cmd_set, state=state)


def cmd_list(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        states = rt.vault.read(secret_filter.filter_states)
    if args.json:
        print_json({"secrets_removed_from": states})
        return 0
    for source, on in states.items():
        print(f"{source:16s} {'removed' if on else 'KEPT AS WRITTEN (off)'}")
    return 0


def cmd_set(args: argparse.Namespace) -> int:
    on = args.state == "on"
    with Runtime.open(args.vault, embedder="none") as rt:
        rt.vault.write(lambda c, ch: secret_filter.set_filter(c, ch, args.source, on))
    print(f"secrets are {'removed from' if on else 'KEPT AS WRITTEN in'} what {args.source} saves from now on")
    return 0
