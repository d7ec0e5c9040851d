"""DATA-3: `vodou mcp` serves an encrypted vault; its key comes from the stored key file (no typing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.mcp_stdio.harness import McpClient
from tests.support import total_hits
from vodou_desktop import config
from vodou_desktop.data.encryption import encrypt_vault
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault, cipher
from vodou_desktop.vault.keystore import VaultKeyStore


def test_mcp_server_reads_and_writes_an_encrypted_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")  # key in the 0600 file
    monkeypatch.delenv(cipher.PASSPHRASE_ENV, raising=False)
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    monkeypatch.setenv("VODOU_HOME", str(home))
    vault_path = tmp_path / "vault.sqlite"
    with Vault.open(vault_path) as vault:
        remember(vault, "the otterkanary lives by the river", Origin(kind="cli"))
    store = VaultKeyStore(home / "config" / "keys")
    assert store.uses_file
    encrypt_vault(vault_path, store.get_or_create(), settings=config.Settings(backups_folder=str(tmp_path)))
    cipher.forget_keys()
    with McpClient(vault_path, home) as client:
        found = client.call("search_memory", {"query": "otterkanary"})
        assert [r["text"] for r in found["results"]] == ["the otterkanary lives by the river"]
        saved = client.call("remember", {"text": "the otterkanary also swims at night"})["memory"]
        assert saved["id"] > 0
    assert cipher.is_encrypted(vault_path) and total_hits(vault_path, "otterkanary") == 0
