"""``vodou doctor``: checks of the person's data, each a pass/fail with its offending rows.

The file (SQLite's integrity check), the keyword index (FTS5's own check), the vectors (missing, or
of another model than the one in use; with search by meaning off, that it is off: a state, never a
failure), encryption (on or off: said, never a failure), the newest backup's age (against how long
this vault has existed, not how old its memories are: an import brings years-old memories into a
new vault) and whether it verifies (one search for it), the installed resources, and the data
audits of seeds 000 and 004 (page sources keep their URL; a project tag comes from a batch whose
inputs agreed, and from its own message), and that every memory an import or a capture wrote names the
message it came from. The audits of Vodou's own source
code run in its test suite, not here: a person's vault can only fail on its own data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from vodou_desktop import resources
from vodou_desktop.data.rolling import newest_backup
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.vault import Vault, audits
from vodou_desktop.vault import query as q
from vodou_desktop.vault.cipher import is_encrypted
from vodou_desktop.vault.clock import parse_iso, to_iso
from vodou_desktop.vault.migrations import vault_made_at
from vodou_desktop.words import plural

BACKFILL_WINDOW = timedelta(hours=1)
BACKUP_STALE = timedelta(days=7)  # daily backups keep a week by default: older than that is a gap


@dataclass
class Check:
    name: str
    title: str
    passed: bool
    detail: str
    rows: list[Any] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Setup:
    """What the checks need beyond the vault: the model in use (``None``: search by meaning is off, and
    ``off_by`` says where: the environment or the settings), the backups folder, and now."""
    model: str | None
    backups: Path
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    off_by: str = "in Settings"


def check_integrity(vault: Vault) -> Check:
    try:
        rows = [str(r[0]) for r in vault.read(lambda c: list(c.execute("PRAGMA integrity_check")))]
    except VaultUnavailable as exc:  # too damaged to run the check through
        rows = [str(exc)]
    ok = rows == ["ok"]
    detail = "SQLite's integrity check passed" if ok else f"{plural(len(rows), 'problem')}: {rows[0]}"
    return Check("integrity", "the vault file is sound", ok, detail, [] if ok else rows[:50])


def check_fts(vault: Vault) -> Check:
    problem = vault.write(audits.fts_integrity)
    return Check("fts_integrity", "full-text index matches the chunks", problem is None,
                 problem or "FTS5 integrity-check passed", [problem] if problem else [])


def check_embeddings(vault: Vault, window: timedelta = BACKFILL_WINDOW) -> Check:
    cutoff = to_iso(datetime.now(UTC) - window)
    count, ids = vault.read(partial(q.unembedded_before, cutoff=cutoff))
    detail = (f"no chunk older than {window} is waiting for an embedding" if not count
              else f"{count} chunks older than {window} have no embedding")
    return Check("embeddings_missing", "embeddings backfilled", count == 0, detail, ids)


def check_meaning_off(setup: Setup) -> Check:
    """Search by meaning turned off: a choice, said as one line (memories are found by their words)."""
    return Check("meaning", "search by meaning", True, f"off ({setup.off_by})")


def check_embedding_model(vault: Vault, model: str | None) -> Check:
    count = 0 if model is None else vault.read(partial(q.count_stale_embedded, model=model))
    detail = (f"{count} chunks have vectors of another model than {model}" if count
              else "search by meaning is off" if model is None else f"every vector is of {model}")
    return Check("embeddings_other_model", "vectors are of the model in use", count == 0, detail)


def check_encryption(vault: Vault) -> Check:
    on = is_encrypted(vault.path)
    return Check("encryption", "encryption", True, "on" if on else "off")


Newest = tuple[Path, datetime] | None  # the newest backup and when it was taken, found once per run


def check_backup_age(vault: Vault, setup: Setup, newest: Newest, *, damaged: bool = False) -> Check:
    if newest is not None:
        age = setup.now - newest[1]
        detail = f"the newest backup, {newest[0]}, is {_days(age)} old"
        return Check("backup_age", "a recent backup exists", age <= BACKUP_STALE, detail, [str(newest[0])])
    if damaged:
        return Check("backup_age", "a recent backup exists", False, f"no backup in {setup.backups}")
    made = vault.read(vault_made_at)
    if vault.read(q.oldest_memory_at) is None or made is None or setup.now - parse_iso(made) <= BACKUP_STALE:
        return Check("backup_age", "a recent backup exists", True, f"no backup in {setup.backups} yet")
    return Check("backup_age", "a recent backup exists", False,
                 f"no backup in {setup.backups}; this vault was made {_days(setup.now - parse_iso(made))} ago")


def _days(age: timedelta) -> str:
    return plural(age.days, "day") if age.days else "less than a day"


def check_sources_without_url(vault: Vault) -> Check:
    rows = vault.read(audits.sources_without_url)
    detail = "every page kind has a URL" if not rows else ", ".join(
        f"{r['kind']}: {r['no_url']} of {r['rows']} without URL" for r in rows)
    return Check("sources_without_url", "page-kind sources carry their URL (seed 000)", not rows, detail, rows)


def check_mixed_batches(vault: Vault) -> Check:
    rows = [{"fact_id": i, "tagged_as": p, "distinct_input_projects": n} for i, p, n in vault.read(q.mixed_batch_tags)]
    detail = "no fact is tagged from a batch whose inputs disagree" if not rows else (
        f"{len(rows)} facts carry a project their batch inputs did not agree on")
    return Check("mixed_batch_tags", "project tags come from unanimous batches (seed 004)", not rows, detail, rows)


def check_messages(vault: Vault) -> Check:
    """Every memory an import or a capture wrote names the message of its batch it came from (ING-6)."""
    rows, older = vault.read(q.memories_without_message)
    found = [{"fact_id": i, "batch_id": b} for i, b in rows]
    detail = f"{plural(len(found), 'memory')} of an import or capture name no message of their batch" if found else ""
    if older:
        untraced = (f"{plural(older, 'older memory')} from before messages were named could not be traced: two "
                    "messages of their batch share a time")
        detail += f"; {untraced}" if found else f" ({untraced})"
    return Check("memories_without_message", "memories name the message they came from (VAULT-5)", not found,
                 detail, found)


def check_resources() -> Check:
    missing = resources.missing_resources()
    detail = (f"icons, sensitive-site lists and the browser extension are in {resources.resources_dir()}"
              if not missing else ", ".join(missing))
    return Check("resources", "bundled resources are installed", not missing, detail)


def check_latest_backup(newest: Newest) -> Check:
    """The newest backup (as ``check_backup_age`` found it) verifies: manifest, integrity, full-text index."""
    from vodou_desktop.data.backup import verify_backup
    from vodou_desktop.errors import KnownError

    if newest is None:
        return Check("latest_backup", "the latest backup verifies", True,
                     "no backup in the backups folder yet (the app makes one a day; `vodou backup` makes one now)")
    try:
        checked = verify_backup(newest[0])
    except KnownError as exc:
        return Check("latest_backup", "the latest backup verifies", False, str(exc), [str(newest[0])])
    return Check("latest_backup", "the latest backup verifies", True, checked.sentence())


def run_doctor_without_vault(path: Path) -> list[Check]:
    """The default vault not made yet: nothing to check in it (and nothing is created), unless copies
    of a vault lie beside where it should be (a vault that vanished: say how to put it back)."""
    from vodou_desktop.vault.atomic import copies_beside

    copies = copies_beside(path)
    if copies:
        newest = max(copies, key=lambda p: p.stat().st_mtime)
        found = Check("vault", "the vault is in place, or not made yet", False,
                      f"No vault at {path}, but {plural(len(copies), 'copy')} of one beside it (newest: "
                      f"{newest.name}). Put it back with `vodou restore {newest}`", [str(c) for c in copies])
    else:
        found = Check("vault", "the vault is in place, or not made yet", True,
                      f"No vault yet at {path}; the first memory you add makes it (`vodou mem add TEXT`)")
    return [found, check_resources()]


def run_doctor(vault: Vault, setup: Setup, *, window: timedelta = BACKFILL_WINDOW) -> list[Check]:
    """Every check; on a damaged file only those that do not read it (where the backups are)."""
    integrity = check_integrity(vault)
    newest = newest_backup(setup.backups, vault.path)
    if not integrity.passed:
        return [integrity, check_encryption(vault), check_backup_age(vault, setup, newest, damaged=True),
                check_resources()]
    meaning = ([check_meaning_off(setup)] if setup.model is None else
               [check_embeddings(vault, window), check_embedding_model(vault, setup.model)])
    return [integrity, check_fts(vault), *meaning, check_encryption(vault),
            check_backup_age(vault, setup, newest), check_latest_backup(newest),
            check_sources_without_url(vault), check_mixed_batches(vault), check_messages(vault), check_resources()]
