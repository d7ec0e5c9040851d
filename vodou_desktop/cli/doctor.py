"""``vodou doctor [--json]``: run the vault and code audits; exit 1 when any fails."""

from __future__ import annotations

import argparse

from vodou_desktop.cli.output import print_json
from vodou_desktop.ingest.doctor import run_doctor
from vodou_desktop.runtime import Runtime


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("doctor", help="audit the vault (provenance, project tags, index, embeddings) and the code")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        checks = run_doctor(rt.vault)
    ok = all(c.passed for c in checks)
    if args.json:
        print_json({"ok": ok, "checks": [c.as_json() for c in checks]})
        return 0 if ok else 1
    for c in checks:
        print(f"{'PASS' if c.passed else 'FAIL'}  {c.title}: {c.detail}")
        for row in c.rows[:20]:
            print(f"        {row}")
        if len(c.rows) > 20:
            print(f"        … and {len(c.rows) - 20} more")
    return 0 if ok else 1
