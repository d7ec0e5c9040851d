"""``vodou mem dedupe [--dry-run]``: rebuild fact groups with a full scan (ING-2)."""

from __future__ import annotations

import argparse
import sys

from vodou_desktop.cli.output import MODEL_WAIT_S, print_json
from vodou_desktop.errors import KnownError
from vodou_desktop.ingest.dedupe import dedupe_scan
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import EmbedderState
from vodou_desktop.words import plural


def register_mem(msub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = msub.add_parser("dedupe", help="group near-duplicate memories and elect canonical copies")
    p.add_argument("--dry-run", action="store_true", help="show the groups, change nothing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_dedupe, needs_vault=True)


def _progress(done: int, total: int) -> None:
    sys.stderr.write(f"\rdedupe: {done}/{plural(total, 'memory')} compared")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def cmd_dedupe(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault) as rt:
        if rt.embedder.wait(MODEL_WAIT_S) is not EmbedderState.READY:
            raise KnownError(f"dedupe needs the embedding model, which is {rt.embedder.state.value}"
                             + (f" ({rt.embedder.error})" if rt.embedder.error else ""))
        report = dedupe_scan(rt.vault, rt.embedder, dry_run=args.dry_run, progress=_progress)
    if args.json:
        print_json({**report.as_json(), "dry_run": args.dry_run})
        return 0
    verb = "would group" if args.dry_run else "grouped"
    print(f"scanned {plural(report.scanned, 'memory')}; {verb} {plural(len(report.groups), 'set of near-duplicates')}"
          + ("" if args.dry_run else f" ({plural(report.changed, 'memory updated')})"))
    for group in report.groups:
        print(f"  canonical #{group[0]}: duplicates " + ", ".join(f"#{i}" for i in group[1:]))
    return 0
