"""``vodou capture watch|flush|add``: terminal and IDE captures (ING-1, ING-5)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from vodou_desktop import paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.ingest import window as w
from vodou_desktop.ingest.settle import settle_new_facts
from vodou_desktop.ingest.watch import SessionWatcher
from vodou_desktop.runtime import Runtime
from vodou_desktop.words import plural


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("capture", help="capture prompts from terminals, IDEs and an inbox folder")
    csub = p.add_subparsers(dest="capture_command", metavar="ACTION", required=True)
    watch = csub.add_parser("watch", help="watch Claude Code sessions and the inbox until Ctrl-C")
    watch.add_argument("--claude-dir", type=Path, help="Claude Code projects folder (default ~/.claude/projects)")
    watch.add_argument("--inbox", type=Path, help="folder for .txt/.md drops (default: the data folder's inbox)")
    watch.add_argument("--flush-after", type=float, default=5.0, help="seconds of quiet before a flush")
    watch.set_defaults(func=cmd_watch)
    flush = csub.add_parser("flush", help="turn buffered prompts into memories now")
    flush.add_argument("--json", action="store_true")
    flush.set_defaults(func=cmd_flush)
    add = csub.add_parser("add", help="buffer one prompt (for editor and shell hooks)")
    add.add_argument("text")
    add.add_argument("--tool", default="cli")
    add.add_argument("--project")
    add.add_argument("--scope")
    add.set_defaults(func=cmd_add)


def _folders(args: argparse.Namespace, rt: Runtime) -> tuple[Path, Path]:
    extra = rt.settings.extra
    claude = args.claude_dir or Path(str(extra.get("claude_projects_dir") or "~/.claude/projects"))
    inbox = args.inbox or Path(str(extra.get("inbox_dir") or paths.data_dir() / "inbox"))
    return claude.expanduser(), inbox.expanduser()


def cmd_watch(args: argparse.Namespace) -> int:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with Runtime.open(args.vault, embedder="none") as rt:
        claude, inbox = _folders(args, rt)
        watcher = SessionWatcher(rt.vault, claude, inbox, flush_after=args.flush_after).start()
        print(f"watching {claude} and {inbox}; Ctrl-C to stop", file=sys.stderr, flush=True)
        while not stop.wait(0.2):
            pass
        stats = watcher.stop()
    print(f"captured {plural(stats.entries, 'prompt')} and {plural(stats.inbox_files, 'inbox file')}; "
          f"{plural(stats.flushes, 'flush')}, {plural(stats.facts, 'memory')}")
    return 0


def cmd_flush(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        report = w.flush(rt.vault)
        settle_new_facts(rt.vault, report.distilled_ids)
    if args.json:
        print_json(report.as_json())
    elif not report.entries:
        print("nothing buffered")
    else:
        where = f"project {report.label.project}" if report.label and report.label.project else "global"
        print(f"flushed {plural(report.entries, 'prompt')} into {plural(len(report.fact_ids), 'memory')} ({where})")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        w.enqueue(rt.vault, [w.Entry(args.text, args.tool, args.project, args.scope)])
    return 0
