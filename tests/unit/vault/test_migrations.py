from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from tests.support import file_hashes
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.vault import Vault
from vodou_desktop.vault.connection import open_connection
from vodou_desktop.vault.migrations import APPLICATION_ID, applied_migrations, migrate
from vodou_desktop.vault.schema import MIGRATIONS


def test_blank_vault_gets_every_migration_and_reopen_applies_none(vault_path: Path) -> None:
    Vault.open(vault_path).close()
    conn = open_connection(vault_path)
    assert applied_migrations(conn) == [name for name, _ in MIGRATIONS]
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert migrate(conn, vault_path) == []
    conn.close()


def test_pragmas_are_wal_full_sync_foreign_keys(vault: Vault) -> None:
    conn = vault.reader()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_newer_vault_is_refused_and_left_untouched(vault_path: Path) -> None:
    Vault.open(vault_path).close()
    conn = open_connection(vault_path)
    conn.execute("INSERT INTO schema_migrations(name, applied_at) VALUES ('9999_from_the_future', 'x')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = file_hashes(vault_path)
    with pytest.raises(VaultUnavailable, match="newer version"):
        Vault.open(vault_path)
    assert file_hashes(vault_path)["vault.sqlite"] == before["vault.sqlite"]


def test_a_failing_migration_leaves_neither_its_changes_nor_its_record(vault_path: Path) -> None:
    def good(conn: apsw.Connection) -> None:
        conn.execute("CREATE TABLE t_good(x)")

    def bad(conn: apsw.Connection) -> None:
        conn.execute("CREATE TABLE t_bad(x)")
        raise RuntimeError("boom")

    conn = open_connection(vault_path)
    with pytest.raises(RuntimeError):
        migrate(conn, vault_path, [("0001_good", good), ("0002_bad", bad)])
    assert applied_migrations(conn) == ["0001_good"]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type='table'")}
    assert "t_good" in tables and "t_bad" not in tables
    conn.close()


def test_foreign_sqlite_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE notes(x); INSERT INTO notes VALUES (1)")
    conn.close()
    before = file_hashes(path)
    with pytest.raises(VaultUnavailable, match="not a Vodou vault"):
        Vault.open(path)
    assert file_hashes(path)[path.name] == before[path.name]
