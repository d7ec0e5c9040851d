"""``vodou recall``: print the bounded block a model would receive (operator memory + facts)."""

from __future__ import annotations

import argparse

from vodou_desktop.cli.output import ensure_embedded, print_json
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.recall import build_recall_block
from vodou_desktop.runtime import Runtime


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    recall = sub.add_parser("recall", help="print the bounded memory block a model would receive")
    recall.add_argument("-q", "--query", help="also include memories relevant to this text")
    recall.add_argument("--project", help="project context: its memories and global ones (default: global only)")
    recall.add_argument("--json", action="store_true")
    recall.set_defaults(func=cmd_recall, needs_vault=True)


def cmd_recall(args: argparse.Namespace) -> int:
    wants_facts = bool(args.query and args.query.strip())
    with Runtime.open(args.vault, embedder=None if wants_facts else "none") as rt:
        # semantic: whether the memories were searched by meaning too (None: no search, no query)
        semantic = (ensure_embedded(rt, quiet=args.json) and rt.search.semantic) if wants_facts else None
        note = rt.embedder.why_not_ready() if semantic is False else None
        block = build_recall_block(OperatorMemory(rt.vault), rt.search, args.query, args.project)
    if args.json:
        print_json({**block.as_json(), "semantic": semantic, "note": note})
    else:
        print(block.text)
    return 0

