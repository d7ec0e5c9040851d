"""``vodou export``: every memory with its provenance, as JSON Lines (lossless) or Markdown.

The format follows the file's name when ``--format`` is not given (``.md``/``.markdown``: Markdown,
anything else: JSON Lines); a ``--format`` that contradicts the name is refused. The file is written
under a temporary name in the same folder, flushed to disk, then renamed: a full disk or a crash
leaves no partial export behind.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.edits import Edits
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault.cipher import is_encrypted
from vodou_desktop.words import plural

MARKDOWN_SUFFIXES = (".md", ".markdown")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("export", help="write every memory with its provenance (JSONL, or Markdown to read)")
    p.add_argument("path", nargs="?", help="file to write (default: standard output); a name ending in .md "
                                           "gives Markdown")
    p.add_argument("--format", choices=("jsonl", "markdown"),
                   help="jsonl (lossless, for `vodou import vodou`) or markdown (to read); default: from the "
                        "file's name, else jsonl")
    p.add_argument("--project", help="only this project's memories and the global ones")
    p.add_argument("--include-forgotten", action="store_true", help="also forgotten memories (erased ones are gone)")
    p.add_argument("--id", dest="ids", type=int, action="append", metavar="ID",
                   help="only this memory, with its history (repeat for several: --id 3 --id 5); the vault's"
                        " settings and site rules are left out")
    p.set_defaults(func=cmd_export, needs_vault=True)


def exported_words(counts: dict[str, int]) -> str:
    """``1 memory, 2 library documents, 0 operator memories and 1 site rule``."""
    return (f"{plural(counts.get('memory', 0), 'memory')}, {plural(counts.get('document', 0), 'library document')}, "
            f"{plural(counts.get('operator_memory', 0), 'operator memory')} and "
            f"{plural(counts.get('site_rule', 0), 'site rule')}")


def export_format(path: Path | None, chosen: str | None) -> str:
    """The format to write: ``chosen``, else the one the file's name says; a contradiction is refused."""
    if path is None:
        return chosen or "jsonl"
    named = "markdown" if path.suffix.lower() in MARKDOWN_SUFFIXES else "jsonl"
    if chosen and named == "markdown" and chosen != "markdown":
        raise InvalidInput(f"{path.name} is a Markdown name but --format is {chosen}; "
                           "name the file .jsonl or leave out --format")
    return chosen or named


def cmd_export(args: argparse.Namespace) -> int:
    from vodou_desktop.data.export import ExportScope, write_export_file, write_jsonl, write_markdown  # its schema

    scope = ExportScope(project=args.project, include_forgotten=args.include_forgotten)
    path = Path(args.path).expanduser() if args.path else None
    fmt = export_format(path, args.format)
    write = write_jsonl if fmt == "jsonl" else write_markdown
    if args.ids and (args.project or args.include_forgotten):
        raise InvalidInput("--id names the memories: leave out --project and --include-forgotten")
    with Runtime.open(args.vault, embedder="none") as rt:
        if args.ids:
            edits = Edits(rt.vault)
            if path is None:
                edits.export(args.ids, sys.stdout, fmt)
                return 0
            counts = edits.export(args.ids, path, fmt)
            print(f"exported {exported_words(counts)} to {path}")
            return 0
        if is_encrypted(rt.vault.path):
            print("vodou: note: your vault is encrypted, but this export is not: keep it somewhere safe "
                  "and delete it when done", file=sys.stderr)
        if path is None:
            write(rt.vault, scope, sys.stdout)
            return 0
        counts = write_export_file(path, lambda out: write(rt.vault, scope, out))
    print(f"exported {exported_words(counts)} to {path}")
    return 0
