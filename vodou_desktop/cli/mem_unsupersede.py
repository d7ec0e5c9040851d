"""``vodou mem unsupersede ID``: bring back a memory that a contradiction superseded (ING-3)."""

from __future__ import annotations

import argparse

from vodou_desktop.cli.ids import add_id_argument
from vodou_desktop.cli.output import print_json
from vodou_desktop.ingest.supersede import unsupersede
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q


def register_mem(msub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = msub.add_parser("unsupersede", help="restore a memory that a newer contradicting one superseded")
    add_id_argument(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_unsupersede, needs_vault=True)


def cmd_unsupersede(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        unsupersede(rt.vault, args.id)
        fact = rt.vault.read(lambda c: q.get_fact(c, args.id, FactFilter(project=ALL_PROJECTS, include_forgotten=True)))
    if args.json:
        print_json(fact.as_json())
    else:
        print(f"#{fact.id} is live again: {fact.text}")
    return 0
