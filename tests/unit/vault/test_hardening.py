"""A damaged vault is never written to; vault files are private; an erase keeps no host name."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import apsw
import pytest

from tests.support import file_hashes, run_cli, total_hits, vault_files
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import Vault


def corrupt_an_index_page(path: Path) -> None:
    """Overwrite the b-tree page of one index with garbage (the table pages stay readable)."""
    conn = apsw.Connection(str(path))
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [r[0] for r in conn.execute("SELECT rootpage FROM sqlite_schema WHERE type = 'index' AND rootpage > 1"
                                         " AND sql IS NOT NULL ORDER BY rootpage")]
    conn.close()
    with path.open("r+b") as fh:
        fh.seek((roots[0] - 1) * page_size)
        fh.write(b"\xff" * 64)


def test_a_damaged_vault_is_refused_before_the_first_write(tmp_path: Path) -> None:
    path = tmp_path / "vault.db"
    assert run_cli("--vault", str(path), "mem", "add", "Ferns like shade").code == 0
    assert run_cli("--vault", str(path), "mem", "add", "Roses like sun").code == 0
    corrupt_an_index_page(path)
    assert [p.name for p in vault_files(path)] == ["vault.db"]
    before = file_hashes(path)
    result = run_cli("--vault", str(path), "mem", "add", "Tulips like spring")
    assert result.code == 2 and "remembered" not in result.out
    assert "damaged" in result.err and "nothing was written" in result.err and "backup" in result.err
    assert len(result.err.strip().splitlines()) == 1  # one line, no traceback
    assert file_hashes(path)["vault.db"] == before["vault.db"]  # byte-identical
    vault = Vault.open(path)  # reading needs no check; the first write does
    try:
        for attempt in (lambda: remember(vault, "Lilies like water", Origin(kind="cli")),
                        vault.check_integrity, vault.checkpoint):
            with pytest.raises(VaultUnavailable, match="Move the file aside"):
                attempt()
    finally:
        vault.close()
    with pytest.raises(VaultUnavailable, match="damaged"):  # the app checks at start
        Runtime.open(path, embedder="none", background_backfill=True)
    assert file_hashes(path)["vault.db"] == before["vault.db"]


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_vault_wal_and_shm_are_created_private(tmp_path: Path, umask: int) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    old = os.umask(umask)
    try:
        result = run_cli("--vault", str(elsewhere / "mine.db"), "mem", "add", "A private fact")
        assert result.code == 0, result.err
        vault = Vault.open(elsewhere / "mine.db")
        remember(vault, "another fact", Origin(kind="cli"))
        files = vault_files(elsewhere / "mine.db")
        assert {p.name for p in files} >= {"mine.db", "mine.db-wal", "mine.db-shm"}
        assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}
        vault.close()
    finally:
        os.umask(old)


def test_an_erase_keeps_no_name_of_the_site(vault: Vault) -> None:
    host = "erased-site-4c2a.example"
    remember(vault, "a fact from the site", Origin(kind="note", url=f"https://{host}/a"))
    remember(vault, "a fact from a sub-site", Origin(kind="note", url=f"https://www.{host}/b"))
    forgetting = Forgetting(vault)
    forgotten = forgetting.confirm(forgetting.plan(f"www.{host}")["token"])
    erased = forgetting.erase_host(host)
    assert erased["facts_erased"] == 2
    targets = vault.read(lambda c: {r[0]: r[1] for r in c.execute("SELECT id, target FROM operations")})
    assert targets[erased["op"]].startswith("host-hmac:") and targets[forgotten["op"]] == targets[erased["op"]]
    vault.checkpoint()
    assert total_hits(vault.path, host) == 0
    # The keyed hash is stable within the vault (audit can match a later erase of the same host).
    again = forgetting.erase_host(host)
    assert vault.read(lambda c: c.execute("SELECT target FROM operations WHERE id = ?", (again["op"],)).fetchone()[0]
                      ) == targets[erased["op"]]


def test_migrations_run_the_check_before_their_first_step(tmp_path: Path) -> None:
    from vodou_desktop.vault.connection import open_connection
    from vodou_desktop.vault.migrations import applied_migrations, migrate

    conn = open_connection(tmp_path / "new.db")
    calls: list[str] = []

    def refuse() -> None:
        calls.append("check")
        raise VaultUnavailable("damaged")

    with pytest.raises(VaultUnavailable):
        migrate(conn, "new.db", before_write=refuse)
    assert calls == ["check"] and applied_migrations(conn) == []
    assert migrate(conn, "new.db", before_write=lambda: calls.append("ok")) and calls == ["check", "ok"]
    assert migrate(conn, "new.db", before_write=lambda: calls.append("again")) == [] and calls[-1] == "ok"
    conn.close()
