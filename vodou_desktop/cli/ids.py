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


def add_ids_argument(parser: argparse.ArgumentParser, what: str = "memory", *, required: bool = True,
                     group: argparse._MutuallyExclusiveGroup | None = None) -> None:
    """One id or many (``vodou mem forget 3 5 9``: one action on all of them); ``--id`` kept for scripts.
    ``resolve_id`` sets ``args.ids`` (in the order given, once each) and ``args.id`` (the first)."""
    parser.add_argument("ids", nargs="*", type=int, metavar="ID", help=f"the {what}'s id, or several ids (or --id ID)")
    (group or parser).add_argument("--id", dest="id_option", type=int, metavar="ID", help="the same as one ID")
    parser.set_defaults(id_required=required, id_what=what, many_ids=True, id=None)


def resolve_id(args: argparse.Namespace) -> None:
    """``args.id`` from the positional id or ``--id``: both given and differing is an error, and so is
    none when the command needs one. With several ids allowed, ``args.ids`` holds them all."""
    if not hasattr(args, "id_option"):
        return
    if getattr(args, "many_ids", False):
        given, option = list(dict.fromkeys(args.ids)), args.id_option
        if option is not None and given and given != [option]:
            if len(given) == 1:
                raise InvalidInput(f"two different ids given ({given[0]} and --id {option}); give one")
            raise InvalidInput("give the ids as arguments (3 5 9) or one --id, not both")
        ids = given or ([option] if option is not None else [])
        args.ids, args.id = ids, (ids[0] if ids else None)
        if not ids and args.id_required:
            command = getattr(args, "mem_command", "show")
            raise InvalidInput(f"give the {args.id_what}'s id, e.g. `vodou mem {command} 3` (or several: 3 5 9)")
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
