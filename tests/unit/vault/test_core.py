"""Opening a vault: a damaged file is refused before anything is written to it, migrations included."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from tests.support import break_not_null, sha256_of
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.vault import Vault
from vodou_desktop.vault.connection import open_connection
from vodou_desktop.vault.migrations import applied_migrations, migrate
from vodou_desktop.vault.schema import MIGRATIONS


def test_a_damaged_vault_at_an_older_schema_is_refused_and_left_alone(vault_path: Path) -> None:
    conn = open_connection(vault_path)
    migrate(conn, vault_path, MIGRATIONS[:-1])  # a vault an older Vodou wrote: one step still to run
    conn.close()
    break_not_null(vault_path)
    digest = sha256_of(vault_path)
    with pytest.raises(VaultUnavailable, match="is damaged"):
        Vault.open(vault_path)
    assert sha256_of(vault_path) == digest
    conn = apsw.Connection(str(vault_path), flags=apsw.SQLITE_OPEN_READONLY)  # the vault's connections refuse it
    assert applied_migrations(conn) == [name for name, _ in MIGRATIONS[:-1]]
    conn.close()
