"""``vodou undo [OP]``: undo the last forget, or the one whose id starts with OP.

Forget (a memory, a site, a tool, a Library document) hides and is journaled, so it can be undone;
erase deletes for good and never can (said when it is asked for).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from vodou_desktop.cli.output import print_json
from vodou_desktop.governance.ages import format_age
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.runtime import Runtime
from vodou_desktop.words import operation_words, plural


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("undo", help="undo the last forget (or the one named by OP); an erase cannot be undone",
                       description="Undo a forget: the last one by default, or the one whose id starts with OP "
                                   "(a few characters are enough). Erase deletes for good and cannot be undone.")
    p.add_argument("op", nargs="?", metavar="OP", help="the operation's id, or its first characters")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_undo, needs_vault=True)


def undo_operation(rt: Runtime, given: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Find the operation (``given`` prefix, else the last forget) and undo it: (its record, the result)."""
    forgetting = Forgetting(rt.vault)
    record = forgetting.find_operation(given)
    if given is None:
        erase = forgetting.latest_erase()
        if erase is not None and erase["created_at"] > record["created_at"]:
            print(f"vodou: note: the last operation, {operation_words(erase['kind'], erase['target'])}"
                  f" ({format_age(erase['created_at'])}), cannot be undone; undoing the forget before it",
                  file=sys.stderr)
    return record, forgetting.undo(record["id"])


def undone_sentence(record: dict[str, Any], result: dict[str, Any]) -> str:
    """``undid forgetting memory #3 (5 minutes ago): 1 memory visible again``."""
    what = operation_words(record["kind"], record["target"])
    if result.get("correction"):
        back = f"memory #{result['id']} is hidden and #{result['restored']}, the one it corrected, is back"
    elif record["kind"] == "forget_document":
        back = "the document is visible again" if result["documents_restored"] else "nothing was hidden any more"
    else:
        back = f"{plural(result['facts_restored'], 'memory')} visible again"
        if result.get("documents_restored"):
            back += f", and {plural(result['documents_restored'], 'library document')}"
        if result.get("facts_still_hidden"):
            back += f"; {result['facts_still_hidden']} still hidden by another forget"
    return f"undid {what} ({format_age(record['created_at'])}): {back}"


def cmd_undo(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        record, result = undo_operation(rt, args.op)
    if args.json:
        print_json({**result, "undone": operation_words(record["kind"], record["target"])})
    else:
        print(undone_sentence(record, result))
    return 0
