"""GOV-8 on disk, the copies included: erase rewrites every backup and ``before-`` copy Vodou keeps
that holds the erased memory (no canary byte anywhere under the backups folder or beside the
vault), updates their manifests, and names the copies it could not reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import run_cli
from tests.unit.data.conftest import no_real_keyring  # noqa: F401  (autouse: the key file, never a real keyring)
from vodou_desktop import config
from vodou_desktop.data import rolling
from vodou_desktop.data.backup import verify_backup
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.vault import Vault, cipher

from .conftest import add_fact

CANARY = "CANARY-4e1d77-erase-everywhere"
KEEPER = "CANARY-9a0c3b-keep-everywhere"


def _hits(*folders: Path) -> list[str]:
    return sorted(p.name for f in folders for p in f.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes())


def _scene(tmp_path: Path, *, encrypt: bool = False) -> tuple[Path, Path, Path, int]:
    vault_path, backups, own = tmp_path / "vault.sqlite", tmp_path / "backups", tmp_path / "mine"
    own.mkdir()
    config.save(config.Settings(backups_folder=str(backups), backups_keep=5))
    with Vault.open(vault_path) as vault:
        for i in range(20):
            add_fact(vault, f"filler fact number {i} about gardening", "https://filler.example.com/")
        doomed = add_fact(vault, f"my secret is {CANARY}", "https://secret.example.com/p")
        add_fact(vault, f"kept {KEEPER}", "https://other.example.org/p")
    if encrypt:
        assert run_cli("--vault", str(vault_path), "encrypt").code == 0
    assert rolling.run_if_due(vault_path) is not None
    assert run_cli("--vault", str(vault_path), "backup").code == 0
    assert run_cli("--vault", str(vault_path), "backup", str(own / "mine.sqlite")).code == 0
    assert run_cli("--vault", str(vault_path), "restore", str(own / "mine.sqlite")).code == 0  # a before-restore copy
    return vault_path, backups, own, doomed


def test_erase_leaves_no_canary_byte_in_the_backups_folder_nor_beside_the_vault(tmp_path: Path) -> None:
    vault_path, backups, own, doomed = _scene(tmp_path)
    assert len(_hits(backups)) >= 2 and _hits(tmp_path)  # the scan finds the canary where it is
    result = run_cli("--vault", str(vault_path), "mem", "erase", "--id", str(doomed), "--yes")
    assert result.code == 0, result.err
    copies_line = result.out.splitlines()[-1]
    assert copies_line.startswith("rewrote 3 backups and earlier copies"), result.out  # daily, backup, before-restore
    assert "1 copies were not reached" in copies_line and str(own / "mine.sqlite") in copies_line
    assert _hits(backups) == [] and [h for h in _hits(tmp_path) if not h.startswith("mine.sqlite")] == []
    for manifest in backups.glob("*.manifest"):  # the rewritten backups prove themselves again
        checked = verify_backup(manifest.with_name(manifest.name.removesuffix(".manifest")))
        assert checked.counts.memories == 21
    again = run_cli("--vault", str(vault_path), "mem", "list").out
    assert CANARY not in again and KEEPER in again


def test_erase_by_host_reaches_encrypted_backups_too(tmp_path: Path) -> None:
    vault_path, backups, _own, _doomed = _scene(tmp_path, encrypt=True)
    with Vault.open(vault_path) as vault:
        result = Forgetting(vault).erase_host("secret.example.com")
    assert result["facts_erased"] == 1 and result["copies_rewritten"] >= 3
    plain = [p for p in backups.iterdir() if not p.name.endswith(".manifest")]
    assert plain and all(cipher.is_encrypted(p) for p in plain)
    for path in plain:  # the canary is encrypted, so the bytes cannot tell: read each copy
        cipher.forget_keys()
        with Vault.open(path) as copy:
            texts = copy.read(lambda c: [r[0] for r in c.execute("SELECT text FROM chunks")])
        assert not any(CANARY in t for t in texts) and any(KEEPER in t for t in texts)


@pytest.mark.parametrize("several", [False, True])
def test_erase_reaches_copies_made_before_a_correction(tmp_path: Path, several: bool) -> None:
    """The memory keeps its id when corrected, so a copy made before holds its earlier text under the same
    id: erase finds it by global id. ``vodou mem erase 3 5 9`` too (one confirmation, one operation)."""
    vault_path, backups, own, doomed = _scene(tmp_path)
    with Vault.open(vault_path) as vault:
        other = add_fact(vault, f"a second {CANARY} to erase", "https://secret.example.com/q")
    assert run_cli("--vault", str(vault_path), "backup").code == 0
    assert run_cli("--vault", str(vault_path), "mem", "correct", str(doomed), "my secret was moved").code == 0
    ids = [str(doomed), str(other)] if several else [str(doomed)]
    if not several:
        assert run_cli("--vault", str(vault_path), "mem", "erase", str(other), "--yes").code == 0
    result = run_cli("--vault", str(vault_path), "mem", "erase", *ids, "--yes")
    assert result.code == 0, result.err
    said = "erased 2 memories and their 3 revisions for good" if several else f"erased 2 memories (#{doomed})"
    assert result.out.startswith(said), result.out
    assert _hits(backups) == [] and [h for h in _hits(tmp_path) if not h.startswith("mine.sqlite")] == []
