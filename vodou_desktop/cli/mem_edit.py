"""``vodou mem correct`` and ``vodou mem pin``: edit a fact without losing its history."""

from __future__ import annotations

import argparse

from vodou_desktop.cli.ids import add_id_argument
from vodou_desktop.cli.output import print_json
from vodou_desktop.ingest.remember import Saved, correct, move, pin
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.secret_filter import removed_note


def register_mem(msub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fix = msub.add_parser("correct", help="write a corrected revision of a memory (the old one is kept as history)")
    add_id_argument(fix)
    fix.add_argument("text")
    fix.add_argument("--json", action="store_true")
    fix.set_defaults(func=cmd_correct, needs_vault=True)

    pin_ = msub.add_parser("pin", help="pin a memory so it outranks the rest (--off to unpin)")
    add_id_argument(pin_)
    pin_.add_argument("--off", action="store_true", help="unpin")
    pin_.add_argument("--json", action="store_true")
    pin_.set_defaults(func=cmd_pin, needs_vault=True)

    mv = msub.add_parser("move", help="move a memory to another project, or make it global (kept in its history)")
    add_id_argument(mv)
    where = mv.add_mutually_exclusive_group(required=True)
    where.add_argument("--project", help="the project it belongs to")
    where.add_argument("--global", dest="to_global", action="store_true", help="make it global (every project)")
    mv.add_argument("--json", action="store_true")
    mv.set_defaults(func=cmd_move, needs_vault=True)


def _show(rt: Runtime, fact_id: int, as_json: bool, line: str) -> None:
    fact = rt.vault.read(lambda c: q.get_fact(c, fact_id, FactFilter(project=ALL_PROJECTS)))
    removed = list(fact_id.secrets_removed) if isinstance(fact_id, Saved) else []
    if as_json:
        print_json({**fact.as_json(), **({"secrets_removed": removed} if isinstance(fact_id, Saved) else {})})
    else:
        print(line.format(fact=fact))
        if removed:
            print(f"{removed_note(removed)}: the memory holds [secret removed: …] in its place")


def cmd_correct(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        new_id = correct(rt.vault, args.id, args.text)
        _show(rt, new_id, args.json, "#{fact.id} is revision {fact.revision} (replaces #" + str(args.id) + ")")
    return 0


def cmd_pin(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        changed = pin(rt.vault, args.id, not args.off)
        state = "unpinned" if args.off else "pinned"
        _show(rt, args.id, args.json, "#{fact.id} " + (state if changed else f"was already {state}"))
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        new_id = move(rt.vault, args.id, None if args.to_global else args.project)
        where = "global" if args.to_global else f"in {args.project}"
        _show(rt, new_id, args.json, "#{fact.id} is now " + where + " (revision {fact.revision}; #"
              + str(args.id) + " is kept as its history)")
    return 0
