"""``vodou doctor [--verbose] [--json]``: is my memory healthy, and what do I run if not?

One line per check of the person's data: ``ok`` with what was found, or ``PROBLEM`` with what is
wrong and what to run. ``--verbose`` adds the offending rows. Exit 0 when every check passes, 1
otherwise. (The audits of Vodou's own source code run in its test suite, not here.)
"""

from __future__ import annotations

import argparse
import os

from vodou_desktop import config, paths
from vodou_desktop.cli.output import print_json
from vodou_desktop.data.rolling import backup_folder
from vodou_desktop.ingest.doctor import Check, Setup, run_doctor, run_doctor_without_vault
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.embedder import model_id_for
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.words import plural

REPORT = "a fault in Vodou, not something you did; your memories are still there. Please report it " \
         "with the output of `vodou doctor --verbose`."
# For each check: the line when it passes, and when it fails (what is wrong, then what to do).
WORDS = {
    "integrity": ("The vault file is sound.",
                  "The vault file is damaged ({detail}). Restore your newest backup (`vodou restore FILE`)."),
    "fts_integrity": ("The keyword search index matches your memories.",
                      "The keyword search index does not match your memories, so some searches can miss them. "
                      "Back up the vault file, then report it."),
    "meaning": ("Search by meaning is {detail}: search finds memories by their words; turning it on embeds them"
                " in the background.", "{detail}"),
    "embeddings_missing": ("Your memories are ready for search by meaning.",
                           "Some memories are not ready for search by meaning yet ({detail}). Start the Vodou "
                           "app, or run `vodou mem search anything` once; both embed them."),
    "embeddings_other_model": ("Search by meaning uses one model throughout ({detail}).",
                               "Some memories were embedded by another model ({detail}), so search by meaning "
                               "misses them. Start the Vodou app (or `vodou serve`); it embeds them again."),
    "encryption": ("Encryption is {detail}.", "Encryption is {detail}."),
    "backup_age": ("Backups: {detail}.",
                   "Backups: {detail}. Run `vodou backup` (the Vodou app makes one a day while daily backups "
                   "are on in its settings)."),
    "sources_without_url": ("Memories from web pages keep their address.",
                            "Some memories from web pages lost their address ({detail}): " + REPORT),
    "mixed_batch_tags": ("Project tags come from captures that agreed on the project.",
                         "Some memories were tagged with a project their captures did not agree on "
                         "({detail}): " + REPORT),
    "latest_backup": ("The latest backup: {detail}.",
                      "The latest backup does not verify ({detail}). Make a new one (`vodou backup`) and keep the "
                      "old file until it verifies."),
    "memories_without_message": ("Memories from imports and captures name the message they came from{detail}.",
                                 "Some memories from imports or captures name no message ({detail}): " + REPORT),
    "vault": ("{detail}.", "{detail}."),
    "resources": ("Files Vodou ships with: {detail}.",
                  "Files Vodou ships with are missing: {detail}. Reinstall Vodou (`pipx reinstall "
                  "vodou-desktop`, or a fresh copy of the bundle)."),
}
ENCRYPTION_OFF = " `vodou encrypt` turns it on."


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("doctor", help="check that your memory is healthy and say what to do if not")
    p.add_argument("--verbose", action="store_true", help="also show what each check found, row by row")
    p.add_argument("--json", action="store_true")
    # a vault named by --vault or $VODOU_VAULT must exist; the default one may not be made yet
    p.set_defaults(func=cmd_doctor, needs_vault=lambda args: bool(args.vault or os.environ.get("VODOU_VAULT")))


def cmd_doctor(args: argparse.Namespace) -> int:
    settings = config.load()
    choice = config.embedder_choice(settings)
    off_by = "VODOU_EMBEDDER=none" if os.environ.get("VODOU_EMBEDDER", "").strip() else "in Settings"
    setup = Setup(model=None if choice == "none" else model_id_for(choice), backups=backup_folder(settings),
                  off_by=off_by)
    where = paths.vault_path(args.vault)
    if where.is_file():
        with Runtime.open(args.vault, embedder="none") as rt:
            checks = run_doctor(rt.vault, setup)
            memories = rt.vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS)))
            where = rt.vault.path
        held = plural(memories, "memory")
    else:  # the default vault, not made yet: doctor creates nothing
        checks, held = run_doctor_without_vault(where), "none yet"
    ok = all(c.passed for c in checks)
    if args.json:
        print_json({"ok": ok, "checks": [c.as_json() for c in checks]})
        return 0 if ok else 1
    print(f"Your vault: {where} ({held})")
    for check in checks:
        print(line(check))
        if args.verbose:
            _rows(check)
    failed = sum(not c.passed for c in checks)
    print("All is well." if ok else f"{plural(failed, 'problem')} (see above).")
    return 0 if ok else 1


def line(check: Check) -> str:
    """One line: ``ok`` or ``PROBLEM``, what was found, and for a problem what to do."""
    passed, failed = WORDS.get(check.name, (f"{check.title}: {{detail}}", f"{check.title}: {{detail}}"))
    text = (passed if check.passed else failed).format(detail=check.detail)
    if check.name == "encryption" and check.detail == "off":
        text += ENCRYPTION_OFF
    return f"ok    {text}" if check.passed else f"PROBLEM  {text}"


def _rows(check: Check) -> None:
    for row in check.rows[:20]:
        print(f"        {row}")
    if len(check.rows) > 20:
        print(f"        … and {len(check.rows) - 20} more")
