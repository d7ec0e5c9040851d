"""VAULT-6: a committed write survives kill -9 at any moment; the vault stays intact."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support import total_hits
from vodou_desktop.config import Settings
from vodou_desktop.data.encryption import encrypt_vault
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault, cipher
from vodou_desktop.vault import query as q

WRITER = textwrap.dedent("""
    import sys
    from vodou_desktop.ingest.remember import Origin, remember
    from vodou_desktop.vault import Vault
    vault = Vault.open(sys.argv[1])
    i = 0
    while True:
        remember(vault, f"durable fact {i} " + "x" * (i % 300), Origin(kind="cli"))
        print(i, flush=True)   # acknowledged only after the commit returned
        i += 1
""")


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
def test_acknowledged_writes_survive_kill_9(vault_path: Path, encrypted: bool, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    Vault.open(vault_path).close()
    if encrypted:  # DATA-3: the same guarantee under encryption at rest (key from the environment)
        monkeypatch.setenv(cipher.PASSPHRASE_ENV, "durable passphrase")
        encrypt_vault(vault_path, "durable passphrase", settings=Settings(backups_folder=str(tmp_path)))
        assert cipher.is_encrypted(vault_path)
    for round_ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(vault_path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        acked = int(proc.stdout.readline())  # the writer is up: now kill it at a varying moment
        deadline = time.monotonic() + 0.3 + round_ * 0.37
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line:
                acked = int(line)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        with Vault.open(vault_path) as vault:
            assert vault.reader().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            texts = {f.text.split(" x")[0].rstrip("x ") for f in
                     vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS), limit=100_000))}
            missing = [i for i in range(acked + 1) if not any(t.startswith(f"durable fact {i}") for t in texts)]
            assert acked >= 0 and missing == []
            fts = vault.reader().execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
            assert fts.fetchall() == []
    assert cipher.is_encrypted(vault_path) == encrypted
    if encrypted:
        assert total_hits(vault_path, "durable fact") == 0
