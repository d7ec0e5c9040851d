"""``vodou mem forget`` (soft, undoable) and ``vodou mem erase`` (hard, irreversible)."""

from __future__ import annotations

import argparse

from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.runtime import Runtime


def register_mem(msub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    forget = msub.add_parser("forget", help="hide every memory from a site or a tool, or one memory (undoable)")
    target = forget.add_mutually_exclusive_group(required=True)
    target.add_argument("--host", help="site to forget, with its subdomains")
    target.add_argument("--id", type=int, help="one memory to forget")
    target.add_argument("--document", type=int, metavar="ID", help="one Library document to forget")
    target.add_argument("--tool", help="every memory written by this tool (an MCP client's name, cli, …)")
    target.add_argument("--undo", metavar="OP", help="undo a forget (or an AI tool's correction) by its operation id")
    forget.add_argument("--documents", action="store_true", help="with --host: its Library documents too")
    forget.add_argument("--dry-run", action="store_true", help="only count what would be hidden")
    forget.add_argument("--json", action="store_true")
    forget.set_defaults(func=cmd_forget)

    erase = msub.add_parser("erase", help="delete memories for good: text, index and journal")
    target = erase.add_mutually_exclusive_group(required=True)
    target.add_argument("--id", type=int, help="a memory and its revisions")
    target.add_argument("--host", help="every memory from a site and its subdomains")
    target.add_argument("--document", type=int, metavar="ID", help="one Library document")
    erase.add_argument("--documents", action="store_true",
                       help="with --host: erase its Library documents too (otherwise they are kept)")
    erase.add_argument("--yes", action="store_true", help="confirm: erase cannot be undone")
    erase.add_argument("--json", action="store_true")
    erase.set_defaults(func=cmd_erase)


def _open(args: argparse.Namespace) -> Runtime:
    return Runtime.open(args.vault, embedder="none")


def cmd_forget(args: argparse.Namespace) -> int:
    if args.dry_run and not (args.host or args.tool):
        raise InvalidInput("--dry-run goes with --host or --tool")
    if args.documents and not args.host:
        raise InvalidInput("--documents goes with --host")
    with _open(args) as rt:
        forgetting = Forgetting(rt.vault)
        if args.undo:
            result = forgetting.undo(args.undo)
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
    elif args.undo:
        print(_undone(result))
    elif args.id is not None:
        print(f"forgot memory #{result['id']}. Undo: vodou mem forget --undo {result['op']}")
    elif args.document is not None:
        print(f"forgot library document #{result['document']}. Undo: vodou mem forget --undo {result['op']}")
    elif args.tool is not None:
        sources = ", ".join(f"{n} from {kind}" for kind, n in sorted(result["by_source"].items())) or "none"
        if args.dry_run:
            print(f"would forget {result['facts']} memories written by {result['tool']} ({sources})")
        else:
            print(f"forgot {result['facts_hidden']} memories written by {result['tool']} ({sources})."
                  f" Undo: vodou mem forget --undo {result['op']}")
    elif args.dry_run:
        print(f"would forget {result['facts']} memories from {result['host']}; {result['documents']} library"
              " documents would be kept (add --documents to forget them too)")
    else:
        docs = (f"{result['documents_hidden']} library documents forgotten too" if args.documents
                else f"{result['documents_kept']} library documents kept")
        print(f"forgot {result['facts_hidden']} memories from {result['host']} ({docs}). "
              f"Undo: vodou mem forget --undo {result['op']}")
    return 0


def _undone(result: dict[str, object]) -> str:
    if result.get("correction"):
        return f"undone {result['op']}: the correction #{result['id']} is hidden and #{result['restored']} is back"
    if "document" in result:
        return f"undone {result['op']}: library document #{result['document']} visible again"
    what = (f"from {result['host']}" if "host" in result else f"written by {result['tool']}" if "tool" in result
            else f"(#{result['id']})")
    docs = f" and {result['documents_restored']} library documents" if result.get("documents_restored") else ""
    return (f"undone {result['op']}: {result['facts_restored']} memories{docs} {what} visible again"
            + (f", {result['facts_still_hidden']} still hidden by another forget" if result["facts_still_hidden"]
               else ""))


def cmd_erase(args: argparse.Namespace) -> int:
    if not args.yes:
        raise InvalidInput("erase cannot be undone: add --yes to confirm (or use `vodou mem forget`, which can)")
    if args.documents and not args.host:
        raise InvalidInput("--documents goes with --host")
    with _open(args) as rt:
        forgetting = Forgetting(rt.vault)
        if args.id is not None:
            result = forgetting.erase_fact(args.id)
        elif args.document is not None:
            result = forgetting.erase_document(args.document)
        else:
            result = forgetting.erase_host(args.host, documents=args.documents)
    if args.json:
        print_json(result)
    elif "document" in result:
        print(f"erased library document #{result['document']}")
    else:
        what = f"#{result['id']}" if "id" in result else result["host"]
        docs = ""
        if result.get("documents_erased"):
            docs = f" and {result['documents_erased']} library documents"
        elif result.get("documents_kept"):
            docs = f"; {result['documents_kept']} library documents kept (add --documents to erase them too)"
        print(f"erased {result['facts_erased']} memories{docs} ({what})" if not docs.startswith(";")
              else f"erased {result['facts_erased']} memories ({what}){docs}")
    return 0
