"""``vodou export``: every memory with its provenance, as JSON Lines (lossless) or Markdown."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vodou_desktop.data import copies
from vodou_desktop.data.export import ExportScope, write_jsonl, write_markdown
from vodou_desktop.errors import InvalidInput
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault.atomic import open_new
from vodou_desktop.words import plural


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("export", help="write every memory with its provenance (JSONL, or Markdown to read)")
    p.add_argument("path", nargs="?", help="file to write (default: standard output)")
    p.add_argument("--format", choices=("jsonl", "markdown"), default="jsonl")
    p.add_argument("--project", help="only this project's memories and the global ones")
    p.add_argument("--include-forgotten", action="store_true", help="also forgotten memories (erased ones are gone)")
    p.set_defaults(func=cmd_export, needs_vault=True)


def exported_words(counts: dict[str, int]) -> str:
    """``1 memory, 2 library documents, 0 operator memories and 1 site rule``."""
    return (f"{plural(counts.get('memory', 0), 'memory')}, {plural(counts.get('document', 0), 'library document')}, "
            f"{plural(counts.get('operator_memory', 0), 'operator memory')} and "
            f"{plural(counts.get('site_rule', 0), 'site rule')}")


def cmd_export(args: argparse.Namespace) -> int:
    scope = ExportScope(project=args.project, include_forgotten=args.include_forgotten)
    write = write_jsonl if args.format == "jsonl" else write_markdown
    with Runtime.open(args.vault, embedder="none") as rt:
        if not args.path:
            write(rt.vault, scope, sys.stdout)
            return 0
        path = Path(args.path).expanduser()
        if path.exists():
            raise InvalidInput(f"{path} already exists; choose another name")
        with open_new(path) as out:  # 0600, whole or not at all: an export holds everything the vault does
            counts = write(rt.vault, scope, out)
    copies.record(path, "export")
    print(f"exported {exported_words(counts)} to {path}")
    return 0
