"""``vodou undo [OP]``: undo the last action (or the one whose id starts with OP); ``--list`` the journal.

Every reversible action is journaled: forget (a memory, many, a site, a tool, a Library document),
correct, move, pin and unpin, and an import. ``vodou undo`` names what it undoes ("Move 12 memories
to birds") and does it; ``--dry-run`` only names it. Erase deletes for good and never can be undone
(said when it is asked for, and when it came after the action undone).
"""

from __future__ import annotations

import argparse
import sys

from vodou_desktop.cli.ids import short_op
from vodou_desktop.cli.output import print_json
from vodou_desktop.governance.journal import FINAL, UNDOABLE, Action, Journal, Undone
from vodou_desktop.runtime import Runtime

STATE_WORDS = {UNDOABLE: "can undo", "undone": "undone", FINAL: "final", "elsewhere": "other computer"}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("undo", help="undo the last action (forget, correct, move, pin, import); an erase cannot be"
                                    " undone",
                       description="Undo the last action on your memories, or the one whose id starts with OP "
                                   "(a few characters are enough): forget, correct, move, pin and unpin, import. "
                                   "Erase deletes for good and cannot be undone.")
    p.add_argument("op", nargs="?", metavar="OP", help="the action's id, or its first characters (`list`: the same"
                                                       " as --list)")
    p.add_argument("--list", action="store_true", help="list the recent actions, newest first, and whether each"
                                                       " can be undone")
    p.add_argument("--dry-run", action="store_true", help="only say what would be undone")
    p.add_argument("-n", "--limit", type=int, default=20, help="with --list: how many actions (default 20)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_undo, needs_vault=True)


def undo_action(rt: Runtime, given: str | None) -> Undone:
    """Find the action (``given`` prefix, else the last one) and undo it; a note on stderr when an erase
    came after it (that one cannot be undone)."""
    journal = Journal(rt.vault)
    action = journal.find(given)
    if given is None:
        erase = journal.final_since(action)
        if erase is not None:
            print(f"vodou: note: the last action, {erase.title} ({erase.when}), cannot be undone; undoing the"
                  " one before it", file=sys.stderr)
    return journal.undo(action.op)


def cmd_undo(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        if args.list or args.op == "list":  # an id is hexadecimal: "list" never names one
            return _list(Journal(rt.vault).actions(max(1, args.limit)), args.json)
        if args.dry_run:
            action = Journal(rt.vault).find(args.op)
            print_json(action.as_json()) if args.json else print(f"would undo “{action.title}” ({action.when})")
            return 0
        done = undo_action(rt, args.op)
    if args.json:
        print_json(done.as_json())
    else:
        print(done.sentence)
    return 0


def _list(actions: list[Action], as_json: bool) -> int:
    if as_json:
        print_json([a.as_json() for a in actions])
        return 0
    if not actions:
        print("no actions yet")
        return 0
    rows: list[tuple[str, ...]] = [(STATE_WORDS.get(a.state, a.state), a.title, a.when,
                                    short_op(a.op) if a.state == UNDOABLE else "") for a in actions]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)).rstrip())
    if any(a.state == FINAL for a in actions):
        print("(an erase is final: erased memories are deleted for good)")
    return 0
