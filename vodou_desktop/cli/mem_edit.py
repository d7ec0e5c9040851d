"""``vodou mem correct``, ``vodou mem pin`` and ``vodou mem move``: edit memories without losing their
history or their ids. ``pin`` and ``move`` take several ids (one action, one undo)."""

from __future__ import annotations

import argparse
from typing import Any

from vodou_desktop.cli.ids import add_id_argument, add_ids_argument, short_op
from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.edits import Edits
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.secret_filter import removed_note
from vodou_desktop.words import plural


def register_mem(msub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fix = msub.add_parser("correct", help="correct a memory's text; it keeps its id, the old text stays in its history")
    add_id_argument(fix)
    fix.add_argument("text")
    fix.add_argument("--json", action="store_true")
    fix.set_defaults(func=cmd_correct, needs_vault=True)

    pin_ = msub.add_parser("pin", help="pin memories so they outrank the rest (--off to unpin); several ids at once")
    add_ids_argument(pin_)
    pin_.add_argument("--off", action="store_true", help="unpin")
    pin_.add_argument("--json", action="store_true")
    pin_.set_defaults(func=cmd_pin, needs_vault=True)

    mv = msub.add_parser("move", help="move memories to another project, or make them global (kept in their"
                                      " history); several ids at once")
    add_ids_argument(mv)
    where = mv.add_mutually_exclusive_group(required=True)
    where.add_argument("--project", help="the project they go to (an existing one, or a new one with --new)")
    where.add_argument("--global", dest="to_global", action="store_true", help="make them global (every project)")
    mv.add_argument("--new", dest="new_project", action="store_true",
                    help="start the project named by --project (without it, a project that does not exist is refused:"
                         " a typo never starts one)")
    mv.add_argument("--json", action="store_true")
    mv.set_defaults(func=cmd_move, needs_vault=True)


def _undo(result: dict[str, Any]) -> str:
    return f" Undo: vodou undo {short_op(result['op'])}" if result.get("op") else ""


def cmd_correct(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        done = Edits(rt.vault).correct(args.id, args.text)
        fact = rt.vault.read(lambda c: q.get_fact(c, done["id"], FactFilter(project=ALL_PROJECTS)))
    removed = list(done.get("secrets_removed", []))
    if args.json:
        print_json({**fact.as_json(), "op": done["op"], "secrets_removed": removed})
    else:
        print(f"#{fact.id} corrected (revision {fact.revision}; the earlier text is kept in its history, never"
              f" recalled).{_undo(done)}")
        if removed:
            print(f"{removed_note(removed)}: the memory holds [secret removed: …] in its place")
    return 0


def cmd_pin(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        done = Edits(rt.vault).pin(args.ids, not args.off)
    state = "unpinned" if args.off else "pinned"
    if args.json:
        print_json(done)
    elif len(args.ids) == 1:
        print(f"#{args.id} " + (state if done["changed"] else f"was already {state}") + f".{_undo(done)}")
    else:
        already = f" ({done['unchanged']} {'was' if done['unchanged'] == 1 else 'were'} already {state})" \
            if done["unchanged"] else ""
        print(f"{state} {plural(done['changed'], 'memory')}{already}.{_undo(done)}")
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    project = None if args.to_global else args.project
    if args.new_project and args.to_global:
        raise InvalidInput("--new goes with --project")
    with Runtime.open(args.vault, embedder="none") as rt:
        done = Edits(rt.vault).move(args.ids, project, new_project=args.new_project)
    if args.json:
        print_json(done)
        return 0
    where = "global" if project is None else f"in {project}" + (" (a new project)" if done["new_project"] else "")
    if len(args.ids) == 1:
        print(f"#{args.id} is now {where} (the move is in its history).{_undo(done)}")
        return 0
    skipped = done["skipped"]
    notes = [n for n in (
        f"{plural(skipped['preference'], 'preference')} kept global" if skipped["preference"] else "",
        f"{skipped['forgotten']} forgotten" if skipped["forgotten"] else "",
        f"{skipped['already_there']} already {where}" if skipped["already_there"] else "") if n]
    extra = f" ({'; '.join(notes)})" if notes else ""
    print(f"moved {plural(done['moved'], 'memory')}, now {where}{extra}.{_undo(done)}")
    return 0
