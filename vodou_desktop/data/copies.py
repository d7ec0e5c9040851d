"""The copies of the vault Vodou wrote outside its own backups folder (DATA-1, DATA-2, DATA-3, GOV-8).

``vodou backup PATH`` and ``vodou export PATH`` (and the app's Back up… and Export…) can write a
copy anywhere the person chooses. Vodou does not go looking through the person's folders, so it
cannot encrypt those copies or erase memories from them; it keeps a list of where it wrote them
(``copies.json`` in the data folder, paths only) so that ``encrypt`` and ``erase`` can say plainly
which copies they could not reach. A copy deleted or moved since is no longer mentioned.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from vodou_desktop import config, paths
from vodou_desktop.data.rolling import backup_folder
from vodou_desktop.vault.atomic import write_text
from vodou_desktop.vault.cipher import is_encrypted

log = logging.getLogger(__name__)
FILE = "copies.json"
KINDS = ("backup", "export")


@dataclass(frozen=True)
class OutsideCopy:
    path: Path
    kind: str  # "backup" or "export"

    @property
    def encrypted(self) -> bool:
        return self.kind == "backup" and is_encrypted(self.path)

    def words(self) -> str:
        what = {"backup": "a backup", "export": "an export (exports are never encrypted)"}[self.kind]
        lock = ", encrypted" if self.encrypted else (", not encrypted" if self.kind == "backup" else "")
        return f"{self.path} ({what}{lock})"


def _registry() -> Path:
    return paths.data_dir() / FILE


def _read() -> list[dict[str, str]]:
    try:
        data = json.loads(_registry().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        log.warning("the list of copies outside the backups folder cannot be read (%s); starting it again", exc)
        return []
    return [d for d in data if isinstance(d, dict) and d.get("kind") in KINDS] if isinstance(data, list) else []


def record(path: Path, kind: str) -> None:
    """Remember that a copy of kind ``kind`` was written at ``path`` (unless it is in the backups
    folder, which Vodou reaches by itself)."""
    path = path.resolve()
    if in_backups_folder(path):
        return
    entries = [d for d in _read() if d.get("path") != str(path)] + [{"path": str(path), "kind": kind}]
    folder = _registry().parent
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        write_text(_registry(), json.dumps(entries, indent=1) + "\n", replace=True)
    except OSError as exc:  # the copy itself was made; only this note of it is missing
        log.warning("could not note where the copy %s was written: %s", path, exc)


def outside(kinds: tuple[str, ...] = KINDS) -> list[OutsideCopy]:
    """The copies Vodou wrote outside its backups folder that are still there."""
    found = [OutsideCopy(Path(d["path"]), d["kind"]) for d in _read() if d["kind"] in kinds]
    return [c for c in found if c.path.is_file()]


def in_backups_folder(path: Path) -> bool:
    return path.resolve().parent == backup_folder(config.load()).resolve()
