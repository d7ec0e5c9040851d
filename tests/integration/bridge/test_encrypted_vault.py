"""DATA-3: the bridge serves an encrypted vault, its key taken without typing (here VODOU_PASSPHRASE)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.bridge.helpers import Bridge, LoopThread, start_bridge, stop_bridge
from tests.support import total_hits
from vodou_desktop import config
from vodou_desktop.data.encryption import encrypt_vault
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Vault, cipher

URL = "https://news.example.com/story?id=9"
PASSPHRASE = "bridge test passphrase"


@pytest.fixture
def encrypted_bridge(vault_path: Path, tmp_path: Path, loop_thread: LoopThread,
                     monkeypatch: pytest.MonkeyPatch) -> Iterator[Bridge]:
    Vault.open(vault_path).close()
    monkeypatch.setenv(cipher.PASSPHRASE_ENV, PASSPHRASE)
    encrypt_vault(vault_path, PASSPHRASE, settings=config.Settings(backups_folder=str(tmp_path)))
    cipher.forget_keys()
    vault = Vault.open(vault_path)
    index = VectorIndex(vault)
    bridge = start_bridge(vault, SearchService(vault, Embedder("none"), index), loop_thread)
    yield bridge
    stop_bridge(bridge)
    index.close()
    vault.close()
    cipher.forget_keys()


def test_bridge_writes_and_matches_on_an_encrypted_vault(encrypted_bridge: Bridge, vault_path: Path) -> None:
    note = encrypted_bridge.post("/api/notes", {"url": URL, "title": "Story", "text": "the pelicancanary is back"})
    assert note.status in (200, 201), note.raw
    match = encrypted_bridge.post("/api/page-match/match", {"url": URL}).json
    assert [f["text"] for f in match["facts"]] == ["the pelicancanary is back"]
    assert cipher.is_encrypted(vault_path) and total_hits(vault_path, "pelicancanary") == 0
