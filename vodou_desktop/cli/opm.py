"""``vodou opm``: the person's operator memory — list, add, correct, reauthorize, erase, export.

Operator memory has no forget: removing a note is an erase (deleted for good, confirmed), so
``opm forget`` and ``opm forget-all`` answer with one line pointing to ``opm erase``/``erase-all``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator

from vodou_desktop.cli.confirm import confirm_erase
from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.ages import format_age, format_date
from vodou_desktop.governance.opm import CATEGORIES, OperatorMemory, Outcome, OwnedMemory
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault.secret_filter import removed_note
from vodou_desktop.words import plural


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    opm = sub.add_parser("opm", help="operator memory: standing preferences, initiative, pinned context")
    osub = opm.add_subparsers(dest="opm_command", metavar="ACTION", required=True)

    lst = osub.add_parser("list", help="list every operator memory, expired ones too, with its status")
    lst.add_argument("--all", action="store_true", help="also show superseded revisions")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=cmd_list, needs_vault=True)

    add = osub.add_parser("add", help="add a memory (unchanged content already stored is reauthorized)")
    add.add_argument("category", help=", ".join(CATEGORIES))
    add.add_argument("text")
    add.add_argument("--source", help="where this came from (default: operator)")
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=cmd_add)

    correct = osub.add_parser("correct", help="replace a memory's text as a new revision (same id)")
    correct.add_argument("id")
    correct.add_argument("text")
    correct.add_argument("--source", help="where the correction came from (default: operator)")
    correct.add_argument("--json", action="store_true")
    correct.set_defaults(func=cmd_correct, needs_vault=True)

    reauth = osub.add_parser("reauth", help="confirm a memory unchanged: renews its expiry")
    reauth.add_argument("id")
    reauth.add_argument("--source", help="where the confirmation came from (default: operator)")
    reauth.add_argument("--json", action="store_true")
    reauth.set_defaults(func=cmd_reauth, needs_vault=True)

    erase = osub.add_parser("erase", help="delete a memory and every revision of it, for good (asks first)")
    erase.add_argument("id")
    erase.add_argument("--yes", action="store_true", help="confirm without being asked: erase cannot be undone")
    erase.add_argument("--json", action="store_true")
    erase.set_defaults(func=cmd_erase, needs_vault=True)

    erase_all = osub.add_parser("erase-all", help="delete every operator memory and its history, for good")
    erase_all.add_argument("--yes", action="store_true", help="confirm without being asked: erase cannot be undone")
    erase_all.add_argument("--json", action="store_true")
    erase_all.set_defaults(func=cmd_erase_all, needs_vault=True)

    for name, instead in (("forget", "erase ID"), ("forget-all", "erase-all")):
        refused = osub.add_parser(name, help=f"not available: operator memory is erased, never hidden (opm {instead})")
        refused.add_argument("id", nargs="?", help=argparse.SUPPRESS)
        refused.add_argument("--yes", action="store_true", help=argparse.SUPPRESS)
        refused.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
        refused.set_defaults(func=cmd_no_forget, instead=instead)

    export = osub.add_parser("export", help="write current and superseded memory as JSON")
    export.add_argument("file", nargs="?", help="output file (default: standard output)")
    export.set_defaults(func=cmd_export, needs_vault=True)


@contextlib.contextmanager
def _service(args: argparse.Namespace) -> Iterator[OperatorMemory]:
    # The Runtime opens the vault the way every command does (default folder, settings); no model.
    with Runtime.open(args.vault, embedder="none") as rt:
        yield OperatorMemory(rt.vault)


def cmd_list(args: argparse.Namespace) -> int:
    with _service(args) as opm:
        owned = opm.list_memories(include_history=args.all)
    if args.json:
        print_json([m.as_json(with_history=args.all) for m in owned])
        return 0
    if not owned:
        print("no operator memory")
    for m in owned:
        print(_line(m))
        for h in m.history:
            print(f"    r{h.revision} replaced {format_age(h.superseded_at)} by r{h.successor_revision}: "
                  f"{h.content}  (source {h.source_ref})")
    return 0


def _line(m: OwnedMemory) -> str:
    r = m.memory
    expiry = (("never expires" if r.expires_at is None else f"expires {format_date(r.expires_at)}")
              if m.status == "active" else f"EXPIRED {format_date(r.expires_at)}")
    source = f"source {r.source_ref}" + (f", first {r.original_source_ref}" if r.original_source_ref != r.source_ref
                                         else "")
    return f"{r.id}  {r.category}  r{r.revision}  {m.status}  {r.content}  ({source}; {expiry})"


def _report(outcome: Outcome, as_json: bool) -> int:
    if as_json:
        print_json({"action": outcome.action, "memory": outcome.memory.as_json(),
                    "secrets_removed": list(outcome.secrets_removed)})
    else:
        r = outcome.memory
        expires = "never expires" if r.expires_at is None else f"expires {format_date(r.expires_at)}"
        print(f"{outcome.action} {r.id} ({r.category}, revision {r.revision}, {expires})")
        if outcome.secrets_removed:
            print(f"{removed_note(outcome.secrets_removed)}: the memory holds [secret removed: …] in its place")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    with _service(args) as opm:
        return _report(opm.add(args.category, args.text, args.source), args.json)


def cmd_correct(args: argparse.Namespace) -> int:
    with _service(args) as opm:
        return _report(opm.correct(args.id, args.text, args.source), args.json)


def cmd_reauth(args: argparse.Namespace) -> int:
    with _service(args) as opm:
        return _report(Outcome("reauthorized", opm.reauthorize(args.id, args.source)), args.json)


def cmd_no_forget(args: argparse.Namespace) -> int:
    raise InvalidInput(f"operator memory cannot be hidden and brought back: `vodou opm {args.instead}` deletes it "
                       "for good (with its history)")


def cmd_erase(args: argparse.Namespace) -> int:
    confirm_erase(args, f"operator memory {args.id} and its history", f"vodou opm erase {args.id}")
    with _service(args) as opm:
        result = opm.erase(args.id)
    if args.json:
        print_json(result)
    else:
        earlier = f" and {plural(result['history'], 'earlier revision')}" if result["history"] else ""
        print(f"erased operator memory {result['id']}{earlier} for good")
    return 0


def cmd_erase_all(args: argparse.Namespace) -> int:
    confirm_erase(args, "every operator memory and its history", "vodou opm erase-all")
    with _service(args) as opm:
        result = opm.erase_all()
    if args.json:
        print_json(result)
    else:
        print(f"erased {plural(result['current'], 'operator memory')} and "
              f"{plural(result['history'], 'earlier revision')} for good")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with _service(args) as opm:
        snapshot = opm.export()
    text = json.dumps(snapshot, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    if not args.file or args.file == "-":
        sys.stdout.write(text)
        return 0
    _write_private(args.file, text)
    print(f"exported {plural(len(snapshot['memories']), 'operator memory')} and "
          f"{plural(len(snapshot['history']), 'earlier revision')} "
          f"to {args.file}")
    return 0


def _write_private(path: str, text: str) -> None:
    """Owner-only permissions: the export holds the person's memory."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror}") from exc
