"""Rolling daily backups, kept by the app in the profile's backups folder (DATA-1).

At most one a day: ``run_if_due`` makes a backup when the newest one is a day old or more, then
keeps the ``backups_keep`` newest and deletes older ones. Only files named by this module are
ever deleted. A backup of an encrypted vault is encrypted with the same key.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vodou_desktop import config, paths
from vodou_desktop.data.backup import BackupReport, backup_vault

log = logging.getLogger(__name__)

ROLLING = re.compile(r"^(?P<vault>.+)\.daily-(?P<stamp>\d{8}-\d{6})(?P<micro>-\d{6})?$")
INTERVAL = timedelta(days=1)


def backup_folder(settings: config.Settings, *, create: bool = False) -> Path:
    folder = Path(settings.backups_folder).expanduser() if settings.backups_folder else paths.data_dir() / "backups"
    if create:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def rolling_backups(folder: Path, vault: Path) -> list[Path]:
    """This vault's rolling backups in ``folder``, oldest first."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if (m := ROLLING.match(p.name)) and m["vault"] == vault.name]
    return sorted(found, key=lambda p: p.name)


# Both kinds of backup ``vodou`` names in the backups folder: daily ones and ``vodou backup``'s own.
ANY_BACKUP = re.compile(r"^(?P<vault>.+)\.(?:daily|backup)-(?P<stamp>\d{8}-\d{6})(?:-\d{6})?$")


def newest_backup(folder: Path, vault: Path) -> tuple[Path, datetime] | None:
    """The newest backup of ``vault`` in ``folder`` (daily or made by ``vodou backup``) and when it was
    taken (from its name); ``None`` when there is none."""
    found = all_backups(folder, vault)
    return found[0] if found else None


def all_backups(folder: Path, vault: Path) -> list[tuple[Path, datetime]]:
    """Every backup of ``vault`` in ``folder`` (daily ones and ``vodou backup``'s own), newest first,
    with when each was taken (from its name)."""
    if not folder.is_dir():
        return []
    taken = [(p, datetime.strptime(m["stamp"], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)) for p in folder.iterdir()
             if (m := ANY_BACKUP.match(p.name)) and m["vault"] == vault.name and p.is_file()]
    return sorted(taken, key=lambda t: (t[1], t[0].name), reverse=True)


def _taken_at(path: Path) -> datetime:
    match = ROLLING.match(path.name)
    assert match is not None
    return datetime.strptime(match["stamp"], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)


def is_due(folder: Path, vault: Path, now: datetime | None = None) -> bool:
    existing = rolling_backups(folder, vault)
    if not existing:
        return True
    return (now or datetime.now(UTC)) - _taken_at(existing[-1]) >= INTERVAL


def run_if_due(vault: Path, settings: config.Settings | None = None, *, force: bool = False) -> BackupReport | None:
    """Make today's backup when it is due and backups are on; prune to the configured count."""
    settings = settings or config.load()
    if not settings.backups_enabled or not vault.exists():
        return None
    folder = backup_folder(settings, create=True)
    if not force and not is_due(folder, vault):
        return None
    report = backup_vault(vault, folder / f"{vault.name}.daily-{datetime.now(UTC):%Y%m%d-%H%M%S-%f}")
    prune(folder, vault, settings.backups_keep)
    log.info("rolling backup %s: %s", report.path.name, report.counts.sentence())
    return report


def prune(folder: Path, vault: Path, keep: int) -> list[Path]:
    existing = rolling_backups(folder, vault)
    gone = existing[: max(0, len(existing) - keep)]
    for path in gone:
        path.unlink()
        path.with_name(path.name + ".manifest").unlink(missing_ok=True)
    return gone
