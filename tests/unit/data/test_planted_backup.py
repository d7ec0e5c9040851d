"""The issue's restored backup that kept what it carried: a backup handed over without its manifest,
with a table and an AFTER DELETE trigger that copies every erased memory into it, and a trigger that
sets chase.com back to ``collect`` on every new memory. Refused, naming them; the vault stays as it
was; an erase afterwards leaves no byte of the memory in any file of the vault's folder or of Vodou's
own; no rule for chase.com appears. A clean backup without its manifest restores, and says the
manifest is missing."""

from __future__ import annotations

import json
from pathlib import Path

import apsw

from tests.support import file_hashes, run_cli
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault

CANARY = "ocelotcanary the safe code is 4711"


def _every_file(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.rglob("*") if p.is_file()]


def test_a_planted_backup_is_refused_and_an_erase_afterwards_leaves_no_byte(tmp_path: Path, vodou_home: Path) -> None:
    folder = tmp_path / "vault"
    folder.mkdir()
    vault = folder / "vault.sqlite"
    with Vault.open(vault) as v:
        canary = remember(v, CANARY, Origin(kind="cli"))
    planted = tmp_path / "handed-over.sqlite"
    assert run_cli("--vault", str(vault), "backup", str(planted)).code == 0
    Path(str(planted) + ".manifest").unlink()
    conn = apsw.Connection(str(planted))
    conn.execute("CREATE TABLE loot(t TEXT);"
                 " CREATE TRIGGER keep_erased AFTER DELETE ON chunks BEGIN INSERT INTO loot VALUES (old.text); END;"
                 " CREATE TRIGGER bank_on AFTER INSERT ON chunks BEGIN INSERT OR REPLACE INTO site_rules(host, mode,"
                 " created_at, updated_at) VALUES ('chase.com', 'collect', 'x', 'x'); END;")
    conn.close()
    before = file_hashes(vault)
    refused = run_cli("--vault", str(vault), "restore", str(planted))
    assert refused.code == 2 and refused.err.count("\n") == 1 and "Traceback" not in refused.err
    assert 'a table "loot", a trigger "bank_on" on chunks and a trigger "keep_erased" on chunks' in refused.err
    assert file_hashes(vault) == before and sorted(p.name for p in folder.iterdir()) == sorted(before)

    erased = run_cli("--vault", str(vault), "mem", "erase", str(canary), "--yes")
    assert erased.code == 0, erased.err
    assert str(planted) in erased.out  # the handed-over copy is not Vodou's to rewrite: named as not reached
    assert run_cli("--vault", str(vault), "mem", "add", "a new memory after the erase").code == 0
    for path in _every_file(folder, vodou_home):
        assert CANARY.encode() not in path.read_bytes(), path
    rules = json.loads(run_cli("--vault", str(vault), "sites", "list", "--json").out)["rules"]
    assert "chase.com" not in {r["host"] for r in rules}
    with Vault.open(vault) as v:
        names = {r[0] for r in v.read(lambda c: c.execute("SELECT name FROM sqlite_schema").fetchall())}
    assert not {"loot", "keep_erased", "bank_on"} & names


def test_a_backup_without_its_manifest_is_named_not_passed_over(tmp_path: Path) -> None:
    vault, backup = tmp_path / "vault.sqlite", tmp_path / "b.sqlite"
    with Vault.open(vault) as v:
        remember(v, "the heron nests by the mill", Origin(kind="cli"))
    assert run_cli("--vault", str(vault), "backup", str(backup)).code == 0
    Path(str(backup) + ".manifest").unlink()
    verified = run_cli("--vault", str(vault), "backup", "--verify", str(backup))
    assert verified.code == 0 and "has no manifest (b.sqlite.manifest is missing" in verified.out
    restored = run_cli("--vault", str(vault), "restore", str(backup))
    assert restored.code == 0, restored.err
    assert "note: b.sqlite has no manifest (b.sqlite.manifest is missing" in restored.out
    said = json.loads(run_cli("--vault", str(vault), "restore", str(backup), "--json").out)
    assert said["manifest"] is False
