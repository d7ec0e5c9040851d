"""``vodou doctor``: the audits of seeds 000 and 004, each a pass/fail with its offending rows.

Vault checks read the vault; code checks read this package's own source (they pass vacuously,
and say so, in a frozen bundle without ``.py`` files).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from vodou_desktop import resources
from vodou_desktop.ingest import code_audit
from vodou_desktop.vault import Vault, audits
from vodou_desktop.vault import query as q
from vodou_desktop.vault.clock import to_iso

BACKFILL_WINDOW = timedelta(hours=1)


@dataclass
class Check:
    name: str
    title: str
    passed: bool
    detail: str
    rows: list[Any] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


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


def check_fts(vault: Vault) -> Check:
    problem = vault.write(audits.fts_integrity)
    return Check("fts_integrity", "full-text index matches the chunks", problem is None,
                 problem or "FTS5 integrity-check passed", [problem] if problem else [])


def check_embeddings(vault: Vault, window: timedelta = BACKFILL_WINDOW) -> Check:
    cutoff = to_iso(datetime.now(UTC) - window)
    count, ids = vault.read(partial(q.unembedded_before, cutoff=cutoff))
    detail = (f"no chunk older than {window} is waiting for an embedding" if not count
              else f"{count} chunks older than {window} have no embedding (is the model off?)")
    return Check("embeddings_missing", "embeddings backfilled", count == 0, detail, ids)


def check_carve_out(root: Path | None = None) -> Check:
    hits = code_audit.missing_carve_out(root)
    rows = [f"{h.file}:{h.line}: {h.text}" for h in hits]
    detail = "every project predicate lets global (NULL) memories through" if not rows else (
        f"{len(rows)} project predicates without 'OR project_id IS NULL'")
    return Check("project_carve_out", "project predicates keep the global carve-out (seed 004)", not rows, detail, rows)


def check_policy_readers(root: Path | None = None) -> Check:
    count = code_audit.governed_readers(root)
    detail = (f"{len(count.readers)} functions read governed columns, {len(count.consulting)} go through the "
              f"policy (query builder, policy module or reviewed helper); {len(count.unchecked)} do not")
    return Check("policy_readers", "readers of governed columns consult their policy (seed 000)",
                 not count.unchecked, detail, count.unchecked)


def check_resources() -> Check:
    missing = resources.missing_resources()
    detail = (f"icons, sensitive-site lists and the browser extension are in {resources.resources_dir()}"
              if not missing else ", ".join(missing))
    return Check("resources", "bundled resources are installed", not missing, detail)


def check_latest_backup(vault: Vault) -> Check:
    """The newest backup in the backups folder verifies (manifest, integrity, full-text index)."""
    from vodou_desktop import config
    from vodou_desktop.data.backup import verify_backup
    from vodou_desktop.data.encryption import backups_in_folder
    from vodou_desktop.data.rolling import backup_folder
    from vodou_desktop.errors import KnownError

    made = backups_in_folder(backup_folder(config.load()), vault.path)
    if not made:
        return Check("latest_backup", "the latest backup verifies", True,
                     "no backup in the backups folder yet (the app makes one a day; `vodou backup` makes one now)")
    latest = max(made, key=lambda p: p.stat().st_mtime)
    try:
        checked = verify_backup(latest)
    except KnownError as exc:
        return Check("latest_backup", "the latest backup verifies", False, str(exc), [str(latest)])
    return Check("latest_backup", "the latest backup verifies", True, checked.sentence())


def run_doctor(vault: Vault, *, code_root: Path | None = None, window: timedelta = BACKFILL_WINDOW) -> list[Check]:
    return [check_sources_without_url(vault), check_mixed_batches(vault), check_carve_out(code_root),
            check_policy_readers(code_root), check_fts(vault), check_embeddings(vault, window),
            check_resources(), check_latest_backup(vault)]
