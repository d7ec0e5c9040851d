"""DATA-3: the composed app (offscreen) opens an encrypted vault with no typing and serves it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import total_hits
from tests.unit.ui.test_desktop import desktop, get_json  # noqa: F401  (the composed-app fixture)
from vodou_desktop import config
from vodou_desktop.data.encryption import encrypt_vault
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault, cipher

PASSPHRASE = "desktop test passphrase"
EXT = "abcdefghijklmnopabcdefghijklmnop"


@pytest.fixture
def vault(vault_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Vault]:
    """The usual vault fixture, encrypted before the app opens it."""
    Vault.open(vault_path).close()
    monkeypatch.setenv(cipher.PASSPHRASE_ENV, PASSPHRASE)
    encrypt_vault(vault_path, PASSPHRASE, settings=config.Settings(backups_folder=str(tmp_path)))
    cipher.forget_keys()
    v = Vault.open(vault_path)
    yield v
    v.close()
    cipher.forget_keys()


def test_the_app_serves_an_encrypted_vault(qtbot, desktop, vault_path: Path) -> None:  # noqa: F811
    remember(desktop.runtime.vault, "the flamingocanary sleeps on one leg", Origin("cli"))
    token = desktop.bridge.tokens.pair(EXT)
    answer = get_json(f"http://127.0.0.1:{desktop.bridge.port}/api/ping", token)
    assert answer["paired"] is True
    results = desktop.runtime.search.search("flamingocanary")
    assert [r.fact.text for r in results] == ["the flamingocanary sleeps on one leg"]
    assert cipher.is_encrypted(vault_path) and total_hits(vault_path, "flamingocanary") == 0
