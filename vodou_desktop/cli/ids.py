"""Ids on the command line: ``vodou mem forget 3`` as well as ``--id 3`` (kept for scripts)."""

from __future__ import annotations

import argparse

from vodou_desktop.errors import InvalidInput


def add_id_argument(parser: argparse.ArgumentParser, what: str = "memory", *, required: bool = True,
                    group: argparse._MutuallyExclusiveGroup | None = None) -> None:
    """The id as a positional argument (``vodou mem forget 3``), ``--id`` kept as its alias for scripts.
    ``resolve_id`` (run by ``main`` before every command) reconciles the two."""
    parser.add_argument("id", nargs="?", type=int, metavar="ID", help=f"the {what}'s id (or --id ID)")
    (group or parser).add_argument("--id", dest="id_option", type=int, metavar="ID", help="the same as ID")
    parser.set_defaults(id_required=required, id_what=what)


def resolve_id(args: argparse.Namespace) -> None:
    """``args.id`` from the positional id or ``--id``: both given and differing is an error, and so is
    none when the command needs one."""
    if not hasattr(args, "id_option"):
        return
    given, option = args.id, args.id_option
    if given is not None and option is not None and given != option:
        raise InvalidInput(f"two different ids given ({given} and --id {option}); give one")
    args.id = given if given is not None else option
    if args.id is None and args.id_required:
        raise InvalidInput(f"give the {args.id_what}'s id, e.g. `vodou mem {getattr(args, 'mem_command', 'show')} 3`")


def short_op(op: str) -> str:
    """The part of an operation id to type: ``op-c514912a7d8e`` → ``c514912a`` (``vodou undo`` takes a prefix)."""
    return op.removeprefix("op-")[:8]
