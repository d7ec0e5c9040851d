"""``vodou mem forget`` (soft, undoable) and ``vodou mem erase`` (hard, irreversible), of one memory or
several at once (``vodou mem forget 3 5 9``: one action, one undo; ``vodou mem erase 3 5 9``: one
confirmation naming how many)."""

from __future__ import annotations

import argparse
from typing import Any

from vodou_desktop.cli.confirm import confirm_erase
from vodou_desktop.cli.ids import add_ids_argument, short_op
from vodou_desktop.cli.output import print_json
from vodou_desktop.cli.undo import undo_action
from vodou_desktop.data.erase_copies import sentence as copies_sentence
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.runtime import Runtime
from vodou_desktop.words import plural


def register_mem(msub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    forget = msub.add_parser("forget", help="hide memories (one or several ids), or every memory from a site or a"
                                            " tool (undoable)")
    target = forget.add_mutually_exclusive_group()
    add_ids_argument(forget, required=False, group=target)
    target.add_argument("--host", help="site to forget, with its subdomains")
    target.add_argument("--document", type=int, metavar="ID", help="one Library document to forget")
    target.add_argument("--tool", help="every memory written by this tool (an MCP client's name, cli, …)")
    target.add_argument("--undo", metavar="OP", help="the same as `vodou undo OP`: undo a forget (or an AI "
                                                      "tool's correction) by its id")
    forget.add_argument("--documents", action="store_true", help="with --host: its Library documents too")
    forget.add_argument("--dry-run", action="store_true", help="only count what would be hidden")
    forget.add_argument("--json", action="store_true")
    forget.set_defaults(func=cmd_forget, needs_vault=True)

    erase = msub.add_parser("erase", help="delete memories for good (one or several ids, or a site): text, index"
                                          " and journal (asks first)")
    target = erase.add_mutually_exclusive_group()
    add_ids_argument(erase, required=False, group=target)
    target.add_argument("--host", help="every memory from a site and its subdomains")
    target.add_argument("--document", type=int, metavar="ID", help="one Library document")
    erase.add_argument("--documents", action="store_true",
                       help="with --host: erase its Library documents too (otherwise they are kept)")
    erase.add_argument("--yes", action="store_true", help="confirm without being asked: erase cannot be undone"
                       " (`vodou mem forget` hides instead, and can be undone)")
    erase.add_argument("--json", action="store_true")
    erase.set_defaults(func=cmd_erase, needs_vault=True)


def _open(args: argparse.Namespace) -> Runtime:
    return Runtime.open(args.vault, embedder="none")


def _one_target(args: argparse.Namespace, options: tuple[str, ...], example: str) -> None:
    """Exactly one of: the id (positional or --id) or one of ``options``."""
    named = [f"--{o}" for o in options if getattr(args, o) is not None]
    if args.id is not None and named:
        raise InvalidInput(f"give the memory's id or {named[0]}, not both")
    if args.id is None and not named:
        raise InvalidInput(f"say what to {args.mem_command}: {example}")


def cmd_forget(args: argparse.Namespace) -> int:
    _one_target(args, ("host", "document", "tool", "undo"),
                "a memory's id (vodou mem forget 3), --host SITE, --tool NAME or --document ID")
    if args.dry_run and not (args.host or args.tool):
        raise InvalidInput("--dry-run goes with --host or --tool")
    if args.documents and not args.host:
        raise InvalidInput("--documents goes with --host")
    with _open(args) as rt:
        if args.undo:
            done = undo_action(rt, args.undo)
            print_json(done.as_json()) if args.json else print(done.sentence)
            return 0
        forgetting = Forgetting(rt.vault)
        if len(args.ids) > 1:
            result = forgetting.forget_facts(args.ids)
        elif args.id is not None:
            result = forgetting.forget_fact(args.id)
        elif args.document is not None:
            result = forgetting.forget_document(args.document)
        elif args.tool is not None:
            result = forgetting.forget_tool(args.tool, args.dry_run)
        else:
            result = forgetting.forget_host(args.host, args.dry_run, documents=args.documents)
    if args.json:
        print_json(result)
    else:
        print(_forgot_sentence(args, result))
    return 0


def _forgot_sentence(args: argparse.Namespace, result: dict[str, Any]) -> str:
    undo = f" Undo: vodou undo {short_op(result['op'])}" if "op" in result else ""
    if len(args.ids) > 1:
        already = f" ({result['already_hidden']} hidden already)" if result["already_hidden"] else ""
        return f"forgot {plural(len(result['ids']), 'memory')}{already}.{undo}"
    if args.id is not None:
        return f"forgot memory #{result['id']}.{undo}"
    if args.document is not None:
        return f"forgot library document #{result['document']}.{undo}"
    if args.tool is not None:
        sources = ", ".join(f"{n} from {kind}" for kind, n in sorted(result["by_source"].items())) or "none"
        if args.dry_run:
            return f"would forget {plural(result['facts'], 'memory')} written by {result['tool']} ({sources})"
        return f"forgot {plural(result['facts_hidden'], 'memory')} written by {result['tool']} ({sources}).{undo}"
    if args.dry_run:
        kept = plural(result["documents"], "library document")
        return (f"would forget {plural(result['facts'], 'memory')} from {result['host']}; {kept} would be kept"
                " (add --documents to forget them too)")
    docs = (f"{plural(result['documents_hidden'], 'library document')} forgotten too" if args.documents
            else f"{plural(result['documents_kept'], 'library document')} kept")
    return f"forgot {plural(result['facts_hidden'], 'memory')} from {result['host']} ({docs}).{undo}"


def cmd_erase(args: argparse.Namespace) -> int:
    _one_target(args, ("host", "document"), "a memory's id (vodou mem erase 3 --yes), --host SITE or --document ID")
    if args.documents and not args.host:
        raise InvalidInput("--documents goes with --host")
    what = (f"{plural(len(args.ids), 'memory')} ({', '.join(f'#{i}' for i in args.ids)}) and their revisions"
            if len(args.ids) > 1
            else f"memory #{args.id} and its revisions" if args.id is not None
            else f"library document #{args.document}" if args.document is not None
            else f"every memory from {args.host}" + (" and its library documents" if args.documents else ""))
    confirm_erase(args, what, "vodou mem erase")
    with _open(args) as rt:
        forgetting = Forgetting(rt.vault)
        if len(args.ids) > 1:
            result = forgetting.erase_facts(args.ids)
        elif args.id is not None:
            result = forgetting.erase_fact(args.id)
        elif args.document is not None:
            result = forgetting.erase_document(args.document)
        else:
            result = forgetting.erase_host(args.host, documents=args.documents)
    print_json(result) if args.json else print(_erased_sentence(result))
    if not args.json and copies_sentence(result):
        print(copies_sentence(result))
    return 0


def _erased_sentence(result: dict[str, Any]) -> str:
    if "document" in result:
        return f"erased library document #{result['document']} for good"
    if "memories_erased" in result:
        return (f"erased {plural(result['memories_erased'], 'memory')} and their "
                f"{plural(result['facts_erased'], 'revision')} for good")
    what = f"#{result['id']}" if "id" in result else result["host"]
    facts = plural(result["facts_erased"], "memory")
    if result.get("documents_erased"):
        return f"erased {facts} and {plural(result['documents_erased'], 'library document')} ({what}) for good"
    if result.get("documents_kept"):
        return (f"erased {facts} ({what}) for good; {plural(result['documents_kept'], 'library document')} kept"
                " (add --documents to erase them too)")
    return f"erased {facts} ({what}) for good"
