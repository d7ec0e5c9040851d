"""``vodou import chatgpt FILE`` / ``vodou import claude FILE``: import a data export.

``--project NAME`` files the conversations' memories under a project (preferences stay global);
``--distil model`` distils with the local model of the settings (``rules``: without it), whatever the
settings say; by default the settings decide (off unless turned on).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vodou_desktop import config
from vodou_desktop.cli.ids import short_op
from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput
from vodou_desktop.ingest.exports import FORMATS
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault.secret_filter import removed_note
from vodou_desktop.words import plural

if TYPE_CHECKING:
    from vodou_desktop.ingest.distil import ModelDistiller
    from vodou_desktop.ingest.importer import ImportReport
# The export's schema (pydantic) and the model client (aiohttp) are imported by the commands that use
# them: every other `vodou` command starts without them.


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    imp = sub.add_parser("import", help="import a ChatGPT or Claude data export, or a Vodou export")
    isub = imp.add_subparsers(dest="import_format", metavar="FORMAT", required=True)
    for fmt in FORMATS:
        p = isub.add_parser(fmt, help=f"import a {fmt} export's conversations.json")
        p.add_argument("file", type=Path)
        p.add_argument("--project", metavar="NAME",
                       help="file the memories under this project (preferences stay global)")
        p.add_argument("--distil", choices=("rules", "model"),
                       help="distil with the rules or with the local model set in the settings "
                            "(default: the settings' choice; off unless turned on)")
        p.add_argument("--json", action="store_true", help="print the summary as JSON")
        p.set_defaults(func=cmd_import, import_format=fmt)
    own = isub.add_parser("vodou", help="read a `vodou export --format jsonl` file (into an empty vault it "
                                        "keeps every id)")
    own.add_argument("file", type=Path)
    own.add_argument("--json", action="store_true", help="print the summary as JSON")
    own.set_defaults(func=cmd_import_vodou)


def cmd_import_vodou(args: argparse.Namespace) -> int:
    from vodou_desktop.data.export import import_records, read_jsonl

    checked = read_jsonl(args.file)  # the whole file, before the vault is even opened
    with Runtime.open(args.vault, embedder="none") as rt:
        report = import_records(rt.vault, checked, args.file.name)
    if args.json:
        print_json(report.as_json())
        return 0
    for line in report.sentences():
        print(line)
    if report.op:
        print(f"Undo: vodou undo {short_op(report.op)}")
    return 0


def _progress(done: int, total: int) -> None:
    """Progress on a terminal only: a script or a log file gets the summary line alone."""
    if not sys.stderr.isatty():
        return
    sys.stderr.write(f"\rimporting: {done}/{plural(total, 'conversation')}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _distiller(args: argparse.Namespace, settings: config.Settings) -> ModelDistiller | None:
    from vodou_desktop.ingest.distil import ModelDistiller, from_settings

    if args.distil == "rules":
        return None
    if args.distil == "model":
        if not settings.model_base_url:
            raise InvalidInput("--distil model needs a model endpoint: set it in Settings (model_base_url)")
        return ModelDistiller(settings.model_base_url, settings.model_name)
    return from_settings(settings)


def cmd_import(args: argparse.Namespace) -> int:
    from vodou_desktop.ingest.importer import import_export
    from vodou_desktop.ingest.settle import settle_new_facts

    with Runtime.open(args.vault, embedder="none") as rt:
        distil = _distiller(args, rt.settings)
        report = import_export(rt.vault, args.file, args.import_format, progress=_progress, project=args.project,
                               distil=distil)
        settle_new_facts(rt.vault, report.distilled_ids)  # fact groups wait for `vodou mem dedupe` (model)
    if args.json:
        print_json(report.as_json())
    else:
        print(summary_line(report))
        if report.secrets_removed:
            print(removed_note(report.secrets_removed))
        for problem in report.malformed:
            print(f"skipped malformed conversation: {problem}")
        if report.op:
            print(f"Undo: vodou undo {short_op(report.op)}")
    return 1 if report.malformed else 0


def summary_line(report: ImportReport) -> str:
    """"5 conversations read, 4 imported (6 new messages: 6 kept as conversation, 5 memories distilled)"."""
    where = f" into project {report.project}" if report.project else ""
    line = (f"{plural(report.conversations, 'conversation')} read, {report.imported} imported{where} "
            f"({plural(report.messages, 'new message')}: {report.conversation_memories} kept as conversation, "
            f"{plural(report.distilled, 'memory')} distilled")
    if report.accepted:
        line += f", {report.accepted} of them from replies you accepted"
    line += ")"
    if report.model is not None and report.model.windows:
        line += f"; {report.model.sentence()}"
    return line
