"""``vodou doctor [--verbose] [--json]``: is my memory healthy, and what do I run if not?

By default it speaks to the person: one line per thing that matters to them (the vault, the
search index, search by meaning) and, for each problem, what to run. The developer audits of
seeds 000 and 004 (provenance, project tags, code predicates) run too; their details are shown
with ``--verbose``. Exit 1 when any check fails.
"""

from __future__ import annotations

import argparse

from vodou_desktop.cli.output import print_json, wrap
from vodou_desktop.ingest.doctor import Check, run_doctor
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.words import plural

# What each failed check means to the person, and what to do about it.
PERSON = {
    "fts_integrity": ("The keyword search index does not match your memories, so some searches can miss them.",
                      "Back up the vault file, then report it; `vodou doctor --verbose` shows the details."),
    "resources": ("Files Vodou ships with are missing: {detail}.",
                  "Reinstall Vodou (`pipx reinstall vodou-desktop`, or a fresh copy of the bundle)."),
    "embeddings_missing": ("Some memories are not ready for search by meaning yet.",
                           "Start the Vodou app, or run `vodou mem search anything` once; both embed them. "
                           "If the model is off (VODOU_EMBEDDER=none), only keyword search finds them."),
}
OK_WORDS = {"fts_integrity": "The keyword search index matches your memories.",
            "embeddings_missing": "Your memories are ready for search by meaning (or it is off)."}
DEVELOPER = ("sources_without_url", "mixed_batch_tags", "project_carve_out", "policy_readers")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("doctor", help="check that your memory is healthy and say what to do if not")
    p.add_argument("--verbose", dest="audits", action="store_true",
                   help="also show the developer audits (provenance, project tags, code) in detail")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor, needs_vault=True)


def cmd_doctor(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        checks = run_doctor(rt.vault)
        memories = rt.vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS)))
        where = rt.vault.path
    ok = all(c.passed for c in checks)
    if args.json:
        print_json({"ok": ok, "checks": [c.as_json() for c in checks]})
        return 0 if ok else 1
    print(f"Your vault: {where} ({plural(memories, 'memory')})")
    for check in checks:
        if check.name in PERSON:
            _person_line(check)
        elif check.name not in DEVELOPER:  # a check without words of its own speaks for itself
            _audit_lines(check)
    _developer_summary([c for c in checks if c.name in DEVELOPER], args.audits)
    if args.audits:
        for check in checks:
            if check.name in PERSON or check.name in DEVELOPER:
                _audit_lines(check)
    print("All is well." if ok else "Something needs attention (see above).")
    return 0 if ok else 1


def _person_line(check: Check) -> None:
    if check.passed:
        print(wrap(f"ok    {OK_WORDS.get(check.name, check.detail)}", indent="      ", first=""))
        return
    problem, todo = PERSON[check.name]
    print(wrap(f"PROBLEM  {problem.format(detail=check.detail)}", indent="         ", first=""))
    print(wrap(f"To fix: {todo}", indent="         ", first="         "))


def _developer_summary(audits: list[Check], verbose: bool) -> None:
    failed = [c for c in audits if not c.passed]
    if not failed:
        print(f"ok    {plural(len(audits), 'internal audit')} passed")
        return
    hint = "" if verbose else " Run `vodou doctor --verbose` for the details."
    print(wrap(f"PROBLEM  {plural(len(failed), 'internal audit')} failed: this is a bug in Vodou, not something you "
               f"did. Your memories are still there; please report it.{hint}", indent="         ", first=""))


def _audit_lines(c: Check) -> None:
    print(f"{'PASS' if c.passed else 'FAIL'}  {c.title}: {c.detail}")
    for row in c.rows[:20]:
        print(f"        {row}")
    if len(c.rows) > 20:
        print(f"        … and {len(c.rows) - 20} more")
